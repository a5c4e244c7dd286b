"""`roofcast profile` without a GPU: the raw-CSV reader, the figures and labels computed from
the fixtures in tests/data/ncu (synthetic, see its README), names, the manifest format, the
ncu command line, and the one-line errors (driven by a stand-in `ncu` script)."""
from __future__ import annotations

import csv
import io
import json
import math
import os
import shutil
import stat
from pathlib import Path

import pytest
from roofcast.gpu_specs import load_gpu
from typer.testing import CliRunner

from roofcast.cli.main import app
from roofcast.profiling.figures import launch_figures
from roofcast.profiling.manifest import DATASET_COLUMNS, build_rows, to_csv
from roofcast.profiling.names import parse_omp_entry, short_name
from roofcast.profiling.ncu import EXTRA_METRICS, profile_command
from roofcast.profiling.rawcsv import RawCsvError, parse_number, parse_raw_csv, unit_scale

DATA = Path(__file__).parent / "data" / "ncu"
H100_CSV = DATA / "h100_roofline_raw.csv"
RTX_CSV = DATA / "rtx3080_gpuflopbench_raw.csv"
#: The header of gpuFLOPBench's dev.csv, which `roofcast evaluate` reads.
DEV_HEADER = ("target,family,language,kernel,kernel_signature,omp_function,omp_line,block,grid,"
              "exe_args,xtime_ns,dram_bytes,sp_flops,dp_flops,int_ops,sp_ai,dp_ai,int_ai,label")
needs_cxxfilt = pytest.mark.skipif(shutil.which("c++filt") is None, reason="no c++filt")


def _rows(path: Path = H100_CSV, **kwargs):
    return build_rows(parse_raw_csv(path.read_text()), target=kwargs.pop("target", "demo-cuda"),
                      **kwargs)


# --- reading the raw page -------------------------------------------------------------------

@pytest.mark.parametrize(
    ("unit", "scale"),
    [("B/s", 1.0), ("byte/second", 1.0), ("Gbyte/second", 1e9), ("KB", 1e3), ("ns", 1e-9),
     ("nsecond", 1e-9), ("usecond", 1e-6), ("msecond", 1e-3), ("cycle/nsecond", 1e9),
     ("cycle/s", 1.0), ("inst/cycle", 1.0), ("inst", 1.0), ("Minst", 1e6), ("%", 1.0),
     ("", 1.0)],
)
def test_unit_scale(unit: str, scale: float) -> None:
    assert unit_scale(unit) == pytest.approx(scale)


def test_numbers_with_separators_and_missing_values() -> None:
    assert parse_number("17,787,924,936") == 17787924936
    assert parse_number("57,631.04") == pytest.approx(57631.04)
    assert math.isnan(parse_number("n/a")) and math.isnan(parse_number(""))


def test_reads_every_launch_with_its_launch_columns() -> None:
    launches = parse_raw_csv(H100_CSV.read_text())
    assert [launch.launch_id for launch in launches] == ["0", "1", "2", "3", "4", "5"]
    first = launches[0]
    assert first.device == "NVIDIA H100 80GB HBM3"  # from device__attribute_display_name
    assert (first.block, first.grid) == ("(256, 1, 1)", "(65536, 1, 1)")
    assert first.metric("gpu__time_duration.sum") == pytest.approx(2e-4)  # 200000 ns


def test_skips_ncu_log_lines_and_program_output() -> None:
    text = RTX_CSV.read_text()
    assert text.startswith("==PROF==") and "PASS" in text
    launches = parse_raw_csv(text)
    assert len(launches) == 2
    # verbose units: 500.576 usecond, 658.392 Gbyte/second
    assert launches[0].metric("gpu__time_duration.sum") == pytest.approx(500.576e-6)
    assert launches[0].metric("dram__bytes.sum.per_second") == pytest.approx(658.392e9)


def test_not_a_raw_csv() -> None:
    with pytest.raises(RawCsvError):
        parse_raw_csv("hello\nworld\n")
    header_only = H100_CSV.read_text().splitlines()[:2]
    with pytest.raises(RawCsvError, match="no profiled launches"):
        parse_raw_csv("\n".join(header_only))


