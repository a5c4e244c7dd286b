"""Rule U1: a device function the program defines is inlined even when its name starts
with a toolkit prefix of the intrinsic catalogue (`make_`, `__shfl`, ...)."""

from __future__ import annotations

from test_counting_rules import counts, one


def test_program_function_named_like_a_constructor_is_inlined(tmp_path):
    source = """\
        __device__ unsigned int make_positive(int a, unsigned int m) {
          for (int j = 0; j < 64; j++) a += m;
          return a % m;
        }
        __global__ void pos(unsigned int* o, unsigned int m) {
          int i = threadIdx.x;
          o[i] = make_positive(i, m);
        }
        """
    k = one(tmp_path, source)
    assert k.features.device_calls == 1
    assert k.features.loops == 1
    # 64 trips of `a += m` (I1), then `%`: the body counts, not a free constructor
    assert counts(k)["int"] >= 65


def test_toolkit_constructor_stays_free(tmp_path):
    k = one(
        tmp_path,
        """\
        __global__ void pack(float2* o, const float* x) {
          int i = threadIdx.x;
          o[i] = make_float2(x[i], x[i]);
        }
        """,
    )
    assert k.features.device_calls == 0
    assert counts(k)["sp"] == 0
