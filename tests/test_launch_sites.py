"""A kernel launched from several host call sites (docs/counting.md D33, D34): the host
values are those of the site whose launch was profiled."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from roofcast.gpu_specs import load_gpu

from roofcast.pipeline import analyze_paths
from roofcast.predictors.roofline import RooflinePredictor
from roofcast.results import KernelResult, LaunchContext
from roofcast.workflow.explain import explain, render

#: a kernel whose SP FLOPs per thread are its parameter `n`: one add per trip
LOOP_KERNEL = """\
__global__ void k(float* a, int n) {
  float s = 0.0f;
  for (int j = 0; j < n; j++) s += a[j];
  a[threadIdx.x] = s;
}
"""


def analyse(folder: Path, files: dict[str, str], context: LaunchContext | None) -> KernelResult:
    for name, text in files.items():
        (folder / name).write_text(textwrap.dedent(text))
    report = analyze_paths([folder], load_gpu("a100"), {}, RooflinePredictor(), context)
    assert not [p for p in report.problems if p.fatal], report.problems
    (kernel,) = [k for k in report.kernels if k.ir.name == "k"]
    return kernel


def site_note(kernel: KernelResult) -> str:
    (note,) = [n for n in kernel.resolved.notes if n.startswith("[D33]")]
    return note


TWO_SITES = {
    "main.cu": LOOP_KERNEL
    + """\
    void check(float* a) { k<<<4, 64>>>(a, 100); }
    int main() {
      float* a = 0;
      check(a);
      dim3 grid(8), block(32);
      k<<<grid, block>>>(a, 700);
    }
    """
}


@pytest.mark.rule("D33")
def test_the_site_whose_geometry_is_the_profiled_launchs_binds_the_arguments(tmp_path):
    """`k` is launched with n = 100 on 4 x 64 threads and with n = 700 on 8 x 32: the
    profiled 8 x 32 launch counts 700 adds, the 4 x 64 one 100, each naming its site."""
    second = analyse(tmp_path, TWO_SITES, LaunchContext(block=(32, 1, 1), grid=(8, 1, 1)))
    assert second.resolved.flops["sp"] == 700 and not second.resolved.defaults
    assert "site 2 of 2 (main.cu:11): its geometry is the launch's" in site_note(second)
    first = analyse(tmp_path, TWO_SITES, LaunchContext(block=(64, 1, 1), grid=(4, 1, 1)))
    assert first.resolved.flops["sp"] == 100
    assert "site 1 of 2 (main.cu:6)" in site_note(first)


@pytest.mark.rule("D33")
def test_without_a_launch_geometry_the_first_site_binds_and_is_named(tmp_path):
    """`analyze` with no --block/--grid keeps the first site's values, and says so; a
    geometry no site has keeps them too."""
    plain = analyse(tmp_path, TWO_SITES, None)
    assert plain.resolved.flops["sp"] == 100
    assert "site 1 of 2 (main.cu:6): no launch geometry given" in site_note(plain)
    shown = render(explain(plain, load_gpu("a100")))
    assert "[D33] host values from launch site 1 of 2 (main.cu:6)" in shown
    other = analyse(tmp_path, TWO_SITES, LaunchContext(block=(128, 1, 1), grid=(2, 1, 1)))
    assert other.resolved.flops["sp"] == 100
    assert "no site's geometry is the launch's" in site_note(other)


@pytest.mark.rule("D33")
def test_a_site_whose_geometry_host_code_cannot_show_is_kept_over_a_contradicted_one(tmp_path):
    """The first site launches 4 x 64 threads, the second `(m + 31) / 32` blocks of 32 with
    `m` from a function the folder does not define: launched as 10 x 32, only the second
    can be the profiled launch; its `m` is then solved from the grid (D14), 320. The first
    exact match wins over a site that is only not contradicted."""
    files = {
        "main.cu": LOOP_KERNEL
        + """\
        int readSize(void);
        int main() {
          float* a = 0;
          k<<<4, 64>>>(a, 100);
          int m = readSize();
          k<<<(m + 31) / 32, 32>>>(a, m);
          k<<<10, 32>>>(a, 50);
        }
        """
    }
    exact = analyse(tmp_path, files, LaunchContext(block=(32, 1, 1), grid=(10, 1, 1)))
    assert exact.resolved.flops["sp"] == 50
    files["main.cu"] = files["main.cu"].replace("k<<<10, 32>>>(a, 50);", "")
    solved = analyse(tmp_path, files, LaunchContext(block=(32, 1, 1), grid=(10, 1, 1)))
    assert "site 2 of 2" in site_note(solved)
    assert solved.resolved.flops["sp"] == 320 and not solved.resolved.defaults


@pytest.mark.rule("D33")
def test_sites_of_the_same_geometry_bind_the_first(tmp_path):
    """Two launches of one geometry with different sizes: the first site's, as before."""
    files = {
        "main.cu": LOOP_KERNEL
        + """\
        int main() {
          float* a = 0;
          k<<<8, 32>>>(a, 300);
          k<<<8, 32>>>(a, 900);
        }
        """
    }
    kernel = analyse(tmp_path, files, LaunchContext(block=(32, 1, 1), grid=(8, 1, 1)))
    assert kernel.resolved.flops["sp"] == 300
    assert "site 1 of 2" in site_note(kernel)


