"""Independent groups of files, analysed in parallel, give the report a serial run gives.

The tree below is several small programs side by side, the HeCBench layout: `prog-hip`
includes `kernels.h` which only `prog-cuda` has (found with -I../prog-cuda by its build),
`other-cuda` has its own `kernels.h`, and `shared/` holds a header two programs include.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import weakref
from pathlib import Path

import pytest
from roofcast.analyzer.includes import files_by_name, resolve_include
from roofcast.analyzer.partition import independent_groups
from roofcast.analyzer.sources import expand_paths
from roofcast.gpu_specs import load_gpu

from roofcast.pipeline import analyze_paths
from roofcast.predictors.roofline import RooflinePredictor

ROOT = Path(__file__).resolve().parents[1]

KERNELS_H = """\
#define SCALE 3.0f
__device__ float twice(float v) { return 2.0f * v; }
__global__ void scale(float* y, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = SCALE * twice(x[i]);
}
"""
MAIN = """\
#include "kernels.h"
int main(int argc, char** argv) {
  int n = atoi(argv[1]);
  float *x, *y;
  scale<<<(n + 255) / 256, 256>>>(y, x, n);
  return 0;
}
"""
OTHER_H = """\
#define SCALE 5.0
__global__ void scale(double* y, const double* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = SCALE * x[i] * x[i];
}
"""
SHARED_H = "#define TILE 16\n"
USES_SHARED = """\
#include "../shared/tile.h"
__global__ void tiled(float* a) { __shared__ float t[TILE]; t[threadIdx.x] = a[threadIdx.x]; }
"""
OMP = """\
void saxpy(float* y, const float* x, float a, int n) {
  #pragma omp target teams distribute parallel for map(tofrom: y[0:n]) map(to: x[0:n])
  for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];
}
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    files = {
        "prog-cuda/kernels.h": KERNELS_H,
        "prog-cuda/main.cu": MAIN,
        "prog-hip/main.cu": MAIN,  # its kernels.h lives in prog-cuda
        "other-cuda/kernels.h": OTHER_H,
        "other-cuda/main.cu": MAIN,
        "shared/tile.h": SHARED_H,
        "left-cuda/main.cu": USES_SHARED,
        "right-cuda/main.cu": USES_SHARED,
        "saxpy-omp/main.cpp": OMP,
        "saxpy-omp/util.cpp": "int helper(int a) { return a + 1; }\n",
    }
    for name, text in files.items():
        path = tmp_path / "src" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path / "src"


def _folders(group: list[Path], root: Path) -> set[str]:
    return {p.relative_to(root).parts[0] for p in group}


def test_an_include_found_only_by_name_picks_the_nearest_file_of_that_name(tree: Path):
    by_name = files_by_name(expand_paths([tree]))
    hip = resolve_include(tree / "prog-hip" / "main.cu", "kernels.h", [tree], by_name)
    other = resolve_include(tree / "other-cuda" / "main.cu", "kernels.h", [tree], by_name)
    assert hip == (tree / "prog-cuda" / "kernels.h").resolve()  # not other-cuda's
    assert other == (tree / "other-cuda" / "kernels.h").resolve()  # its own, next to it
    assert resolve_include(tree / "saxpy-omp" / "main.cpp", "absent.h", [tree], by_name) is None


def test_groups_join_folders_that_share_files_and_only_those(tree: Path):
    groups = independent_groups(expand_paths([tree]), [tree])
    as_folders = sorted(sorted(_folders(g, tree)) for g in groups)
    assert as_folders == [
        ["left-cuda", "right-cuda", "shared"],  # both include shared/tile.h
        ["other-cuda"],
        ["prog-cuda", "prog-hip"],  # prog-hip reads prog-cuda/kernels.h
        ["saxpy-omp"],  # a folder stays whole: launch and call sites are looked up there
    ]
    listed = [p for g in groups for p in g]
    assert sorted(listed) == sorted(expand_paths([tree])) and len(set(listed)) == len(listed)


