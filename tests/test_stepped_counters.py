"""Rule C7: a counter stepped by a compound assignment in straight code (`sk -= 2;`) has a
known start, so the `while` loop it counts has a trip count, not C4's unknown."""

from __future__ import annotations

from test_counting_rules import at, one


def test_while_counter_stepped_before_the_loop_is_counted(tmp_path):
    k = one(
        tmp_path,
        """\
        __device__ void steps(int sk, int* o) {
          sk -= 2;
          while (sk > 0) {
            o[0] += 3;
            --sk;
          }
        }
        __global__ void caller(int sk, int* o) { steps(sk, o); }
        """,
    )
    assert not [s for s in k.resolved.defaults if s.startswith("trip_L")]
    # sk - 2 trips of `+= 3`, `--sk` and the test `sk > 0`, plus the `-= 2`
    assert at(k.features.int_ops, sk=18) == 3 * 16 + 1


def test_compound_step_inside_a_loop_stays_unknown(tmp_path):
    k = one(
        tmp_path,
        """\
        __global__ void grow(int n, int* o) {
          for (int r = 0; r < 4; r++) {
            n += 8;
            int j = 0;
            while (j < n) { o[j] = r; j += 1; }
          }
        }
        """,
    )
    assert any(isinstance(s, str) and s.startswith("trip_L") for s in k.resolved.defaults)


def test_compound_step_under_an_if_stays_unknown(tmp_path):
    k = one(
        tmp_path,
        """\
        __global__ void clear(int* c, int top, int bottom) {
          int inc = blockDim.x * gridDim.x;
          int k = bottom + threadIdx.x;
          if (k < bottom) k += inc;
          while (k < top) {
            c[k] = -1;
            k += inc;
          }
        }
        """,
    )
    # some threads step and some do not: the start is no value, the trip count C4's
    assert any(s.startswith("trip_L") for s in k.resolved.defaults)
