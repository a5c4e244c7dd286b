"""Trip counts of loops that are counted loops in another spelling (docs/counting.md C7-C10)."""

from __future__ import annotations

import textwrap
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


@pytest.mark.rule("S27")
def test_a_bound_growing_with_the_thread_averages_over_the_threads(tmp_path: Path) -> None:
    source = """\
        __global__ void tri(float* y, const float* x) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          float s = 0.0f;
          for (int j = 0; j < i; j++) s += x[j];
          for (int j = threadIdx.x; j < 64; j++) s += 2.0f;
          y[i] = s;
        }
        """
    fv = one(tmp_path, source).features
    for bx, gx in ((128, 8), (256, 3)):
        # the first loop runs i times: (bx * gx - 1) / 2 on average (C2's ceiling of it),
        # not thread 0's 0; the second's start moves with the thread, as a grid-stride
        # loop's (C3: 64 trips)
        mean = -(-(bx * gx - 1) // 2)
        assert at(fv.flops_sp, blockDim_x=bx, gridDim_x=gx) == mean + 64


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


@pytest.mark.parametrize(
    ("before", "loop", "trips"),
    [
        # C9: the counter inside a linear test, solved for (a positive slope)
        ("", "for (int m = 0; 2 * m < n; m++) { BODY }", {"n": 9, "expect": 5}),
        ("", "for (int i = 0; i + 3 < n; i++) { BODY }", {"n": 10, "expect": 7}),
        ("", "for (int i = 1; n > (i + i); i++) { BODY }", {"n": 20, "expect": 9}),
        (
            "int t = threadIdx.x;",  # C3: the thread's offset counts 0
            "for (int i = 0; i * blockDim.x + t < n; i++) { BODY }",
            {"n": 1000, "blockDim_x": 256, "expect": 4},
        ),
        # C10: the counter the test and the update name, not the initialiser's first name
        ("", "for (int i = 64, c = 0; c < n; i++, c++) { BODY }", {"n": 10, "expect": 10}),
        ("int e;", "for (e = 0, c2 = 3; c2 < n; c2++) { BODY }", {"n": 10, "expect": 7}),
        # C10: a step inside an assignment (`k = j++`) steps the counter
        ("int k = n - 1;", "for (int j = 0; j < n; k = j++) { BODY }", {"n": 12, "expect": 12}),
        # C10: no initialiser: the counter's value on entering the loop, known as C7's
        ("int i = 2;", "for (; i < n; i++) { BODY }", {"n": 12, "expect": 10}),
        ("int a = 0; int b = 5;", "for (; a < 8 && b < n; a += 2, b += 2) { BODY }", {"expect": 4}),
    ],
)
def test_for_loops_with_a_linear_test_or_several_counters_are_counted(
    tmp_path: Path, before: str, loop: str, trips: dict[str, int]
) -> None:
    source = _kernel(loop, before.replace("int e;", "int e; int c2;"))
    k = one(tmp_path, source)
    assert k.features.unknown_trip_loops == 0
    values = {name: v for name, v in trips.items() if name != "expect"}
    assert at(k.features.flops_sp, **values) == trips["expect"]


@pytest.mark.parametrize(
    ("before", "loop"),
    [
        ("", "for (int i = 0; i * i < n; i++) { BODY }"),  # not linear in the counter
        ("", "for (int i = 0; n - 2 * i > 0; i++) { BODY }"),  # a negative slope
        ("", "for (int i = 0; i * d[0] < n; i++) { BODY }"),  # a slope read from memory
        ("int i = d[0];", "for (; i < n; i++) { BODY }"),  # a start read from memory
        # a start carried over from an enclosing loop's earlier trip
        ("int i = 0;", "for (int r = 0; r < 3; r++) { for (; i < n; i++) { BODY } }"),
    ],
)
def test_for_loops_without_a_solvable_counter_keep_an_unknown_trip_count(
    tmp_path: Path, before: str, loop: str
) -> None:
    source = _kernel(loop, before)
    k = one(tmp_path, source)
    assert k.features.unknown_trip_loops >= 1
    lines = textwrap.dedent(source).split("\n")
    line = next(i + 1 for i, text in enumerate(lines) if "BODY" in loop and "s += 1.0f" in text)
    assert any(name.startswith(f"trip_L{line}") for name in k.resolved.defaults)


def test_a_name_trailing_the_counter_reads_the_counters_elements(tmp_path: Path) -> None:
    """C10: `k = j++` makes k the counter's previous value: `v[k]` reads the same n
    elements as `v[j]` (one more: the first trip's k), not n per thread."""
    source = """\
        #define NV 600
        __global__ void edges(float* y, const float* v) {
          float s = 0.0f;
          int k = NV - 1;
          for (int j = 0; j < NV; k = j++) s += v[j] - v[k];
          y[blockIdx.x * blockDim.x + threadIdx.x] = s;
        }
        """
    k = one(tmp_path, source, block=(256, 1, 1), grid=(64, 1, 1))
    assert k.features.unknown_trip_loops == 0
    arrays = {a["array"]: a for a in k.to_json()["dram_bytes"]["arrays"]}
    # 601 floats, once for the launch; the flaw this guards against: 600 per thread
    assert arrays["v"]["footprint_bytes"]["load"] <= 4 * (600 + 1)


_SEARCH = """\
    __global__ void pick(const float* cdf, const float* u, float* w, int n) {{
      int i = threadIdx.x;
      int found = n - 1;
      for (int k = 0; k < n; k++) {{
        w[i] += 1.0f;
        {test}
      }}
      w[i] = found;
    }}
    """


@pytest.mark.rule("C15")
@pytest.mark.parametrize(
    ("test", "trips"),
    [
        # a search: leaves at the first element that matches, halfway on average
        ("if (cdf[k] >= u[i]) { found = k; break; }", "half"),
        ("if (cdf[k] >= u[i]) return;", "half"),
        # no element indexed by the counter: a convergence test, its trips unknown: the bound
        ("if (u[i] > 0.5f) break;", "all"),
        # an else, or a branch that does not leave: not a search
        ("if (cdf[k] >= u[i]) { found = k; break; } else { found = 0; }", "all"),
        ("if (cdf[k] >= u[i]) { found = k; }", "all"),
    ],
)
def test_a_linear_search_runs_half_its_bound(tmp_path: Path, test: str, trips: str) -> None:
    # the body is the `if` alone for a search; with the add beside it the loop is no search
    alone = one(tmp_path, _SEARCH.format(test=test).replace("w[i] += 1.0f;", ""))
    beside = one(tmp_path, _SEARCH.format(test=test))
    n = 1000
    expect = (n + 1) / 2 if trips == "half" else n
    assert at(alone.features.branches, n=n) == expect  # the `if`, once per trip
    assert at(beside.features.flops_sp, n=n) == n  # the add beside the `if`: every trip