def _report(tree: Path, jobs: int) -> dict:
    report = analyze_paths([tree], load_gpu("a100"), predictor=RooflinePredictor(), jobs=jobs)
    return report.to_json()


def test_parallel_report_equals_the_serial_one(tree: Path):
    serial, parallel = _report(tree, 1), _report(tree, 3)
    assert parallel == serial
    names = sorted((Path(k["file"]).parent.name, k["name"]) for k in serial["kernels"])
    assert names == [("left-cuda", "tiled"), ("other-cuda", "scale"), ("prog-cuda", "scale"),
                     ("right-cuda", "tiled"), ("saxpy-omp", "saxpy")]
    # each `scale` is counted with its own program's macros and device helper
    by_folder = {Path(k["file"]).parent.name: k for k in serial["kernels"] if k["name"] == "scale"}
    assert by_folder["prog-cuda"]["flops_per_thread"]["sp"] == 2  # SCALE * twice(.)
    assert by_folder["other-cuda"]["flops_per_thread"]["dp"] == 2


def test_parallel_report_equals_serial_on_the_bundled_corpus():
    corpus = ROOT / "kernels"
    serial = analyze_paths([corpus], load_gpu("h100"), jobs=1).to_json()
    parallel = analyze_paths([corpus], load_gpu("h100"), jobs=2).to_json()
    assert parallel == serial and len(serial["kernels"]) >= 60


def test_serial_analysis_lets_each_groups_parse_trees_go(tree: Path, monkeypatch):
    """Results keep no parse tree and the session's node caches last one group: over all of
    HeCBench's src/ that took the peak of a 1-process analysis from about 900 to 240 MB."""
    from roofcast.analyzer.session import AnalysisSession

    from roofcast import pipeline

    session = AnalysisSession()
    during: list[int] = []  # node cache entries once a group's kernel is counted
    real_resolve = pipeline.resolve_counts

    def resolve(*args, **kwargs):
        during.append(session.node_entries())
        return real_resolve(*args, **kwargs)

    monkeypatch.setattr(pipeline, "resolve_counts", resolve)
    with session:
        report = analyze_paths([tree], load_gpu("a100"), predictor=RooflinePredictor(), jobs=1)
    assert len(report.kernels) >= 4
    assert all(k.ir.ast is None and k.ir.context is None for k in report.kernels)
    assert len(during) == len(report.kernels) and min(during) > 0
    assert session.node_entries() == 0


def test_each_analysis_has_its_own_session(tmp_path: Path):
    """Nothing is kept between analyses, and nothing has to be emptied: a folder link
    re-pointed between two analyses in one process is followed afresh by the second."""
    for folder, name in (("a", "first"), ("b", "second")):
        (tmp_path / folder).mkdir()
        kernel = f"__global__ void {name}(float* x) {{ x[0] = 1; }}\n"
        (tmp_path / folder / "k.h").write_text(kernel)
    (tmp_path / "prog").mkdir()
    (tmp_path / "prog" / "main.cu").write_text('#include "inc/k.h"\n')
    link = tmp_path / "prog" / "inc"
    link.symlink_to(tmp_path / "a", target_is_directory=True)

    def found() -> list[tuple[str, str]]:
        report = analyze_paths([tmp_path / "prog"], load_gpu("a100"), predictor=RooflinePredictor())
        return [(Path(k.ir.file).parent.name, k.ir.name) for k in report.kernels]

    assert found() == [("a", "first")]
    link.unlink()
    link.symlink_to(tmp_path / "b", target_is_directory=True)
    assert found() == [("b", "second")]


