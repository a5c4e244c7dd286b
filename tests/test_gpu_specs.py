"""GPU machine files: derived peaks against vendor datasheets, the RTX 3080 balance points the
gpuFLOPBench labels use, names and aliases, and `roofcast gpus`."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from roofcast.gpu_specs import CLASSES, UnknownGPUError, list_gpus, load_gpu
from typer.testing import CliRunner

from roofcast.cli.main import app

DEV_CSV = Path(__file__).resolve().parents[2] / "shared/datasets/gpuflopbench-rtx3080/dev.csv"

#: Vendor peaks, TFLOP/s, non-tensor (AMD: vector), and DRAM bandwidth, GB/s, copied from the
#: datasheets / whitepapers cited in the TOML files. Kept here, apart from the spec files, so
#: a wrong lane count, SM count or clock in a file shows up as a mismatch.
DATASHEET = {
    "v100_sxm2": {"dp": 7.8, "sp": 15.7, "bw": 900},
    "t4": {"sp": 8.1, "bw": 320},
    "a100_sxm4_40gb": {"dp": 9.7, "sp": 19.5, "hp": 78, "int": 19.5, "bw": 1555},
    "a100_sxm4_80gb": {"dp": 9.7, "sp": 19.5, "hp": 78, "int": 19.5, "bw": 2039},
    "a100_pcie_40gb": {"dp": 9.7, "sp": 19.5, "bw": 1555},
    "a100_pcie_80gb": {"dp": 9.7, "sp": 19.5, "bw": 1935},
    "a10": {"sp": 31.2, "bw": 600},
    "l4": {"sp": 30.3, "bw": 300},
    "l40s": {"sp": 91.6, "bw": 864},
    "h100_sxm": {"dp": 34, "sp": 67, "bw": 3350},
    "h100_pcie": {"dp": 26, "sp": 51, "bw": 2000},
    "h200": {"dp": 34, "sp": 67, "bw": 4800},
    "rtx4090": {"dp": 1.3, "sp": 82.6, "hp": 82.6, "bw": 1008},
    "mi250x": {"dp": 47.9, "sp": 47.9, "bw": 3276.8},
    "mi300x": {"dp": 81.7, "sp": 163.4, "bw": 5300},
}
REQUIRED = set(DATASHEET) | {"rtx3080"}


def test_every_required_gpu_is_bundled() -> None:
    assert {g.key for g in list_gpus()} >= REQUIRED


@pytest.mark.parametrize("key", sorted(DATASHEET))
def test_derived_peaks_match_the_datasheet(key: str) -> None:
    gpu = load_gpu(key)
    expected = DATASHEET[key]
    assert gpu.bandwidth_gbs == pytest.approx(expected["bw"], rel=0.005)
    for cls in ("sp", "dp", "hp", "int"):
        if cls in expected:
            # Within 2%: vendors round (H100 SXM FP64 is 33.45 at 1.98 GHz, sold as "34").
            assert gpu.peaks[cls] / 1e12 == pytest.approx(expected[cls], rel=0.02), cls


def test_a100_and_h100_headline_numbers() -> None:
    a100, h100 = load_gpu("a100"), load_gpu("h100")
    assert a100.peaks["dp"] / 1e12 == pytest.approx(9.7, rel=0.01)
    assert a100.peaks["sp"] / 1e12 == pytest.approx(19.5, rel=0.01)
    assert h100.peaks["sp"] / 1e12 == pytest.approx(67, rel=0.01)
    assert h100.bandwidth_bytes == pytest.approx(3.35e12)
    # balance = peak / bandwidth: 66.9 TFLOP/s over 3.35 TB/s
    assert h100.balance_points["sp"] == pytest.approx(66.908e12 / 3.35e12, rel=1e-3)


def test_files_state_their_datasheet_figures_consistently() -> None:
    """The figures each TOML quotes (datasheet_peak_tflops) agree with what it derives."""
    lane_to_class = {"fp32": "sp", "fp64": "dp", "fp16": "hp", "int32": "int"}
    checked = 0
    for gpu in list_gpus():
        for lane, tflops in gpu.datasheet_peak_tflops.items():
            assert gpu.peaks[lane_to_class[lane]] / 1e12 == pytest.approx(tflops, rel=0.02), (
                gpu.key, lane)
            checked += 1
    assert checked >= 20


def test_rtx3080_matches_the_gpuflopbench_readme() -> None:
    gpu = load_gpu("rtx3080")
    assert gpu.clock == "base" and gpu.clock_ghz == 1.44
    peaks = {c: v / 1e12 for c, v in gpu.peaks.items()}
    assert round(peaks["sp"], 2) == 25.07
    assert round(peaks["dp"], 3) == 0.392
    assert round(peaks["int"], 2) == 12.53
    balance = gpu.balance_points
    assert round(balance["sp"], 2) == 32.97
    assert round(balance["dp"], 3) == 0.515
    assert round(balance["int"], 2) == 16.49


@pytest.mark.skipif(not DEV_CSV.is_file(), reason="gpuFLOPBench dev.csv not present")
def test_rtx3080_balance_points_reproduce_every_dev_label() -> None:
    balance = load_gpu("rtx3080").balance_points
    rows = list(csv.DictReader(DEV_CSV.open()))
    wrong = [
        r["kernel"] for r in rows
        if ("Compute" if any(float(r[f"{c}_ai"]) >= balance[c] for c in ("sp", "dp", "int"))
            else "Bandwidth") != r["label"]
    ]
    assert len(rows) > 1000 and wrong == []


def test_every_file_is_complete_and_cited() -> None:
    for gpu in list_gpus():
        assert set(CLASSES) <= set(gpu.peaks), gpu.key
        assert gpu.sms > 0 and 0 < gpu.base_clock_ghz <= gpu.boost_clock_ghz, gpu.key
        assert gpu.l2_mb > 0 and gpu.smem_per_sm_kb > 0, gpu.key
        assert {"datasheet", "whitepaper"} & set(gpu.source), gpu.key
        if gpu.vendor == "nvidia":
            assert "throughput" in gpu.source, gpu.key  # the programming guide's table
            assert not gpu.peak_override_tops, gpu.key
        else:
            assert gpu.peak_override_tops, gpu.key  # AMD: the datasheet's vector peaks


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("a100", "a100_sxm4_80gb"),
        ("A100-40GB", "a100_sxm4_40gb"),
        ("a100 pcie", "a100_pcie_80gb"),
        ("h100", "h100_sxm"),
        ("H100_PCIe", "h100_pcie"),
        ("rtx3080", "rtx3080"),
        ("NVIDIA GeForce RTX 3080", "rtx3080"),
        ("v100", "v100_sxm2"),
        ("mi300x", "mi300x"),
        # names the driver / ncu's device__attribute_display_name report
        ("NVIDIA H100 80GB HBM3", "h100_sxm"),
        ("NVIDIA A100-SXM4-40GB", "a100_sxm4_40gb"),
        ("NVIDIA A100 80GB PCIe", "a100_pcie_80gb"),
        ("Tesla V100-SXM2-32GB", "v100_sxm2"),
        ("Tesla T4", "t4"),
    ],
)
def test_names_and_aliases(name: str, key: str) -> None:
    assert load_gpu(name).key == key


def test_no_name_is_shared_by_two_gpus() -> None:
    owners: dict[str, str] = {}
    for gpu in list_gpus():
        for name in {gpu.key, gpu.name, *gpu.aliases, *gpu.device_names}:
            norm = name.lower().replace("_", "-").replace(" ", "-")
            assert owners.setdefault(norm, gpu.key) == gpu.key, name


def test_unknown_name_suggests_the_nearest() -> None:
    with pytest.raises(UnknownGPUError, match="did you mean h100"):
        load_gpu("h10")
    with pytest.raises(UnknownGPUError) as err:
        load_gpu("rtx3090")
    assert "rtx3080" in str(err.value) and "\n" not in str(err.value)


def test_gpus_command_lists_every_gpu() -> None:
    result = CliRunner(env={"COLUMNS": "250"}).invoke(app, ["gpus"])
    assert result.exit_code == 0
    for gpu in list_gpus():
        assert gpu.key in result.stdout
    assert "32.97" in result.stdout and "16.49" in result.stdout


def test_gpus_command_json() -> None:
    result = CliRunner().invoke(app, ["gpus", "--format", "json", "rtx3080", "h100"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert [g["key"] for g in data] == ["rtx3080", "h100_sxm"]
    assert data[0]["balance_points"]["sp"] == pytest.approx(32.97, abs=0.005)
    assert data[1]["bandwidth_gbs"] == 3350 and "h100" in data[1]["aliases"]


def test_gpus_command_unknown_name_is_one_line() -> None:
    result = CliRunner().invoke(app, ["gpus", "a1000"])
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0
    assert "did you mean" in result.stderr and "a100" in result.stderr
    assert "Traceback" not in result.output