@pytest.mark.rule("D34")
def test_the_profiled_launchs_ordinal_picks_among_sites_of_one_geometry(tmp_path):
    """Profiled as the kernel's second launch: after a warm-up launch outside any loop, the
    second is the looped site's (900); a first site in a loop makes both first launches
    (300). The sites of another geometry are not counted, and without an ordinal the first
    site binds, as D33 has it."""
    files = {
        "main.cu": LOOP_KERNEL
        + """\
        int main(int argc, char** argv) {
          float* a = 0;
          k<<<8, 32>>>(a, 300);
          k<<<2, 32>>>(a, 5);
          for (int r = 0; r < argc; r++) k<<<8, 32>>>(a, 900);
        }
        """
    }
    second = LaunchContext(block=(32, 1, 1), grid=(8, 1, 1), ordinal=2)
    looped = analyse(tmp_path, files, second)
    assert looped.resolved.flops["sp"] == 900
    assert "site 3 of 3" in site_note(looped) and "[D34]" in site_note(looped)
    plain = analyse(tmp_path, files, LaunchContext(block=(32, 1, 1), grid=(8, 1, 1)))
    assert plain.resolved.flops["sp"] == 300
    files["main.cu"] = files["main.cu"].replace(
        "k<<<8, 32>>>(a, 300);", "while (argc--) k<<<8, 32>>>(a, 300);"
    )
    assert analyse(tmp_path, files, second).resolved.flops["sp"] == 300


@pytest.mark.rule("D34")
def test_evaluate_counts_a_rows_kernel_at_the_protocols_second_launch(tmp_path):
    """A manifest row (gpuFLOPBench profiles a kernel's second launch): after a warm-up
    launch with n = 100 000 the row's launch is the loop's, n = 5000 adds per thread."""
    from roofcast.evaluation.counts import count_pairs
    from roofcast.evaluation.manifest import load_manifest
    from roofcast.evaluation.runner import analyze_rows

    source = tmp_path / "sources" / "warm-cuda"
    source.mkdir(parents=True)
    (source / "main.cu").write_text(
        LOOP_KERNEL
        + textwrap.dedent(
            """\
            int main(int argc, char** argv) {
              float* a = 0;
              k<<<8, 32>>>(a, 100000);
              for (int r = 0; r < 10; r++) k<<<8, 32>>>(a, 5000);
            }
            """
        )
    )
    manifest = tmp_path / "manifest.csv"
    manifest.write_text(
        "target,family,language,kernel,kernel_signature,omp_function,omp_line,block,grid,"
        "exe_args,xtime_ns,dram_bytes,sp_flops,dp_flops,int_ops,sp_ai,dp_ai,int_ai,label\n"
        'warm-cuda,warm,CUDA,k,"k(float *, int)",,,"(32, 1, 1)","(8, 1, 1)",,1000.0,'
        "1024,1280000,0,1000,1.0,0.0,1.0,Bandwidth\n"
    )
    [outcome] = analyze_rows(load_manifest(manifest), tmp_path / "sources", load_gpu("rtx3080"))
    pairs = {p.column: p.predicted for p in count_pairs(outcome)}
    assert pairs["sp_flops"] == pytest.approx(5000 * 8 * 32)