# --- figures and labels -----------------------------------------------------------------------

def test_h100_fixture_figures_worked_by_hand() -> None:
    """Each value below is rate x (1.5e9 cycle/s x duration), or a `.sum` counter."""
    figs = [launch_figures(launch) for launch in parse_raw_csv(H100_CSV.read_text())]
    triad, dgemm, hist, saxpy, hgemv, small = figs
    # triad: derived ffma x2 200/cycle over 3e5 cycles; 1.8e12 B/s over 200 us
    assert (triad.sp_flops, triad.dram_bytes, triad.int_ops) == pytest.approx((6e7, 3.6e8, 1.2e8))
    assert triad.duration_ns == pytest.approx(200000)
    # dgemm: (dadd 100 + dmul 50 + dfma x2 1000) x 1.5e6 cycles
    assert dgemm.dp_flops == pytest.approx(1.725e9) and dgemm.sp_flops == 0
    assert dgemm.intensity("dp") == pytest.approx(17.25)
    assert hist.intensity("int") == pytest.approx(20.0) and hist.sp_flops == 0
    assert saxpy.intensity("sp") == pytest.approx(0.1)
    # hgemv: the `.sum` counters win over rates: 1.2e6 + 2.4e6 + 2 x 4.8e7
    assert hgemv.hp_flops == pytest.approx(9.96e7)
    assert hgemv.intensity("hp") == pytest.approx(1.245)
    # the L2-resident triad: few DRAM bytes, so int AI 1.2e6 / 5e4 = 24
    assert (small.dram_bytes, small.intensity("int")) == pytest.approx((5e4, 24.0))
    assert all(f.missing == () for f in figs)


def test_labels_against_the_reported_gpu() -> None:
    rows = _rows()
    assert {r.gpu for r in rows} == {"h100_sxm"}
    assert [r.label for r in rows] == [
        "Bandwidth", "Compute", "Compute", "Bandwidth", "Bandwidth", "Compute"]


def test_gpu_override_changes_the_balance_points() -> None:
    """The histogram's int AI 20 crosses the H100's 9.99 but not the A10's 26.0."""
    rows = _rows(gpu=load_gpu("a10"))
    assert {r.gpu for r in rows} == {"a10"}
    assert rows[2].kernel == "histogram" and rows[2].label == "Bandwidth"
    assert rows[1].label == "Compute"  # DP AI 17.25 >> A10's 0.81


def test_reproduces_gpuflopbench_rows() -> None:
    """The rtx3080 fixture holds two dev.csv launches as ncu's rates; the figures and labels
    must come back as gpuFLOPBench computed them (dev.csv rows accuracy-cuda/accuracy_kernel
    and ace-cuda/allenCahn, copied below)."""
    expected = [
        {"kernel": "accuracy_kernel", "xtime_ns": 500576.0, "dram_bytes": 3.29575e08,
         "sp_flops": 0, "dp_flops": 0, "int_ops": 593883115.0, "int_ai": 1.8019655989373573,
         "label": "Bandwidth", "block": "(256, 1, 1)", "grid": "(2048, 1, 1)"},
        {"kernel": "allenCahn", "xtime_ns": 57631040.0, "dram_bytes": 3.64208e09,
         "sp_flops": 8.83009e08, "dp_flops": 1.50045e10, "int_ops": 17787924936.0,
         "dp_ai": 4.119760472562751, "label": "Compute", "block": "(8, 8, 4)",
         "grid": "(50, 50, 100)"},
    ]
    rows = _rows(RTX_CSV, target="ace-cuda")
    for row, want in zip(rows, expected, strict=True):
        assert row.gpu == "rtx3080"
        for key, value in want.items():
            got = getattr(row, key)
            if isinstance(value, str):
                assert got == value, key
            else:
                assert got == pytest.approx(value, rel=1e-4, abs=1e-9), key
    assert rows[1].kernel_signature.startswith("allenCahn(double (*)[400][400], ")