def test_no_module_keeps_a_cache_between_analyses():
    """Caches are a session's (`analyzer.session`); a module may memoise only pure functions
    of immutable inputs, listed in ARCHITECTURE.md ("What an analysis remembers")."""
    import functools
    import importlib
    import pkgutil

    from roofcast.analyzer.session import NodeCache, RecentTexts

    packages = [
        "roofcast",
        *(f"roofcast.{p}" for p in ("analyzer", "features", "gpu_specs", "llm", "kernels")),
    ]
    names = set(packages)
    for package in packages:
        path = importlib.import_module(package).__path__
        names.update(info.name for info in pkgutil.walk_packages(path, f"{package}."))
    kept: list[str] = []
    memoised: set[str] = set()
    for name in sorted(n for n in names if not n.endswith("__main__")):
        try:
            module = importlib.import_module(name)
        except ImportError:  # an optional extra that is not installed
            continue
        for attribute, value in vars(module).items():
            if isinstance(value, NodeCache | RecentTexts):
                kept.append(f"{name}.{attribute}")
            if isinstance(value, functools._lru_cache_wrapper) and value.__module__ == name:
                memoised.add(f"{name}.{attribute}")
    assert kept == []
    documented = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    assert sorted(m for m in memoised if f"`{m.removeprefix('roofcast.')}`" not in documented) == []


