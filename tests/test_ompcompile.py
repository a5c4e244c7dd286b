"""Compile mode for OpenMP offload (docs/counting.md S11-S13): target regions compiled by clang
with the device runtime linked, mapped to their `__omp_offloading_` kernels, and counted per
unit of work and per launched thread. Real clang runs where clang and its nvptx device
runtime are here; a clean skip otherwise."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import sympy
from roofcast.analyzer.compile import Compiler
from roofcast.analyzer.discover import discover_files
from roofcast.analyzer.ompcompile import (
    OffloadCompiler,
    OffloadTools,
    entry_of,
    find_offload_tools,
    function_base,
    has_target_region,
    offload_command,
)
from roofcast.analyzer.sass import KernelSass, LineCounts, Loop
from roofcast.features.ompsass import split_region
from roofcast.features.sasscount import class_counts
from roofcast.gpu_specs import load_gpu

from roofcast.pipeline import count_kernels
from roofcast.results import LaunchContext

ARCH = "sm_86"
TOOLS = find_offload_tools()
needs_clang = pytest.mark.skipif(
    bool(TOOLS.missing(ARCH)), reason=f"OpenMP offload tools missing: {TOOLS.missing(ARCH)}"
)

# Written for these tests: two regions in two functions, one over floats without an inner
# loop, one over doubles with an inner loop of `m` trips.
REGIONS = """\
void scale(int n, float a, float *x) {
#pragma omp target teams distribute parallel for map(tofrom: x[0:n])
  for (int i = 0; i < n; i++)
    x[i] = a * x[i] + 1.0f;
}