def test_missing_integer_counter_is_reported() -> None:
    text = H100_CSV.read_text().replace(
        "smsp__sass_thread_inst_executed_op_integer_pred_on.sum", "some__other_metric.sum")
    figures = launch_figures(parse_raw_csv(text)[0])
    assert figures.missing == ("int",) and figures.int_ops == 0


# --- names ----------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("signature", "name"),
    [("void triad<float>(T1 *, const T1 *, const T1 *, T1, int)", "triad"),
     ("histogram(const unsigned int *, unsigned int *, int)", "histogram"),
     ("void ns::inner::k<Foo<3>, 2>(int)", "k"),
     ("(anonymous namespace)::scale(float *)", "scale"),
     ("void adam<float, float>(T1 *, T1 *, T1 *, const T2 *)", "adam")],
)
def test_short_names(signature: str, name: str) -> None:
    assert short_name(signature) == name


@needs_cxxfilt
def test_openmp_entries_decode_function_and_line() -> None:
    entry = parse_omp_entry(
        "__omp_offloading_10309_2f0414b__Z14calculateForcePA400_A400_dS1_S1_S1_dddddd_l117")
    assert entry is not None and entry.line == 117
    assert entry.function == ("calculateForce(double (*) [400][400], double (*) [400][400], "
                              "double (*) [400][400], double (*) [400][400], double, double, "
                              "double, double, double, double)")
    plain = parse_omp_entry("__omp_offloading_10309_2f04138_main_l57")
    assert plain is not None and (plain.function, plain.line) == ("main", 57)
    assert parse_omp_entry("triad(float *)") is None


@needs_cxxfilt
def test_openmp_launch_becomes_an_omp_row() -> None:
    saxpy = _rows()[3]
    assert (saxpy.language, saxpy.omp_function, saxpy.omp_line) == (
        "OMP", "saxpy(int, float, float const*, float*)", 42)
    assert saxpy.kernel == saxpy.kernel_signature.strip()


# --- manifest -------------------------------------------------------------------------------

def test_manifest_has_dev_csv_columns_first_and_round_trips(tmp_path: Path) -> None:
    text = to_csv(_rows(exe_args=["1024", "a b"]))
    reader = csv.DictReader(io.StringIO(text))
    assert ",".join(reader.fieldnames[: len(DATASET_COLUMNS)]) == DEV_HEADER
    rows = list(reader)
    assert len(rows) == 6
    assert rows[0]["target"] == "demo-cuda" and rows[0]["family"] == "demo"
    assert rows[0]["exe_args"] == "1024 'a b'"
    assert float(rows[1]["dp_ai"]) == pytest.approx(17.25)
    assert rows[2]["label"] == "Compute" and rows[0]["omp_line"] == ""


# --- the command ----------------------------------------------------------------------------

def test_profile_command_line_is_an_argument_list() -> None:
    cmd = profile_command(["./app", "--size", "a b"], kernel_regex="triad|copy", ncu="ncu")
    assert cmd[:3] == ["ncu", "--set", "roofline"]
    assert cmd[cmd.index("--metrics") + 1] == ",".join(EXTRA_METRICS)
    assert "smsp__sass_thread_inst_executed_op_hfma_pred_on" in EXTRA_METRICS
    for flag in ("--csv", "--page", "raw", "--print-units", "base"):
        assert flag in cmd
    assert cmd[cmd.index("-k") + 1] == "regex:triad|copy"
    assert cmd[-3:] == ["./app", "--size", "a b"]


def test_dry_run_prints_the_command() -> None:
    result = CliRunner().invoke(app, ["profile", "--dry-run", "-k", "triad|copy", "--", "./app",
                                      "-n", "5"])
    assert result.exit_code == 0
    out = result.stdout.strip()
    assert " --set roofline " in out and " -k 'regex:triad|copy' " in out  # quoted for a shell
    assert out.endswith("./app -n 5")


