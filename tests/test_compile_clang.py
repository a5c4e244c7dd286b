"""Compile mode with the build's own clang (docs/counting.md S0): a unit a compile database
builds with `clang++ -x cuda` is compiled with clang against a CUDA 12 tree
(analyzer.toolchain), and with nvcc, saying why, where no clang toolchain is found."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import sympy
from compile_tools import (
    CLANG,
    GROUND_TRUTH_FLAGS,
    TOOLS,
    clang_counts,
    clang_project,
    needs_clang_and_nvcc,
)
from roofcast.analyzer.compdb import load_database, parse_entry
from roofcast.analyzer.compile import Compiler, Tools, clang_command, ptx_arch
from roofcast.analyzer.toolchain import (
    ClangCuda,
    CudaTree,
    ToolchainError,
    clang_cuda,
    find_clang,
    is_clang,
)

needs_clang = needs_clang_and_nvcc  # these tests compare clang's code with nvcc's

# Written for these tests. A SWAR popcount, which clang turns into one POPC and nvcc keeps
# as shifts, masks and adds; and a plain FMA kernel both compile alike.
KERNELS = """\
__global__ void swar(const unsigned* in, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned v = in[i];
    v = v - ((v >> 1) & 0x55555555u);
    v = (v & 0x33333333u) + ((v >> 2) & 0x33333333u);
    out[i] = (((v + (v >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24;
  }
}

__global__ void axpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
"""


def _project(
    tmp_path: Path, driver: str = "/usr/bin/clang++", text: str = KERNELS, arch: str = "sm_86"
) -> Path:
    """A folder with kernels.cu and a compile_commands.json building it as the ground
    truth's build did (another machine's clang and CUDA paths)."""
    return clang_project(tmp_path, text, flags=GROUND_TRUTH_FLAGS, driver=driver, arch=arch)


def _count(folder: Path, cache: Path) -> dict[str, object]:
    return dict(clang_counts(folder, cache))


def _without_clang(tmp_path: Path) -> str:
    """A PATH with every program of today's PATH but clang's (links in one folder)."""
    shadow = tmp_path / "noclang-bin"
    shadow.mkdir()
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            link = shadow / name
            if not name.startswith("clang") and not link.exists():
                link.symlink_to(Path(folder) / name)
    return str(shadow)


@pytest.mark.rule("S0")
@needs_clang
def test_clang_units_compile_with_clang_and_differ_where_clang_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _project(tmp_path)
    clang = _count(folder, tmp_path / "cache")
    assert {fv.counted_from for fv in clang.values()} == {"sass"}
    assert all("clang" in fv.counted_why and "CUDA 12" in fv.counted_why for fv in clang.values())
    monkeypatch.setenv("ROOFCAST_CLANG", "none")  # the same database compiled with nvcc
    nvcc = _count(folder, tmp_path / "cache")
    assert all(fv.counted_why.startswith("nvcc -arch=sm_86") for fv in nvcc.values())
    assert all("ROOFCAST_CLANG=none" in fv.counted_why for fv in nvcc.values())
    # the popcount: one POPC under clang instead of a dozen shifts, masks and adds (every
    # thread passing the `i < n` guard, S16)
    every = {"n": 1 << 20, "blockDim_x": 256, "gridDim_x": 4096}

    def at(expr: sympy.Expr) -> float:
        return float(expr.subs({s: every[s.name] for s in expr.free_symbols}))

    assert at(clang["swar"].int_ops) < at(nvcc["swar"].int_ops) / 2
    # the same FFMA either way
    assert at(clang["axpy"].flops_sp) == at(nvcc["axpy"].flops_sp) == 2


@pytest.mark.rule("S0")
@needs_clang
def test_clang_cubin_holds_popc_with_line_table(tmp_path: Path) -> None:
    assert isinstance(CLANG, ClangCuda) and TOOLS.nvdisasm is not None
    folder = _project(tmp_path)
    unit = load_database(folder).unit_for(folder / "kernels.cu")
    assert unit is not None and unit.compiler == "clang++" and unit.codegen == ("-O3",)
    assert unit.gpu_archs == ("sm_86",)
    cubin = tmp_path / "k.cubin"
    command = clang_command(CLANG, "sm_86", folder / "kernels.cu", cubin, unit)
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    shown = subprocess.run(
        [TOOLS.nvdisasm, "-gi", "-c", str(cubin)], capture_output=True, text=True, check=False
    ).stdout
    swar = shown.split("_Z4swarPKjPii:", 1)[1].split("//----", 1)[0]
    line7 = swar.split(f'File "{folder / "kernels.cu"}", line 7', 1)[1].split("//##", 1)[0]
    assert " POPC " in line7  # the popcount, counted at its own source line


@pytest.mark.rule("S0")
@needs_clang
def test_cache_keeps_clang_and_nvcc_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _project(tmp_path)
    cache = tmp_path / "cache"
    source = folder / "kernels.cu"
    first = Compiler("sm_86", load_database(folder), cache_root=cache).unit(source)
    assert not first.error and not first.cached and "clang" in first.how
    again = Compiler("sm_86", load_database(folder), cache_root=cache).unit(source)
    assert again.cached and again.how == first.how
    monkeypatch.setenv("ROOFCAST_CLANG", "none")
    nvcc = Compiler("sm_86", load_database(folder), cache_root=cache).unit(source)
    assert not nvcc.cached and nvcc.command[0] == TOOLS.nvcc  # not clang's cubin reused


@pytest.mark.rule("S0")
@needs_clang
def test_without_clang_on_path_the_unit_falls_back_to_nvcc(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _project(tmp_path)
    monkeypatch.setenv("PATH", _without_clang(tmp_path))
    monkeypatch.delenv("ROOFCAST_CLANG", raising=False)
    found = _count(folder, tmp_path / "cache")
    assert {fv.counted_from for fv in found.values()} == {"sass"}
    for fv in found.values():
        assert fv.counted_why.startswith("nvcc -arch=sm_86 (not the build's clang++:")
        assert "clang++ not found on PATH" in fv.counted_why


@pytest.mark.rule("S0")
@needs_clang
def test_bad_cuda_tree_override_is_one_line_and_falls_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _project(tmp_path)
    monkeypatch.setenv("ROOFCAST_CLANG_CUDA", str(tmp_path / "no-cuda"))
    found = _count(folder, tmp_path / "cache")
    why = found["axpy"].counted_why
    assert found["axpy"].counted_from == "sass" and why.startswith("nvcc -arch=sm_86")
    assert f"ROOFCAST_CLANG_CUDA={tmp_path / 'no-cuda'}: not a CUDA 12 tree" in why
    assert "\n" not in why


# Written for these tests: a warp reduction with the shuffle that has no `.sync`, which
# clang compiles for sm_60 but not for sm_70 and later.
SHUFFLE = """\
__global__ void warp_sum(const float* in, float* out) {
  float v = in[blockIdx.x * 32 + threadIdx.x];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down(v, offset);
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}
"""


@pytest.mark.rule("S0")
@needs_clang
def test_build_for_an_older_gpu_is_its_ptx_assembled_for_this_one(tmp_path: Path) -> None:
    older = _count(_project(tmp_path, text=SHUFFLE, arch="sm_60"), tmp_path / "cache")
    fv = older["warp_sum"]
    assert fv.counted_from == "sass", fv.counted_why
    assert "--cuda-gpu-arch=sm_60 then ptxas --gpu-name=sm_86" in fv.counted_why
    assert fv.flops_sp == 5  # five FADDs: the 5-trip loop unrolled
    (tmp_path / "own").mkdir()
    own = _count(_project(tmp_path / "own", text=SHUFFLE), tmp_path / "cache")
    assert own["warp_sum"].counted_from == "source"  # sm_86 has no shuffle without .sync
    assert "Cannot select" in own["warp_sum"].counted_why


@pytest.mark.rule("S0")
@needs_clang
def test_clang_error_is_the_fallback_reason(tmp_path: Path) -> None:
    text = '#include "missing_header.h"\n__global__ void k(float* x) { x[0] += 1.f; }\n'
    found = _count(_project(tmp_path, text=text), tmp_path / "cache")
    assert found["k"].counted_from == "source"
    assert isinstance(CLANG, ClangCuda)
    assert found["k"].counted_why.startswith(f"{CLANG.name} failed:")
    assert "missing_header.h" in found["k"].counted_why


@needs_clang
def test_cli_verbose_names_clang_and_reports_it_per_kernel(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    done = subprocess.run(
        [sys.executable, "-m", "roofcast.cli", "analyze", str(folder / "kernels.cu")]
        + [
            "-g",
            "rtx3080",
            "--compile",
            "--compile-commands",
            str(folder),
            "--verbose",
            "-f",
            "json",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    note = next(ln for ln in done.stderr.splitlines() if "--compile:" in ln)
    assert "units built with clang++:" in note and "CUDA 12" in note
    kernels = json.loads(done.stdout)["kernels"]
    assert {k["counted_from"] for k in kernels} == {"sass"}
    assert all("clang" in k["counted_why"] for k in kernels)


def _fake(folder: Path, name: str, says: str) -> Path:
    path = folder / name
    path.write_text(f"#!/bin/sh\necho '{says}'\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_newest_versioned_clang_on_path_unless_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake(tmp_path, "clang++-17", "clang version 17.0.6")
    newest = _fake(tmp_path, "clang++-21", "clang version 21.1.0")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("ROOFCAST_CLANG", raising=False)
    assert find_clang("/usr/bin/clang++") == str(newest)  # no clang++ here: the newest
    # a build's compiler is looked up by name on PATH, never run from the path it gives
    own = _fake(tmp_path, "clang++", "clang version 18.1.0")
    assert find_clang("/elsewhere/bin/clang++") == str(own)
    monkeypatch.setenv("ROOFCAST_CLANG", "clang++-17")
    assert find_clang("clang++") == str(tmp_path / "clang++-17")
    monkeypatch.setenv("ROOFCAST_CLANG", "none")
    with pytest.raises(ToolchainError, match="ROOFCAST_CLANG=none"):
        find_clang("clang++")
    monkeypatch.setenv("ROOFCAST_CLANG", str(tmp_path / "missing"))
    with pytest.raises(ToolchainError, match="no such program"):
        find_clang()


def test_a_program_that_is_not_clang_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake(tmp_path, "clang++-30", "gcc (Debian 12.2.0) 12.2.0")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("ROOFCAST_CLANG", raising=False)
    with pytest.raises(ToolchainError, match="not a clang"):
        clang_cuda()


def test_clang_command_is_an_argument_list_of_the_builds_flags() -> None:
    hostile = "1; rm -rf / $(id)"
    entry = {
        "directory": "/b",
        "file": "/p/a b.cu",
        "arguments": [
            "/usr/bin/clang++",
            "-DN=4",
            "-O2",
            "-ffast-math",
            "-Wno-c++11-narrowing",
            "-fplugin=/tmp/evil.so",
            "-Xclang",
            "-load",
            "-std=c++17",
            "-includeutils.h",
            "-x",
            "cuda",
            "-c",
            "/p/a b.cu",
        ],
    }
    unit = parse_entry(entry, 0)
    assert unit.cuda and unit.compiler == "clang++" and is_clang(unit.compiler)
    assert unit.codegen == ("-O2", "-ffast-math", "-Wno-c++11-narrowing")
    toolchain = ClangCuda("/opt/clang++-19", "19.1.7", CudaTree(Path("/opt/cuda"), "12.6"))
    args = clang_command(
        toolchain, "sm_86", Path("/p/a b.cu"), Path("/t/o.cubin"), unit, {"X": hostile}
    )
    assert args[:5] == ["/opt/clang++-19", "-x", "cuda", "--cuda-device-only", "-c"]
    assert "--cuda-gpu-arch=sm_86" in args and "--cuda-path=/opt/cuda" in args
    assert f"-DX={hostile}" in args and "-DN=4" in args  # one argument each, never split
    assert args[args.index("-include") : args.index("-include") + 2] == ["-include", "utils.h"]
    assert not any("plugin" in a or a == "-load" for a in args)
    assert args[-3:] == ["-o", "/t/o.cubin", "/p/a b.cu"]


def test_the_ptx_the_driver_would_take_for_the_gpu() -> None:
    def unit(*archs: str):
        return parse_entry(
            {"directory": "/b", "file": "/p/k.cu", "arguments": ["clang++", *archs, "/p/k.cu"]},
            0,
        )

    assert ptx_arch(unit("--cuda-gpu-arch=sm_86"), "sm_86") is None  # its own cubin
    assert ptx_arch(unit(), "sm_86") is None  # no architecture named: the GPU's
    both = unit("--cuda-gpu-arch=sm_52", "--cuda-gpu-arch=sm_70")
    assert both.gpu_archs == ("sm_52", "sm_70") and ptx_arch(both, "sm_86") == "sm_70"
    assert ptx_arch(unit("--offload-arch=sm_60,sm_90"), "sm_86") == "sm_60"
    assert ptx_arch(unit("--cuda-gpu-arch=sm_90"), "sm_86") is None  # would not run there


@pytest.mark.rule("S0")
@needs_clang
def test_without_nvcc_clang_compiles_with_nvccs_default_flags(tmp_path: Path) -> None:
    """A machine with clang and the `compile` extra but no CUDA toolkit still compiles."""
    assert isinstance(CLANG, ClangCuda)
    source = tmp_path / "kernels.cu"
    source.write_text(KERNELS)
    compiler = Compiler("sm_86", tools=Tools(None, TOOLS.nvdisasm), cache_root=tmp_path / "c")
    assert compiler.unavailable() == ""
    command = compiler.command(source, tmp_path / "out.cubin")
    assert command[0] == CLANG.clang
    assert {"-O3", "-std=c++17", f"-I{tmp_path}", "--cuda-device-only"} <= set(command)
    sass, why = compiler.kernel(source, "swar")
    assert sass is not None, why
    nvcc, _ = Compiler("sm_86", tools=TOOLS, cache_root=tmp_path / "c").kernel(source, "swar")
    assert nvcc is not None
    # clang's code (one POPC), not nvcc's shifts, masks and adds
    assert sass.totals()["integer"] < nvcc.totals()["integer"] / 2
    how = compiler.how(source, "swar")
    assert how.startswith(CLANG.name) and "nvcc not found" in how


def test_without_nvcc_or_clang_nothing_compiles_and_both_are_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROOFCAST_CLANG", "none")
    compiler = Compiler("sm_86", tools=Tools(None, "/usr/bin/true"), cache_root=tmp_path)
    why = compiler.unavailable()
    assert "nvcc not found" in why and "ROOFCAST_CLANG=none" in why
    sass, reason = compiler.kernel(tmp_path / "x.cu", "k")
    assert sass is None and reason == why


def _included_project(tmp_path: Path) -> Path:
    """kernels.cu, which the build never compiles alone, #included by main.cu, which the
    compile database builds with clang."""
    folder = _project(tmp_path)
    (folder / "main.cu").write_text('#include "kernels.cu"\nint main() { return 0; }\n')
    entry = json.loads((folder / "compile_commands.json").read_text())[0]
    entry["command"] = (
        entry["command"].replace("kernels.cu", "main.cu").replace("kernels.o", "main.o")
    )
    entry["file"] = str(folder / "main.cu")
    (folder / "compile_commands.json").write_text(json.dumps([entry]))
    return folder


@pytest.mark.rule("S22")
def test_a_cu_the_build_only_includes_is_looked_for_in_its_built_includer_first(
    tmp_path: Path,
) -> None:
    folder = _included_project(tmp_path)
    kernels, main = (folder / "kernels.cu").resolve(), (folder / "main.cu").resolve()
    with_database = Compiler("sm_86", load_database(folder), cache_root=tmp_path / "cache")
    assert with_database.candidates(kernels) == [main, kernels]
    without = Compiler("sm_86", cache_root=tmp_path / "cache")  # no build to follow
    assert without.candidates(kernels) == [kernels, main]


@pytest.mark.rule("S22")
@needs_clang
def test_a_kernel_in_an_included_cu_is_counted_from_its_includers_clang_build(
    tmp_path: Path,
) -> None:
    folder = _included_project(tmp_path)
    counted = _count(folder, tmp_path / "cache")
    assert all("clang" in fv.counted_why for fv in counted.values())
    # the build's clang code: one POPC for the SWAR popcount, as its own unit would give
    (tmp_path / "alone").mkdir()
    alone = _count(_project(tmp_path / "alone"), tmp_path / "cache")
    assert counted["swar"].int_ops == alone["swar"].int_ops
