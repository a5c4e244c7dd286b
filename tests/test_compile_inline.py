"""Compile mode without inline chains (docs/counting.md S14): clang writes no inlined-at
locations, so an inlined callee's instructions show only the callee's own line; they count
at the sites the counter inlined the callee at, with the loops around each site. nvcc's
line tables (with chains) keep rule S5."""

from __future__ import annotations

from pathlib import Path

import pytest
import sympy
from compile_tools import clang_project, needs_clang, needs_nvcc
from roofcast.analyzer.compdb import load_database
from roofcast.analyzer.compile import Compiler
from roofcast.analyzer.discover import discover_files
from roofcast.analyzer.sass import classify_kernel, parse_disassembly
from roofcast.features import count_features
from roofcast.features.sasscount import class_counts, line_class_counts, recount
from roofcast.features.vector import CallSite, FeatureVector

# Written for these tests: a callee with a loop of its own, fully unrolled (4 FFMA), inlined
# in a kernel loop of n trips (line 11), one of m trips (line 15) and outside any loop
# (line 17). {chain} is empty for clang's line table, an `inlined at` for nvcc's.
LISTING = """\
//--------------------- .text._Z1kPfii --------------------------
        .section        .text._Z1kPfii,"ax",@progbits
_Z1kPfii:
        //## File "/s/k.cu", line 9
        /*0000*/                   MOV R2, RZ ;
.L_x_1:
        //## File "/s/k.cu", line 4{chain11}
        /*0010*/                   FFMA R2, R3, R3, R2 ;
        /*0020*/                   FFMA R2, R3, R3, R2 ;
        /*0030*/                   FFMA R2, R3, R3, R2 ;
        /*0040*/                   FFMA R2, R3, R3, R2 ;
        //## File "/s/k.cu", line 10
        /*0050*/                   IADD3 R5, R5, 0x1, RZ ;
        /*0060*/                   ISETP.GE.AND P0, PT, R5, c[0x0][0x168], PT ;
        /*0070*/              @!P0 BRA `(.L_x_1) ;
.L_x_2:
        //## File "/s/k.cu", line 4{chain15}
        /*0080*/                   FFMA R2, R4, R4, R2 ;
        /*0090*/                   FFMA R2, R4, R4, R2 ;
        /*00a0*/                   FFMA R2, R4, R4, R2 ;
        /*00b0*/                   FFMA R2, R4, R4, R2 ;
        //## File "/s/k.cu", line 14
        /*00c0*/                   IADD3 R6, R6, 0x1, RZ ;
        /*00d0*/                   ISETP.GE.AND P1, PT, R6, c[0x0][0x16c], PT ;
        /*00e0*/              @!P1 BRA `(.L_x_2) ;
        //## File "/s/k.cu", line 4{chain17}
        /*00f0*/                   FFMA R2, R2, R2, R2 ;
        /*0100*/                   FFMA R2, R2, R2, R2 ;
        /*0110*/                   FFMA R2, R2, R2, R2 ;
        /*0120*/                   FFMA R2, R2, R2, R2 ;
        //## File "/s/k.cu", line 18
        /*0130*/                   EXIT ;
.L_x_3:
        /*0140*/                   BRA `(.L_x_3);
"""
N, M = sympy.symbols("n m", positive=True)
K = "/s/k.cu"
#: S3: the loops around each line within its own function (the callee's loop: 4 trips)
LINE_LOOPS = {
    (K, 3): (sympy.Integer(4),),
    (K, 4): (sympy.Integer(4),),
    (K, 10): (N,),
    (K, 11): (N,),
    (K, 14): (M,),
    (K, 15): (M,),
    (K, 17): (),
}
#: S14: the callee's loop line 4, per inlined call: the kernel's line and every loop around
LINE_SITES = {
    (K, 4): {
        1: CallSite((K, 11), (N, sympy.Integer(4)), ((K, 10, 12), (K, 3, 4))),
        2: CallSite((K, 15), (M, sympy.Integer(4)), ((K, 14, 16), (K, 3, 4))),
        3: CallSite((K, 17), (sympy.Integer(4),), ((K, 3, 4),)),
    }
}