def test_analyze_cli_jobs_option_gives_the_same_json(tree: Path):
    def run(*extra: str) -> str:
        proc = subprocess.run(
            [sys.executable, "-m", "roofcast.cli", "analyze", str(tree), "--gpu", "a100",
             "-f", "json", "--predictor", "roofline", *extra],
            capture_output=True, text=True, timeout=300,
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    one, two = run("--jobs", "1"), run("-j", "2")
    assert json.loads(one) == json.loads(two)
    assert len(json.loads(one)["kernels"]) == 5


def test_path_resolution_follows_file_and_folder_links(tmp_path: Path):
    from roofcast.analyzer.session import AnalysisSession
    from roofcast.analyzer.sources import resolved

    real = tmp_path / "real"
    real.mkdir()
    (real / "k.cu").write_text("__global__ void k() {}\n")
    (tmp_path / "linked").symlink_to(real, target_is_directory=True)
    (real / "alias.cu").symlink_to(real / "k.cu")
    target = (real / "k.cu").resolve()
    for _ in range(2):  # with no session, then memoised in one
        assert resolved(tmp_path / "linked" / "k.cu") == target
        assert resolved(real / "alias.cu") == target
        assert resolved(real / "sub" / ".." / "k.cu") == target
        with AnalysisSession():
            assert [resolved(tmp_path / "linked" / "k.cu") for _ in range(2)] == [target] * 2


EXPRESSIONS = [
    "n % 4 + 2*ceiling(n/blockDim_x)",
    "Piecewise((1, n > 0), (0, True))",
    "floor(log(n)/log(2)) + Max(n - 3, 0)",
    "sqrt(x) + 3/4*n + 0.5",
]


@pytest.mark.parametrize("text", EXPRESSIONS)
def test_worker_results_carry_any_expression_back(text: str):
    """Workers send sympy expressions as tuples, and any node kind without a tuple form
    (Mod, Piecewise, ...) the way sympy pickles it: the parent gets the same expression."""
    import io
    import pickle

    import sympy

    from roofcast.scheduler import _ExpressionPickler

    expr = sympy.sympify(text) + sympy.Dummy("d")
    buffer = io.BytesIO()
    _ExpressionPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump({"count": expr})
    back = pickle.loads(buffer.getvalue())["count"]
    assert back == expr and str(back) == str(expr)


def test_copies_of_a_file_share_one_parse_and_keep_their_own_paths(tmp_path: Path, monkeypatch):
    """The same text under two folders (`prog-cuda/`, `prog-hip/`) is expanded and parsed once
    in a process; each copy's kernel still reports its own file, with the same counts."""
    from roofcast.analyzer import parsing

    for folder in ("copy-cuda", "copy-hip"):
        (tmp_path / folder).mkdir()
        # a kernel name of its own: texts parsed by earlier tests may still be kept
        (tmp_path / folder / "kernels.cu").write_text(KERNELS_H.replace("scale", "scale_copy"))
    parsed: list[str] = []
    real_parse = parsing.parse

    def counting_parse(text, grammar="cuda"):
        parsed.append(text)
        return real_parse(text, grammar)

    monkeypatch.setattr(parsing, "parse", counting_parse)
    report = analyze_paths([tmp_path], load_gpu("a100"), predictor=RooflinePredictor(), jobs=1)
    assert sum("void scale_copy" in text for text in parsed) == 1
    kernels = report.to_json()["kernels"]
    assert sorted(Path(k["file"]).parent.name for k in kernels) == ["copy-cuda", "copy-hip"]
    assert kernels[0]["flops_per_thread"] == kernels[1]["flops_per_thread"]
    assert kernels[0]["flops_per_thread"]["sp"] == 2


def test_recent_texts_keep_the_last_texts_within_their_budget():
    from roofcast.analyzer.session import RecentTexts

    computed: list[str] = []
    recent: RecentTexts[str] = RecentTexts(budget=10)

    def get(text: str) -> str:
        return recent.get(text, len(text), lambda: computed.append(text) or text.upper())

    assert [get("aaaa"), get("bbbb"), get("aaaa")] == ["AAAA", "BBBB", "AAAA"]
    assert computed == ["aaaa", "bbbb"]  # the second "aaaa" was not computed again
    get("cccc")  # 12 characters > 10: the least recently used ("bbbb") goes
    get("bbbb")
    get("aaaa")
    assert computed == ["aaaa", "bbbb", "cccc", "bbbb", "aaaa"]
    get("x" * 11)  # larger than the whole budget: computed, never kept
    assert recent.size <= 10 and "x" * 11 not in recent.entries


def test_folders_named_alike_run_as_one_task(tree: Path):
    from roofcast.scheduler import batch_groups

    groups = independent_groups(expand_paths([tree]), [tree])
    tasks = batch_groups(groups)
    batches = [sorted(f for i in batch for f in _folders(groups[i], tree)) for batch in tasks]
    # left-cuda and right-cuda differ before the `-cuda`; other-cuda and prog-* likewise
    assert sorted(batches) == [
        ["left-cuda", "right-cuda", "shared"],
        ["other-cuda"],
        ["prog-cuda", "prog-hip"],
        ["saxpy-omp"],
    ]
    twins = [["a-cuda/k.cu"], ["a-hip/k.cu"], ["a-omp/sub/k.cpp"], ["b-cuda/k.cu"]]
    as_paths = [[Path("src", *p.split("/")) for p in g] for g in twins]
    assert batch_groups(as_paths) == [[0, 1], [2], [3]]


def test_a_counter_is_freed_without_the_cycle_collector():
    """Counting allocates a counter per kernel; with no reference cycle it goes as soon as the
    kernel is counted, not at the next (full) garbage collection."""
    import gc

    from roofcast.analyzer import discover
    from roofcast.features import count_features

    kernel = discover([ROOT / "kernels"]).kernels[0]
    gc.collect()
    flags = gc.get_debug()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        count_features(kernel)
        gc.collect()
        cyclic = {type(o).__name__ for o in gc.garbage}
    finally:
        gc.set_debug(flags)
        gc.garbage.clear()
    assert "KernelLowering" not in cyclic and "FeatureVector" not in cyclic


def test_analysis_puts_off_full_collections_and_restores_the_callers_settings(tree: Path):
    import gc

    before = gc.get_threshold()
    seen: list[tuple[int, int, int]] = []
    analyze_paths(
        [tree], load_gpu("a100"), predictor=RooflinePredictor(), jobs=1,
        on_group_done=lambda done, total: seen.append(gc.get_threshold()),
    )
    assert seen and all(t[:2] == before[:2] and t[2] >= 1000 for t in seen)
    assert gc.get_threshold() == before


class _Cyclic:
    """An object in a reference cycle with itself: only the cycle collector frees it."""

    def __init__(self) -> None:
        self.me = self


class _CycleJob:
    """A job whose every group leaves a reference cycle behind, and notes whether automatic
    collection was on while the group ran."""

    def __init__(self) -> None:
        self.collecting: list[bool] = []
        self.left: list = []

    def __call__(self, group):
        self.collecting.append(gc.isenabled())
        self.left.append(weakref.ref(_Cyclic()))
        return group

    def judge(self, outcomes) -> None:
        pass


def test_no_collection_runs_within_a_group_and_its_cycles_go_when_it_ends():
    from roofcast.scheduler import run_groups

    job = _CycleJob()
    alive: list[bool] = []
    assert gc.isenabled()
    run_groups(
        job, [[1], [2], [3]], jobs=1,
        on_group_done=lambda done, total: alive.append(job.left[done - 1]() is not None),
    )
    assert job.collecting == [False, False, False]
    assert alive == [False, False, False]  # freed when its group ended, no later
    assert gc.isenabled()


def test_a_caller_that_turned_collection_off_keeps_it_off():
    from roofcast.scheduler import run_groups

    job = _CycleJob()
    gc.disable()
    try:
        run_groups(job, [[1], [2]], jobs=1)
        assert not gc.isenabled()
        assert all(ref() is not None for ref in job.left)  # nothing collected for it
    finally:
        gc.enable()
        gc.collect()


_FORKS = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="patches reach by fork")


