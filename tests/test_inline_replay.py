"""Replayed inlining (features/scalarbody.py, `KernelLowering.walk_inlined`): a scalar-only
device function is walked once per kernel and its counts replayed at its other calls. The
replayed counts must be what walking it again gives, in every loop nest and under a loop's
control rule; a function that touches memory, loops or calls others is walked every time."""

from __future__ import annotations

import textwrap

from roofcast.analyzer.discover import discover
from roofcast.analyzer.parsing import parse
from roofcast.features.entry import lower
from roofcast.features.lowering import KernelLowering
from roofcast.features.scalarbody import scalar_body

SOURCE = textwrap.dedent(
    """\
    __device__ float axpb(float a, float x, float b) {
      float t = a * x;
      return t + b;
    }
    __device__ float sq(float v) { return v * v + sqrtf(v); }
    __device__ float get(const float* p, int i) { return p[i]; }
    __global__ void k(const float* x, float* y, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      float s = axpb(2.0f, x[i], 1.0f);
      s += axpb(s, s, s);
      for (int j = 0; j < n; ++j) {
        s += axpb(s, x[j], 3.0f) + sq(s);
        s += get(x, j) + get(x, j + 1);
      }
      for (int q = 0; q < 100; q += (int)sq(1.0f)) s -= 1.0f;
      y[i] = s + axpb(s, s, s);
    }
    """
)


def _lowered(tmp_path, replay: bool) -> KernelLowering:
    path = tmp_path / "k.cu"
    path.write_text(SOURCE)
    (ir,) = discover([path]).kernels
    if replay:
        return lower(ir)
    original = KernelLowering.walk_inlined
    KernelLowering.walk_inlined = lambda self, callee, body, scope: self.stmt(body)
    try:
        return lower(ir)
    finally:
        KernelLowering.walk_inlined = original


def test_replayed_counts_equal_walking_every_call(tmp_path):
    replayed = _lowered(tmp_path, replay=True)
    walked = _lowered(tmp_path, replay=False)
    assert replayed.lowered.ops == walked.lowered.ops
    assert list(replayed.lowered.ops) == list(walked.lowered.ops)  # same order of records
    assert replayed.work == walked.work  # the work budget (B1) is charged the same
    assert [str(a) for a in replayed.accesses] == [str(a) for a in walked.accesses]
    assert replayed.fv.device_calls == walked.fv.device_calls == 8


def test_scalar_bodies_are_replayed_and_others_walked(tmp_path):
    lowering = _lowered(tmp_path, replay=True)
    replayable = {body.start_point[0] + 1 for body, work, _ in lowering.replays.values() if work}
    assert replayable == {1, 5}  # axpb and sq; `get` reads memory: never recorded


def _body(text: str):
    tree = parse(text, "cuda")
    function = tree.root_node.named_children[0]
    return function.child_by_field_name("body")


def test_what_makes_a_body_not_scalar():
    assert scalar_body(_body("__device__ int f(int a) { int b = a << 2; return b ^ a; }"))
    assert scalar_body(_body("__device__ float f(float a) { return fmaxf(a, 0.f); }"))
    for body in (
        "__device__ int f(int a) { if (a) return 1; return 0; }",  # a branch
        "__device__ int f(int a) { for (;;) {} return a; }",  # a loop
        "__device__ int f(int* p) { return p[0]; }",  # memory
        "__device__ int f(int a) { return g(a); }",  # a call that may be inlined
        "__device__ int f(int a) { int* p = &a; return a; }",  # a pointer
        "__device__ int f(int a) { __shared__ int s; return a; }",  # shared memory
        "__device__ int f(int a) { atomicAdd(a, 1); return a; }",  # an atomic
    ):
        assert scalar_body(_body(body)) is None, body