def _kernel(chained: bool):
    chains = {f"chain{n}": f' inlined at "{K}", line {n}' if chained else "" for n in (11, 15, 17)}
    return classify_kernel(parse_disassembly(LISTING.format(**chains))["_Z1kPfii"])


@pytest.mark.rule("S14")
def test_callee_lines_without_chains_count_at_their_sites() -> None:
    kernel = _kernel(chained=False)
    by_line = line_class_counts(kernel, LINE_LOOPS, LINE_SITES)
    # each copy of the callee (its loop unrolled: 4 FFMA) runs once per trip of its site's
    # kept loop, and counts at its call site as an inline chain would have it
    assert sympy.simplify(by_line[(K, 11)]["ffma"] - 4 * N) == 0
    assert sympy.simplify(by_line[(K, 15)]["ffma"] - 4 * M) == 0
    assert by_line[(K, 17)]["ffma"] == 4
    assert (K, 4) not in by_line
    # without the sites, the callee line only has its own (unrolled) loop: n and m are lost
    alone = class_counts(kernel, LINE_LOOPS)
    assert not alone["ffma"].free_symbols


@pytest.mark.rule("S14", "S5")
def test_inline_chains_keep_rule_s5() -> None:
    kernel = _kernel(chained=True)
    with_sites = class_counts(kernel, LINE_LOOPS, LINE_SITES)
    assert with_sites == class_counts(kernel, LINE_LOOPS)
    assert sympy.simplify(with_sites["ffma"] - (4 * N + 4 * M + 4)) == 0
    # and a chainless table gives what the chains give
    chainless = class_counts(_kernel(chained=False), LINE_LOOPS, LINE_SITES)
    assert sympy.simplify(chainless["ffma"] - with_sites["ffma"]) == 0


@pytest.mark.rule("S14")
def test_a_site_agreeing_with_the_kept_loops_is_chosen_over_a_tie() -> None:
    """Two sites in the same loop context share the instructions equally; a one-trip loop
    no kept loop starts is no loop of the nest (S5 keeps as many trips as kept loops)."""
    kernel = _kernel(chained=False)
    same = {
        (K, 4): {
            1: CallSite((K, 11), (N, sympy.Integer(4)), ((K, 10, 12), (K, 3, 4))),
            2: CallSite((K, 12), (M, sympy.Integer(4)), ((K, 10, 12), (K, 3, 4))),
            3: CallSite((K, 17), (sympy.Integer(1), sympy.Integer(4)), ((K, 17, 17), (K, 3, 4))),
        }
    }
    by_line = line_class_counts(kernel, LINE_LOOPS, same)
    # both sites lie in the loop at lines 10-12, whose back edge is at line 10: the copy in
    # it splits between them; the copy in the loop at line 14 matches neither (both are
    # in a kept loop that is not around it): the one-trip site, whose loop is no kept loop
    assert sympy.simplify(by_line[(K, 11)]["ffma"] - 2 * N) == 0
    assert sympy.simplify(by_line[(K, 12)]["ffma"] - 2 * M) == 0
    assert sympy.simplify(by_line[(K, 17)]["ffma"] - (4 + 4)) == 0


# Written for these tests. `cubic` (3 FFMA after clang folds nothing: r starts at x) is
# inlined in a loop of 1000 trips; `horner` has a loop of its own (m trips) and is inlined
# in a loop of n trips (line 30) and one of p trips (line 33) with 4 * m trips of its own.
KERNELS = """\
__device__ float horner(const float* c, float x, int m) {
  float r = 0.0f;
  for (int j = 0; j < m; j++) {
    r = r * x + c[j];
  }
  return r;
}

__device__ float cubic(float x) {
  float r = x;
#pragma unroll
  for (int j = 0; j < 3; j++) {
    r = r * x + 0.5f;
  }
  return r;
}

__global__ void known(const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0.0f;
  for (int k = 0; k < 1000; k++) {
    s += cubic(x[i + k * 4096]);
  }
  y[i] = s;
}

__global__ void two_sites(const float* c, const float* x, float* y, int n, int p, int m) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0.0f;
  for (int k = 0; k < n; k++) {
    s += horner(c, x[i + k], m);
  }
  for (int k = 0; k < p; k++) {
    s *= horner(c, x[i - k], 4 * m);
  }
  y[i] = s;
}
"""


