"""Baseline file and the change rules of `hook --fail-on change`, on report dicts."""
from __future__ import annotations

import json

import pytest
from workflow_reports import SPECS, report

from roofcast.workflow import baseline as bl
from roofcast.workflow import hook as hk


def _baseline(tmp_path, specs=SPECS, gpu="a100"):
    rep = report(gpu, specs, tmp_path)
    data = bl.update(bl.empty_baseline(), {rep["gpu"]["key"]: rep}, tmp_path, ["."])
    return data, rep["gpu"]["key"]


def _with(specs, name, **changes):
    out = []
    for spec in specs:
        n, f, line, load, store, ops = spec
        if n == name:
            line = changes.get("line", line)
            load = changes.get("load", load)
            ops = changes.get("ops", ops)
        out.append((n, f, line, load, store, ops))
    return out


def test_baseline_records_verdict_and_intensities_keyed_by_file_and_name(tmp_path):
    data, key = _baseline(tmp_path)
    path = tmp_path / bl.DEFAULT_BASELINE
    bl.save(data, path)
    back = bl.load(path)
    kernels = back["gpus"][key]["kernels"]
    assert set(kernels) == {"src/blas.cu::saxpy", "src/poly.cu::dp_poly", "src/blas.cu::sgemm_tile"}
    dp = kernels["src/poly.cu::dp_poly"]
    assert dp["bound"] == "bandwidth" and dp["dominant"] == "dp"
    assert dp["intensity"]["dp"] == pytest.approx(1.0)
    assert kernels["src/blas.cu::sgemm_tile"]["bound"] == "compute"
    # sorted, indented: a committed file that diffs line by line
    assert path.read_text().splitlines()[0] == "{" and json.loads(path.read_text()) == back


def test_moving_a_kernel_down_its_file_is_no_change(tmp_path):
    data, key = _baseline(tmp_path)
    moved = report("a100", _with(SPECS, "saxpy", line=90), tmp_path)
    assert bl.diff(data["gpus"][key], moved, tmp_path, "a100") == []


def test_flip_names_kernel_file_line_before_and_after(tmp_path):
    data, key = _baseline(tmp_path)
    # sgemm loses its reuse: 64 -> 4096 bytes loaded per thread, sp AI 60 -> ~1: bandwidth-bound
    edited = report("a100", _with(SPECS, "sgemm_tile", load=4096, line=33), tmp_path)
    (change,) = bl.diff(data["gpus"][key], edited, tmp_path, "a100")
    assert change.kind == "flip" and change.fails
    assert change.line().startswith("src/blas.cu:33: sgemm_tile [a100] compute-bound -> "
                                    "bandwidth-bound (sp AI 60.2 -> 0.999)")


def test_intensity_drop_beyond_threshold_fails_below_does_not(tmp_path):
    data, key = _baseline(tmp_path)
    section = data["gpus"][key]
    # sgemm stays compute-bound on the A100 (balance 9.56) but its AI falls 60.2 -> 30.6 (-49%)
    halved = report("a100", _with(SPECS, "sgemm_tile", load=130), tmp_path)
    (change,) = bl.diff(section, halved, tmp_path, "a100", threshold_pct=25)
    assert change.kind == "drop" and "sp intensity fell 49%" in change.message
    assert "still compute-bound" in change.message
    assert bl.diff(section, halved, tmp_path, "a100", threshold_pct=60) == []


def test_new_and_removed_kernels_are_reported_but_do_not_fail(tmp_path):
    data, key = _baseline(tmp_path)
    specs = [s for s in SPECS if s[0] != "saxpy"] + [("daxpy", "src/blas.cu", 50, 16, 8, {"dp": 2})]
    changes = bl.diff(data["gpus"][key], report("a100", specs, tmp_path), tmp_path, "a100",
                      files=["src/blas.cu"])
    assert {(c.kind, c.name) for c in changes} == {("new", "daxpy"), ("removed", "saxpy")}
    assert not any(c.fails for c in changes)


def test_same_name_twice_in_a_file_gets_ordinal_keys(tmp_path):
    specs = [("region", "omp.cpp", 10, 8, 4, {"sp": 1}), ("region", "omp.cpp", 40, 8, 4,
                                                         {"sp": 1000})]
    data, key = _baseline(tmp_path, specs)
    kernels = data["gpus"][key]["kernels"]
    assert kernels["omp.cpp::region"]["line"] == 10
    assert kernels["omp.cpp::region#2"]["bound"] == "compute"


def test_update_replaces_only_the_analysed_files(tmp_path):
    data, key = _baseline(tmp_path)
    only_blas = [s for s in SPECS if s[1] == "src/blas.cu" and s[0] != "saxpy"]
    rep = report("a100", only_blas, tmp_path)
    data = bl.update(data, {key: rep}, tmp_path, ["src/blas.cu"])
    assert set(data["gpus"][key]["kernels"]) == {"src/poly.cu::dp_poly", "src/blas.cu::sgemm_tile"}


def test_missing_or_foreign_baseline_is_a_one_line_error(tmp_path):
    with pytest.raises(bl.BaselineError, match="roofcast baseline update"):
        bl.load(tmp_path / "nope.json")
    (tmp_path / "x.json").write_text('{"some": "thing"}')
    with pytest.raises(bl.BaselineError, match="not a roofcast baseline"):
        bl.load(tmp_path / "x.json")


def test_hook_change_mode_fails_only_on_flips_and_drops(tmp_path):
    data, key = _baseline(tmp_path)
    files = ["src/blas.cu", "src/poly.cu"]
    same = {"a100": report("a100", SPECS, tmp_path)}
    ok = hk.check_changes(same, {"a100": key}, data, tmp_path, 25, files, "b.json")
    assert not ok.failed and ok.lines == []
    flipped = {"a100": report("a100", _with(SPECS, "sgemm_tile", load=4096), tmp_path)}
    bad = hk.check_changes(flipped, {"a100": key}, data, tmp_path, 25, files, "b.json")
    assert bad.failed and len(bad.lines) == 1 and "sgemm_tile" in bad.lines[0]
    with pytest.raises(bl.BaselineError, match="no entry for GPU 'h100'"):
        hk.check_changes({"h100": same["a100"]}, {"h100": "h100_sxm"}, data, tmp_path, 25,
                         files, "b.json")


@pytest.mark.parametrize("fail_on,flagged", [("bandwidth", {"saxpy"}), ("compute",
                                             {"dp_poly", "sgemm_tile"}), ("never", set())])
def test_hook_verdict_modes_flag_the_right_kernels(tmp_path, fail_on, flagged):
    reports = {"rtx3080": report("rtx3080", SPECS, tmp_path)}
    out = hk.check_verdicts(reports, fail_on, tmp_path)
    assert len(out.lines) == 3
    hits = {line.split(": ")[1].split(" ")[0] for line in out.lines if "<- fails" in line}
    assert hits == flagged and out.failed == bool(flagged)
    dp_line = next(line for line in out.lines if "dp_poly" in line)
    assert dp_line.startswith("src/poly.cu:5: dp_poly [rtx3080] compute-bound (dp AI 1 >= 0.515)")
