"""Trip counts of loops that are counted loops in another spelling (docs/counting.md C7-C8)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_counting_rules import at, line_of, one


def _kernel(loop: str, before: str = "") -> str:
    """A kernel that adds 1.0f per trip of `loop` (whose body is `BODY`)."""
    body = "s += 1.0f;"
    return f"""\
        __global__ void k(float* y, const int* d, int n) {{
          float s = 0.0f;
          {before}
          {loop.replace("BODY", body)}
          y[threadIdx.x] = s;
        }}
        """


@pytest.mark.parametrize(
    ("before", "loop", "trips"),
    [
        # a `for` loop spelled as a `while`: the counter's start is a local's value
        ("int i = 3;", "while (i < n) { BODY i += 4; }", {"n": 103, "expect": 25}),
        ("int i = 0;", "while (i <= n) { BODY i++; }", {"n": 9, "expect": 10}),
        ("int i = n;", "while (i > 0) { BODY i -= 2; }", {"n": 9, "expect": 5}),
        # the update inside the test: `k--` runs k times, `--k` k - 1, `++i < n` from i + 1
        ("int k = n;", "while (k--) { BODY }", {"n": 7, "expect": 7}),
        ("int k = n;", "while (--k) { BODY }", {"n": 7, "expect": 6}),
        ("int i = 0;", "while (++i < n) { BODY }", {"n": 7, "expect": 6}),
        ("int i = 0;", "while (i++ < n) { BODY }", {"n": 7, "expect": 7}),
        # a `do` loop runs its body once before the first test
        ("int k = 8;", "do { BODY } while (--k);", {"expect": 8}),
        ("int k = 8;", "do { BODY } while (k--);", {"expect": 9}),
        ("int i = 0;", "do { BODY i++; } while (i < 10);", {"expect": 10}),
        ("int i = 50;", "do { BODY i++; } while (i < 10);", {"expect": 1}),
        # halving and doubling: logarithms, as C2's `for` loops
        ("int k = 256;", "while (k > 0) { BODY k >>= 1; }", {"expect": 9}),
        ("int k = 1024;", "while (k) { BODY k /= 2; }", {"expect": 11}),
        ("int k = 1024;", "while (k >>= 1) { BODY }", {"expect": 10}),
        ("int w = 1;", "while (w < 64) { BODY w *= 2; }", {"expect": 6}),
    ],
)
def test_counted_while_and_do_loops_have_their_for_loops_trip_count(
    tmp_path: Path, before: str, loop: str, trips: dict[str, int]
) -> None:
    k = one(tmp_path, _kernel(loop, before))
    assert k.features.unknown_trip_loops == 0
    assert not any(name.startswith("trip_L") for name in k.resolved.defaults)
    values = {name: v for name, v in trips.items() if name != "expect"}
    assert at(k.features.flops_sp, **values) == trips["expect"]


def test_grid_stride_while_loop_averages_over_the_threads(tmp_path: Path) -> None:
    source = """\
        __global__ void scale(float* y, const float* x, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          while (i < n) {
            y[i] = 2.0f * x[i];
            i += blockDim.x * gridDim.x;
          }
        }
        """
    k = one(tmp_path, source)
    fv = k.features
    for n, bx, gx in ((4096, 128, 8), (1000, 256, 2)):
        trips = -(-n // (bx * gx))  # C3: the thread's position counts 0
        assert at(fv.flops_sp, n=n, blockDim_x=bx, gridDim_x=gx) == trips
        assert at(fv.load_bytes, n=n, blockDim_x=bx, gridDim_x=gx) == 4 * trips


@pytest.mark.parametrize(
    ("before", "loop"),
    [
        # the counter moves only on some trips, or twice on a path, or not at all
        ("int i = 0;", "while (i < n) { BODY if (d[i]) i++; }"),
        ("int i = 0;", "while (i < n) { BODY i++; if (d[i]) i++; }"),
        ("int i = 0;", "while (i < n) { BODY }"),
        # a `continue` may skip the update; the bound moves in the body
        ("int i = 0;", "while (i < n) { if (d[i]) continue; BODY i++; }"),
        ("int i = 0;", "while (i < n) { BODY i++; n--; }"),
        # a start read from memory, or carried over from an enclosing loop's earlier trip
        ("int i = d[0];", "while (i < n) { BODY i++; }"),
        ("int i = 0;", "for (int j = 0; j < 3; j++) { while (i < n) { BODY i++; } }"),
        # a data-dependent test: no counter
        ("float v = 8.0f;", "while (v > 1.0f) { BODY v = v * 0.5f; }"),
    ],
)
def test_other_while_loops_keep_an_unknown_trip_count(
    tmp_path: Path, before: str, loop: str
) -> None:
    source = _kernel(loop, before)
    k = one(tmp_path, source)
    keyword = "while (" if loop.startswith("while") else "for ("
    assert k.features.unknown_trip_loops >= 1
    assert f"trip_L{line_of(source, keyword)}" in k.resolved.defaults


@pytest.mark.parametrize(
    ("bound", "expect"),
    [
        ("int end = start + chunk < n ? start + chunk : n;", "min"),
        ("int end = (n > start + chunk) ? start + chunk : n;", "min"),
        ("int end = (n >= start + chunk) ? n : start + chunk;", "max"),
        ("int end = start + chunk <= n ? n : start + chunk;", "max"),
    ],
)
def test_a_bound_clamped_with_a_conditional_is_a_min_or_max(
    tmp_path: Path, bound: str, expect: str
) -> None:
    source = f"""\
        __global__ void rows(float* y, int n, int chunk) {{
          int start = (blockIdx.x * blockDim.x + threadIdx.x) * chunk;
          {bound}
          float s = 0.0f;
          for (int i = start; i < end; i++) s += 1.0f;
          y[0] = s;
        }}
        """
    k = one(tmp_path, source)
    assert k.features.unknown_trip_loops == 0
    pick = min if expect == "min" else max
    for n, chunk in ((100, 8), (5, 8), (64, 64)):
        # C3: the thread's start counts 0, so the loop runs min/max(chunk, n) - 0 times
        assert at(k.features.flops_sp, n=n, chunk=chunk) == pick(chunk, n)


def test_other_conditionals_keep_the_bound_unknown(tmp_path: Path) -> None:
    source = """\
        __global__ void rows(float* y, int n, int m) {
          int end = n > 3 ? n : m;
          float s = 0.0f;
          for (int i = 0; i < end; i++) s += 1.0f;
          y[0] = s;
        }
        """
    k = one(tmp_path, source)
    assert f"trip_L{line_of(source, 'for (')}" in k.resolved.defaults


def test_a_counter_capping_a_convergence_test_leaves_the_trips_unknown(tmp_path: Path) -> None:
    """`it < 20 && err > tol` runs until converged: 20 is a cap, not the trip count."""
    source = _kernel("do { BODY ++it; } while (it < 20 && s * s > 1e-6f);", "int it = 0;")
    k = one(tmp_path, source)
    assert f"trip_L{line_of(source, 'do {')}" in k.resolved.defaults


def test_a_huge_step_is_a_step_and_a_huge_shift_no_power(tmp_path: Path) -> None:
    """`n -= 1317624576693539401L` is a step like any other (building 2**step for it, as the
    shift steps do, never finished); a shift by 64 or more is undefined: unknown trips."""
    source = _kernel(
        "while (m > 1317624576693539401L) { BODY m -= 1317624576693539401L; }"
        " while (w > 1) { BODY w >>= 1317624576693539401L; }",
        "long m = 3000000000000000000L; long w = 8;",
    )
    k = one(tmp_path, source)
    assert k.features.unknown_trip_loops == 1  # the shifting loop
    assert at(k.features.flops_sp, **{f"trip_L{line_of(source, 'while (')}": 0}) == 2


@pytest.mark.parametrize(
    ("before", "loop", "unknown"),
    [
        ("int k = 0;", "while (k > 0) { BODY k >>= 1; }", 0),  # the first test fails: 0
        ("int k = -8;", "while (k != 0) { BODY k /= 2; }", 1),  # no logarithm of -8
    ],
)
def test_a_halving_loop_from_zero_or_below_is_counted_or_unknown_never_an_error(
    tmp_path: Path, before: str, loop: str, unknown: int
) -> None:
    k = one(tmp_path, _kernel(loop, before))
    assert k.features.unknown_trip_loops == unknown
    if not unknown:
        assert k.features.flops_sp == 0