def _project(tmp_path: Path) -> Path:
    """kernels.cu and a compile database building it with clang, as gpuFLOPBench's did."""
    return clang_project(tmp_path, KERNELS)


def _count(folder: Path, cache: Path, sites: bool = True) -> dict[str, FeatureVector]:
    compiler = Compiler("sm_86", load_database(folder), cache_root=cache)
    found = discover_files([folder / "kernels.cu"], [folder], {}, frozenset(), None)
    out = {}
    for ir in found.kernels:
        fv = count_features(ir, {}, line_loops=True)
        if not sites:
            fv.line_sites = {}
        recount(ir, fv, compiler)
        out[ir.name] = fv
    return out


@pytest.mark.rule("S14", "S3")
def test_the_counter_records_each_inlined_call_with_its_loops(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    file = str(folder / "kernels.cu")
    found = discover_files([folder / "kernels.cu"], [folder], {}, frozenset(), None)
    ir = next(k for k in found.kernels if k.name == "two_sites")
    fv = count_features(ir, {}, line_loops=True)
    body = (file, 4)  # horner's `r = r * x + c[j];`
    sites = {(s.call, tuple(map(str, s.trips)), s.spans) for s in fv.line_sites[body].values()}
    assert sites == {
        ((file, 31), ("n", "m"), ((file, 30, 32), (file, 3, 5))),
        ((file, 34), ("p", "4*m"), ((file, 33, 35), (file, 3, 5))),
    }
    # S3's own loops of the line are the last call's only; the kernel's lines have no sites
    assert tuple(map(str, fv.line_loops[body])) == ("4*m",)
    assert not any(line > 26 for _, line in fv.line_sites)


@pytest.mark.rule("S14")
@needs_clang
def test_clang_callee_in_a_loop_of_known_trips_runs_once_per_trip(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    counted = _count(folder, tmp_path / "cache")
    known = counted["known"]
    assert known.counted_from == "sass" and "clang" in known.counted_why
    # 1000 trips of cubic's 3 FFMA (6 FLOPs) and the sum's FADD: as the source counts it
    assert known.flops_sp == 1000 * (3 * 2 + 1)
    # the callee's FLOPs count at their call site's line, none at its own lines
    assert known.sass_by_line[22]["flops_sp"] == 7000
    assert all(known.sass_by_line.get(line, {}).get("flops_sp", 0) == 0 for line in (12, 13))
    # without the sites the callee's lines lose the loop around the call
    alone = _count(folder, tmp_path / "cache", sites=False)["known"]
    assert alone.flops_sp < 2000


@pytest.mark.rule("S14")
@needs_clang
def test_clang_callee_at_two_sites_takes_each_sites_loops(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    fv = _count(folder, tmp_path / "cache")["two_sites"]
    flops = sympy.expand(fv.flops_sp)
    named = {s.name: s for s in flops.free_symbols}
    n, p, m = named["n"], named["p"], named["m"]
    # horner's FFMA (2 FLOPs) runs m times per trip of the n loop and 4m per trip of the p loop
    assert flops.coeff(n).coeff(m) == 2
    assert flops.coeff(p).coeff(m) == 8
    # each at its own call site's line
    assert sympy.expand(fv.sass_by_line[31]["flops_sp"]).coeff(n).coeff(m) == 2
    assert sympy.expand(fv.sass_by_line[34]["flops_sp"]).coeff(p).coeff(m) == 8
    assert sympy.expand(fv.sass_by_line[31]["flops_sp"]).coeff(p) == 0


@pytest.mark.rule("S14", "S5")
@needs_nvcc
def test_nvcc_counts_do_not_use_the_sites(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROOFCAST_CLANG", "none")  # the same database compiled with nvcc
    folder = _project(tmp_path)
    with_sites = _count(folder, tmp_path / "cache")
    without = _count(folder, tmp_path / "cache", sites=False)
    for name, fv in with_sites.items():
        assert fv.counted_why.startswith("nvcc"), fv.counted_why
        assert fv.line_sites  # recorded, but nvcc's inline chains decide
        other = without[name]
        assert (fv.flops_sp, fv.int_ops, fv.sass_by_line) == (
            other.flops_sp,
            other.int_ops,
            other.sass_by_line,
        )