void rowsum(int n, int m, const double *a, double *out) {
#pragma omp target teams distribute parallel for map(to: a[0:n*m]) map(from: out[0:n])
  for (int i = 0; i < n; i++) {
    double s = 0.0;
    for (int j = 0; j < m; j++)
      s += a[i * m + j] * 2.0;
    out[i] = s;
  }
}
"""


@pytest.fixture
def regions(tmp_path: Path) -> Path:
    path = tmp_path / "regions.cpp"
    path.write_text(REGIONS)
    return path


def _kernels(path: Path):
    return {ir.name: ir for ir in discover_files([path], [path.parent]).kernels}


def test_entry_names_are_parsed() -> None:
    entry = entry_of("__omp_offloading_fe00_52852f__Z5scaleifPf_l2")
    assert entry is not None and (entry.function, entry.line) == ("_Z5scaleifPf", 2)
    assert entry_of("__omp_offloading_10309_2f04138_main_l57").function == "main"
    assert entry_of("__cuda_sm70_shflsync_down") is None  # the runtime's own functions
    assert function_base("main") == "main"
    assert function_base("_Z5scaleifPf") == "scale"
    assert function_base("_ZN2ns6kernelEv") == "kernel"
    assert function_base("_Z15bilateralFilterILi3EEvPKfPfiifff") == "bilateralFilter"


@pytest.mark.rule("S11")
def test_command_is_an_argument_list_with_defines_as_single_arguments(tmp_path: Path) -> None:
    tools = OffloadTools("/usr/bin/clang++", tmp_path, tmp_path, "/bin/nvdisasm")
    (tmp_path / f"libomptarget-nvptx-{ARCH}.bc").write_bytes(b"")
    source = tmp_path / "a.cpp"
    command = offload_command(
        tools, ARCH, source, tmp_path / "o.cubin", defines={"X": "1; rm -rf /"}
    )
    assert command[0] == "/usr/bin/clang++"
    assert {"-fopenmp", f"--offload-arch={ARCH}", "--offload-device-only"} <= set(command)
    assert f"--libomptarget-nvptx-bc-path={tmp_path / f'libomptarget-nvptx-{ARCH}.bc'}" in command
    assert "-DX=1; rm -rf /" in command  # one argument, never a shell
    assert command[-1] == str(source)


def test_missing_tools_say_why(tmp_path: Path) -> None:
    assert "clang++" in OffloadTools(None, None, None, None).missing(ARCH)
    no_runtime = OffloadTools("/usr/bin/clang++", tmp_path, tmp_path, "/bin/nvdisasm")
    assert f"libomptarget-nvptx-{ARCH}.bc" in no_runtime.missing(ARCH)
    compiler = OffloadCompiler(ARCH, tools=OffloadTools(None, None, None, None))
    sass, why = compiler.region(tmp_path / "a.cpp", "f", 3)
    assert sass is None and "clang++" in why


def test_target_regions_are_found_in_text(tmp_path: Path) -> None:
    with_region = tmp_path / "a.cpp"
    with_region.write_text("void f() {\n  #  pragma omp target teams loop\n  for(;;);\n}\n")
    host_only = tmp_path / "b.cpp"
    host_only.write_text("void f() {\n#pragma omp parallel for\n  for(;;);\n}\n")
    assert has_target_region(with_region) and not has_target_region(host_only)


@pytest.mark.rule("S13")
def test_runtime_loops_are_per_unit_and_code_outside_loops_per_thread() -> None:
    """A distribute loop (back edge on the pragma line, in no source loop) and a user loop
    (back edge on a line inside one) nested in it: the first is taken out of the nest, the
    instructions outside both go to the per-thread counts."""
    f = "/s/r.cpp"
    sass = KernelSass(
        "__omp_offloading_1_2_main_l2",
        [
            LineCounts(((f, 2),), 0, 1, Counter(integer=9)),  # entry, setup
            LineCounts(((f, 2),), 1, 1, Counter(integer=5), (1,), (), (0x10,)),  # chunk loop
            LineCounts(((f, 5),), 2, 1, Counter(integer=3, ffma=1), (1, 1), (), (0x10, 0x20)),
        ],
        [Loop(0x10, 0x90, (f, 2)), Loop(0x20, 0x60, (f, 4))],
    )
    loops = {(f, 3): (), (f, 4): (sympy.Symbol("m"),), (f, 5): (sympy.Symbol("m"),)}
    body, per_thread = split_region(sass, loops)
    assert per_thread == Counter(integer=9)
    assert [(g.depth, g.loops) for g in body.groups] == [(0, ()), (1, (0x20,))]
    assert [loop.start for loop in body.loops] == [0x20]
    m = sympy.Symbol("m")
    counts = class_counts(
        body, loops
    )  # per unit of work: the chunk loop's once, the user's m times
    assert sympy.simplify(counts["integer"] - (5 + 3 * m)) == 0 and counts["ffma"] == m


@needs_clang
@pytest.mark.rule("S11", "S12")
def test_each_region_maps_to_its_own_kernel(regions: Path, tmp_path: Path) -> None:
    compiler = OffloadCompiler(ARCH, cache_root=tmp_path / "cache")
    scale, why = compiler.region(regions, "scale", 2)
    assert why == "" and scale is not None
    rowsum, _ = compiler.region(regions, "rowsum", 8)
    assert rowsum is not None
    assert scale.name.endswith("scaleifPf_l2") and rowsum.name.endswith("_l8")
    assert scale.totals()["ffma"] >= 1 and scale.totals()["dfma"] + scale.totals()["dmul"] == 0
    assert rowsum.totals()["dadd"] + rowsum.totals()["dfma"] >= 1 and rowsum.totals()["ffma"] == 0
    missing, why = compiler.region(regions, "scale", 40)
    assert missing is None and "no offloaded kernel for line 40" in why


@needs_clang
@pytest.mark.rule("S13")
def test_counts_include_the_runtime_per_launched_thread(regions: Path, tmp_path: Path) -> None:
    """FLOPs per unit of work are the source's (one FMA per element, two FLOPs per inner
    trip); int ops per unit of work gain what each launched thread runs outside the loops,
    in proportion to launched threads over units of work."""
    compiler = Compiler(ARCH, cache_root=tmp_path / "cache")
    kernels = _kernels(regions)
    gpu = load_gpu("rtx3080")
    per_unit = {}
    for grid in (8, 16):
        context = LaunchContext((128, 1, 1), (grid, 1, 1), extra={"n": 4096.0, "m": 64.0})
        results = count_kernels(kernels.values(), context=context, gpu=gpu, compiler=compiler)
        per_unit[grid] = {r.ir.name: r for r in results}
    scale = per_unit[8]["scale"]
    assert scale.features.counted_from == "sass"
    assert scale.resolved.flops["sp"] == 2
    assert per_unit[8]["rowsum"].resolved.flops["dp"] == 2 * 64
    runtime = scale.features.runtime_per_thread["flops_int"]
    assert runtime > 0
    assert any(note.startswith("[S13]") for note in scale.resolved.notes)
    grown = per_unit[16]["scale"].resolved.flops["int"] - scale.resolved.flops["int"]
    assert grown == pytest.approx(runtime * 128 * 8 / 4096)  # 1024 more threads over 4096 units
    assert not any(note.startswith("[U4]") for note in scale.resolved.notes)


@needs_clang
@pytest.mark.rule("S13")
def test_user_loop_trips_multiply_only_the_inner_loop(regions: Path, tmp_path: Path) -> None:
    compiler = Compiler(ARCH, cache_root=tmp_path / "cache")
    rowsum = _kernels(regions)["rowsum"]
    ints = {}
    for m in (64, 128):
        context = LaunchContext((128, 1, 1), (32, 1, 1), extra={"n": 4096.0, "m": float(m)})
        (result,) = count_kernels([rowsum], context=context, compiler=compiler)
        ints[m] = result.resolved.flops["int"]
    per_trip = (ints[128] - ints[64]) / 64
    assert 0 < per_trip < 4  # loop control, unrolled: a fraction of an op per trip
    assert ints[64] - 64 * per_trip > 4  # the iteration's own part, outside the inner loop


@needs_clang
def test_a_unit_that_does_not_compile_falls_back_with_its_reason(tmp_path: Path) -> None:
    broken = tmp_path / "broken.cpp"
    broken.write_text(REGIONS.replace("x[i] = a * x[i] + 1.0f;", "x[i] = undeclared_name;"))
    compiler = Compiler(ARCH, cache_root=tmp_path / "cache")
    results = count_kernels(_kernels(broken).values(), compiler=compiler)
    scale = next(r for r in results if r.ir.name == "scale")
    assert scale.features.counted_from == "source"
    why = scale.features.counted_why
    assert "failed" in why and "undeclared_name" in why
    assert "\n" not in why


@needs_clang
def test_a_header_region_is_compiled_in_its_includer(tmp_path: Path) -> None:
    (tmp_path / "kernels.h").write_text(REGIONS)
    (tmp_path / "main.cpp").write_text('#include "kernels.h"\nint main() { return 0; }\n')
    compiler = OffloadCompiler(ARCH, cache_root=tmp_path / "cache")
    sass, why = compiler.region(tmp_path / "kernels.h", "rowsum", 8)
    assert why == "" and sass is not None


@needs_clang
def test_a_rerun_reads_the_cache_without_compiling(
    regions: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = OffloadCompiler(ARCH, cache_root=tmp_path / "cache")
    expected, _ = first.region(regions, "scale", 2)

    def no_tools(*args, **kwargs):
        raise AssertionError("a tool ran on a cache hit")

    monkeypatch.setattr(subprocess, "run", no_tools)
    again = OffloadCompiler(ARCH, cache_root=tmp_path / "cache", tools=first.tools)
    found, why = again.region(regions, "scale", 2)
    assert why == "" and found is not None and found.totals() == expected.totals()


@needs_clang
def test_evaluate_compiles_the_openmp_rows(tmp_path: Path) -> None:
    """The evaluation fixture's OpenMP regions (a function template's instance, a method,
    regions of `main`) each map to their kernel: every matched row is counted from SASS."""
    data = Path(__file__).resolve().parent / "data" / "eval"
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    args = [sys.executable, "-m", "roofcast.cli", "evaluate", "-m", str(data / "manifest.csv")]
    args += ["-s", str(data / "sources"), "-g", "rtx3080", "-q", "-p", "roofline", "-f", "json"]
    only_omp = tmp_path / "omp.csv"
    lines = (data / "manifest.csv").read_text().splitlines()
    only_omp.write_text("\n".join([lines[0], *(ln for ln in lines if ",OMP," in ln)]) + "\n")
    args[args.index(str(data / "manifest.csv"))] = str(only_omp)
    done = subprocess.run([*args, "--compile"], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["compiled_share"] == 1.0, summary.get("compile_fallbacks")