def _fail_in_started_processes(monkeypatch, failure) -> None:
    """Every group analysed outside this process runs `failure()` (fork copies the patch);
    this process is slowed down so that the others surely take some groups."""
    import os
    import time

    import roofcast.pipeline as pipeline

    parent, discover = os.getpid(), pipeline.discover_files

    def discover_here(*args, **kwargs):
        if os.getpid() != parent:
            failure()
        else:
            time.sleep(0.1)
        return discover(*args, **kwargs)

    monkeypatch.setattr(pipeline, "discover_files", discover_here)


@_FORKS
def test_an_error_in_a_worker_process_is_raised_here(tree: Path, monkeypatch):
    """An error outside any one file's analysis (here: sending the results back; a file's
    own failure is one of the report's problems, tests/test_hardening_nesting.py)."""
    import roofcast.scheduler as scheduler

    def boom(self, obj: object) -> object:
        raise ValueError("boom in a worker")

    _fail_in_started_processes(monkeypatch, lambda: None)
    monkeypatch.setattr(scheduler._ExpressionPickler, "reducer_override", boom)
    with pytest.raises(ValueError, match="boom in a worker"):
        _report(tree, 3)


@_FORKS
def test_a_worker_process_that_dies_is_reported_not_waited_for(tree: Path, monkeypatch):
    import os

    _fail_in_started_processes(monkeypatch, lambda: os._exit(7))
    with pytest.raises(RuntimeError, match="ended without its results .exit code 7"):
        _report(tree, 3)


EVAL = ROOT / "tests" / "data" / "eval"


def _without_times(summary: dict) -> dict:
    summary.pop("seconds", None)
    return summary


def test_evaluate_in_processes_scores_as_one_process():
    """`evaluate --jobs N` spreads the manifest's targets over processes, as `analyze`
    spreads groups of files: the scores and every row's counts are the serial run's."""
    from roofcast.evaluation.manifest import load_manifest
    from roofcast.evaluation.runner import evaluate

    rows = load_manifest(EVAL / "manifest.csv")
    runs = [
        evaluate(rows, EVAL / "sources", load_gpu("rtx3080"), RooflinePredictor(), jobs=jobs)
        for jobs in (1, 3)
    ]
    serial, parallel = (_without_times(run.to_json()) for run in runs)
    assert parallel == serial and serial["n"] >= 8
    for one, other in zip(runs[0].outcomes, runs[1].outcomes, strict=True):
        assert one.row == other.row and one.match.to_json() == other.match.to_json()
        assert (one.result is None) == (other.result is None) and one.error == other.error
        if one.result is not None and other.result is not None:
            assert one.result.to_json() == other.result.to_json()
            assert other.result.ir.ast is None  # came back from a process: no parse tree