def test_cli_on_the_fixture(tmp_path: Path) -> None:
    out = tmp_path / "manifest.csv"
    result = CliRunner(env={"COLUMNS": "200"}).invoke(
        app, ["profile", "--import", str(H100_CSV), "--target", "stream-cuda", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "Compute (dp)" in result.stdout and "Compute (int)" in result.stdout
    rows = list(csv.DictReader(out.open()))
    assert [r["label"] for r in rows].count("Compute") == 3
    assert {r["target"] for r in rows} == {"stream-cuda"}


def test_cli_json_with_gpu_override() -> None:
    result = CliRunner().invoke(app, ["profile", "--import", str(H100_CSV), "--gpu", "a10",
                                      "-f", "json"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data[2]["kernel"] == "histogram" and data[2]["label"] == "Bandwidth"


def _one_line_error(result, code: int, *needles: str) -> None:
    assert result.exit_code == code, result.output
    assert result.stderr.startswith("roofcast: error: ")
    assert result.stderr.strip().count("\n") == 0
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle in result.stderr


def test_cli_unknown_device_asks_for_gpu(tmp_path: Path) -> None:
    report = tmp_path / "raw.csv"
    report.write_text(H100_CSV.read_text().replace("NVIDIA H100 80GB HBM3", "NVIDIA B300"))
    result = CliRunner().invoke(app, ["profile", "--import", str(report)])
    _one_line_error(result, 2, "NVIDIA B300", "--gpu")


def test_cli_bad_inputs(tmp_path: Path) -> None:
    runner = CliRunner()
    _one_line_error(runner.invoke(app, ["profile"]), 2, "--import")
    _one_line_error(runner.invoke(app, ["profile", "--import", str(tmp_path / "none.csv")]), 2,
                    "no such report")
    (tmp_path / "junk.csv").write_text("a,b\n1,2\n")
    _one_line_error(runner.invoke(app, ["profile", "--import", str(tmp_path / "junk.csv")]), 2,
                    "no ncu raw CSV header")
    no_time = tmp_path / "no_time.csv"
    no_time.write_text(H100_CSV.read_text().replace("gpu__time_duration.sum", "x.sum"))
    _one_line_error(runner.invoke(app, ["profile", "--import", str(no_time)]), 2, "duration")
    _one_line_error(runner.invoke(app, ["profile", "--gpu", "h10", "--import", str(H100_CSV)]),
                    2, "did you mean h100")


# --- running ncu: a stand-in script plays ncu's part ------------------------------------------

FAKE_NCU = """#!/bin/sh
# Stand-in for ncu: records its argv, writes $FAKE_LOG_TEXT (a file) to the --log-file it got.
printf '%s\\n' "$@" > "$FAKE_ARGV"
log=""
while [ $# -gt 0 ]; do
  if [ "$1" = "--log-file" ]; then log="$2"; shift; fi
  shift
done
if [ -n "$log" ]; then cat "$FAKE_LOG_TEXT" > "$log"; else cat "$FAKE_LOG_TEXT"; fi
exit "${FAKE_EXIT:-0}"
"""


@pytest.fixture
def fake_ncu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Put a fake `ncu` first on PATH; returns a function that sets what it will print."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    ncu = bindir / "ncu"
    ncu.write_text(FAKE_NCU)
    ncu.chmod(ncu.stat().st_mode | stat.S_IEXEC)
    app_dir = tmp_path / "saxpy-cuda"
    app_dir.mkdir()
    program = app_dir / "main"
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(program.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FAKE_ARGV", str(tmp_path / "argv.txt"))

    def configure(log_text: str, exit_code: int = 0) -> Path:
        log = tmp_path / "log.txt"
        log.write_text(log_text)
        monkeypatch.setenv("FAKE_LOG_TEXT", str(log))
        monkeypatch.setenv("FAKE_EXIT", str(exit_code))
        return program

    return configure


def test_runs_ncu_and_reads_its_log(fake_ncu, tmp_path: Path) -> None:
    program = fake_ncu(H100_CSV.read_text())
    result = CliRunner().invoke(app, ["profile", "-f", "csv", "-k", "triad", "--", str(program),
                                      "64", "x y"])
    assert result.exit_code == 0, result.output
    argv = (tmp_path / "argv.txt").read_text().splitlines()
    assert argv[-3:] == [str(program), "64", "x y"]  # arguments stay separate, never a shell
    assert "regex:triad" in argv and "--log-file" in argv
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert rows[0]["target"] == "saxpy-cuda" and rows[0]["exe_args"] == "64 'x y'"


def test_imports_an_ncu_report_through_ncu(fake_ncu, tmp_path: Path) -> None:
    fake_ncu(RTX_CSV.read_text())
    report = tmp_path / "accuracy-cuda" / "run.ncu-rep"
    report.parent.mkdir()
    report.write_bytes(b"\x00binary")
    result = CliRunner().invoke(app, ["profile", "--import", str(report), "-f", "json"])
    assert result.exit_code == 0, result.output
    argv = (tmp_path / "argv.txt").read_text().splitlines()
    assert argv == ["--import", str(report), "--csv", "--page", "raw", "--print-units", "base"]
    rows = json.loads(result.stdout)
    assert [r["kernel"] for r in rows] == ["accuracy_kernel", "allenCahn"]
    assert rows[0]["target"] == "accuracy-cuda"  # the report's folder


def test_counter_permission_error_says_how_to_allow(fake_ncu) -> None:
    program = fake_ncu("==PROF== Connected to process 1\n==ERROR== ERR_NVGPUCTRPERM - The user "
                       "does not have permission to access NVIDIA GPU Performance Counters on "
                       "the target device 0.\n", exit_code=1)
    result = CliRunner().invoke(app, ["profile", "--", str(program)])
    _one_line_error(result, 3, "ERR_NVGPUCTRPERM", "NVreg_RestrictProfilingToAdminUsers=0",
                    "CAP_SYS_ADMIN")


def test_no_gpu(fake_ncu) -> None:
    program = fake_ncu("==PROF== Connected to process 1\nCUDA error: no CUDA-capable device is "
                       "detected\n==WARNING== No kernels were profiled.\n", exit_code=1)
    _one_line_error(CliRunner().invoke(app, ["profile", "--", str(program)]), 3, "no usable")


def test_failing_program(fake_ncu) -> None:
    log = H100_CSV.read_text() + "==ERROR== The application returned an error code (11).\n"
    program = fake_ncu(log, exit_code=1)
    runner = CliRunner()
    _one_line_error(runner.invoke(app, ["profile", "--", str(program)]), 3, "exit code 11")
    kept = runner.invoke(app, ["profile", "--ignore-exit-code", "-f", "json", "--",
                               str(program)])
    assert kept.exit_code == 0 and len(json.loads(kept.stdout)) == 6


def test_no_kernel_matched(fake_ncu) -> None:
    program = fake_ncu("==PROF== Connected to process 1\n==WARNING== No kernels were "
                       "profiled.\n")
    result = CliRunner().invoke(app, ["profile", "-k", "nothing", "--", str(program)])
    _one_line_error(result, 3, "no kernel matched regex 'nothing'")


def test_missing_ncu_and_missing_program(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    exe = tmp_path / "app"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    runner = CliRunner()
    _one_line_error(runner.invoke(app, ["profile", "--", str(exe)]), 3, "ncu", "not found")
    _one_line_error(runner.invoke(app, ["profile", "--", str(tmp_path / "nope")]), 2,
                    "program not found")


def test_manifest_is_read_by_evaluate(tmp_path: Path) -> None:
    """`roofcast evaluate` reads what `roofcast profile -o` writes."""
    from roofcast.evaluation.manifest import load_manifest
    from roofcast.profiling.manifest import write_manifest

    path = tmp_path / "manifest.csv"
    write_manifest(_rows(exe_args=["64"]), path)
    rows = load_manifest(path)
    assert [r.label for r in rows] == [
        "bandwidth", "compute", "compute", "bandwidth", "bandwidth", "compute"]
    assert rows[3].language == "OMP" and rows[3].omp_line == 42
    assert rows[0].block == (256, 1, 1) and rows[0].grid == (65536, 1, 1)
    assert rows[1].measured["dp_ai"] == pytest.approx(17.25)