def test_a_kernel_met_by_two_targets_keeps_its_first_rows_counts_in_processes(tmp_path: Path):
    """A kernel in a header two targets include is one (kernel, launch) pair: counted once
    in one process (at its first row), and the first row's count wins in several."""
    from roofcast.evaluation.manifest import load_manifest
    from roofcast.evaluation.runner import analyze_rows

    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "k.h").write_text(
        "__global__ void k(float* y, const float* x, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) y[i] = SCALE * x[i];\n}\n"
    )
    for target, scale in (("a-cuda", "2.0f"), ("b-cuda", "2.0")):
        (tmp_path / target).mkdir()
        (tmp_path / target / "main.cu").write_text(
            f'#define SCALE {scale}\n#include "../shared/k.h"\n'
            "int main() { float *x, *y; k<<<16, 256>>>(y, x, 4096); return 0; }\n"
        )
    header = (EVAL / "manifest.csv").read_text().splitlines()[0]
    line = (
        '{t},fam,CUDA,k,"k(float *, const float *, int)",,,"(256, 1, 1)","(16, 1, 1)",,'
        "1000.0,4096,4096,0,64,1.0,0.0,0.015625,Bandwidth"
    )
    manifest = tmp_path / "manifest.csv"
    body = [header] + [line.format(t=t) for t in ("b-cuda", "a-cuda", "b-cuda")]
    manifest.write_text("\n".join(body) + "\n")
    rows = load_manifest(manifest)
    gpu = load_gpu("rtx3080")
    serial = analyze_rows(rows, tmp_path, gpu, RooflinePredictor(), jobs=1)
    parallel = analyze_rows(rows, tmp_path, gpu, RooflinePredictor(), jobs=2)
    assert all(o.result is not None for o in serial)
    for run in (serial, parallel):  # one pair, one count: the first row's (target b-cuda)
        assert run[0].result is run[1].result is run[2].result
        assert run[1].match.kernel is not None and run[1].match.kernel.file.endswith("k.h")
    assert [o.result.to_json() for o in parallel] == [o.result.to_json() for o in serial]
    assert [o.match.to_json() for o in parallel] == [o.match.to_json() for o in serial]


def test_training_data_is_the_same_in_processes():
    import numpy as np

    from roofcast.evaluation.manifest import load_manifest
    from roofcast.training.fit import build_dataset

    rows = load_manifest(EVAL / "manifest.csv")
    gpu = load_gpu("rtx3080")
    serial = build_dataset(rows, EVAL / "sources", gpu, jobs=1)
    parallel = build_dataset(rows, EVAL / "sources", gpu, jobs=2)
    assert len(serial.labels) >= 8 and serial.skipped == parallel.skipped
    assert np.array_equal(serial.X, parallel.X) and np.array_equal(serial.Y, parallel.Y)


def test_evaluate_cli_jobs_option_gives_the_same_json():
    def run(*extra: str) -> dict:
        proc = subprocess.run(
            [sys.executable, "-m", "roofcast.cli", "evaluate", "-m", str(EVAL / "manifest.csv"),
             "-s", str(EVAL / "sources"), "-g", "rtx3080", "-p", "roofline", "-f", "json",
             "--quiet", *extra],
            capture_output=True, text=True, timeout=300,
        )
        assert proc.returncode == 0, proc.stderr
        return _without_times(json.loads(proc.stdout))

    assert run("--jobs", "1") == run("-j", "2")
