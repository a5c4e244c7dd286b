"""Writes the SYNTHETIC ncu raw-page CSV fixtures of this folder (see README.md).

No GPU was available where they were made, so they are built in the layout Nsight Compute's
`--csv --page raw` output has (launch columns, then metric columns sorted by name; a units
row; one row per launch) from round numbers chosen so the expected figures can be worked
out by hand in the tests. Run `python tests/data/ncu/synthesize.py` to rewrite them.
"""
from __future__ import annotations

import csv
import io
from pathlib import Path

HERE = Path(__file__).parent
SASS = "smsp__sass_thread_inst_executed_op_{}_pred_on"
LAUNCH_COLS = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context",
               "Stream", "Block Size", "Grid Size", "Device", "CC"]


def _rate(op: str) -> str:
    return SASS.format(op) + ".sum.per_cycle_elapsed"


def _metric_units(style: str) -> dict[str, str]:
    """Metric -> unit, in the roofline set's vocabulary (plus the --metrics counters)."""
    modern = style == "modern"
    units = {
        "device__attribute_display_name": "",
        "dram__bytes.sum.per_second": "B/s" if modern else "Gbyte/second",
        "gpu__time_duration.sum": "ns" if modern else "usecond",
        "sm__throughput.avg.pct_of_peak_sustained_elapsed": "%",
        "smsp__cycles_elapsed.avg.per_second": "cycle/s" if modern else "cycle/nsecond",
        SASS.format("integer") + ".sum": "inst",
    }
    for p in "dfh":
        units[f"derived__{SASS.format(p + 'fma')}_x2"] = "inst/cycle"
        for op in ("add", "mul", "fma"):
            units[_rate(p + op)] = "inst/cycle"
    if modern:  # the half-precision counters `roofcast profile` adds with --metrics
        for op in ("hadd", "hmul", "hfma"):
            units[SASS.format(op) + ".sum"] = "inst"
    return dict(sorted(units.items()))


def _fmt(value: float, sep: bool) -> str:
    if isinstance(value, str):
        return value
    if float(value).is_integer():
        return f"{int(value):,}" if sep else str(int(value))
    return f"{value:,}" if sep and abs(value) >= 1000 else f"{value:.6g}"


def _write(path: Path, style: str, launches: list[dict], preamble: str = "",
           trailer: str = "") -> None:
    units = _metric_units(style)
    header = LAUNCH_COLS + list(units)
    buf = io.StringIO()
    writer = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow(header)
    writer.writerow([""] * len(LAUNCH_COLS) + list(units.values()))
    for launch in launches:
        row = [launch.get(c, "") for c in LAUNCH_COLS]
        row += [_fmt(launch.get(m, 0), style != "modern") for m in units]
        writer.writerow(row)
    path.write_text(preamble + buf.getvalue() + trailer, encoding="utf-8")


def _h100(i: int, name: str, block: str, grid: str, ns: float, bps: float, **rates) -> dict:
    row = {"ID": str(i), "Process ID": "4242", "Process Name": "app", "Host Name": "127.0.0.1",
           "Kernel Name": name, "Context": "1", "Stream": "7", "Block Size": block,
           "Grid Size": grid, "Device": "0", "CC": "9.0",
           "device__attribute_display_name": "NVIDIA H100 80GB HBM3",
           "gpu__time_duration.sum": ns, "dram__bytes.sum.per_second": bps,
           "smsp__cycles_elapsed.avg.per_second": 1.5e9,
           "sm__throughput.avg.pct_of_peak_sustained_elapsed": 42.5}
    for key, value in rates.items():
        if key.endswith("_x2"):
            row[f"derived__{SASS.format(key[0] + 'fma')}_x2"] = value
        elif key.endswith("_sum"):
            row[SASS.format(key[:-4]) + ".sum"] = value
        else:
            row[_rate(key)] = value
    return row


def h100_fixture() -> None:
    launches = [
        _h100(0, "void triad<float>(T1 *, const T1 *, const T1 *, T1, int)", "(256, 1, 1)",
              "(65536, 1, 1)", 200000, 1.8e12, f_x2=200, ffma=100, integer_sum=1.2e8),
        _h100(1, "dgemm_tile(const double *, const double *, double *, int)", "(16, 16, 1)",
              "(64, 64, 1)", 1000000, 1e11, d_x2=1000, dfma=500, dadd=100, dmul=50,
              integer_sum=5e7),
        _h100(2, "histogram(const unsigned int *, unsigned int *, int)", "(512, 1, 1)",
              "(1024, 1, 1)", 50000, 2e12, integer_sum=2e9),
        _h100(3, "__omp_offloading_fd00_1a2b3c4__Z5saxpyifPKfPf_l42", "(128, 1, 1)",
              "(8192, 1, 1)", 80000, 1.5e12, f_x2=100, ffma=50, integer_sum=3e7),
        _h100(4, "hgemv(const __half *, const __half *, __half *, int)", "(256, 1, 1)",
              "(4096, 1, 1)", 40000, 2e12, hadd=20, hmul=40, hfma=800, h_x2=1600,
              hadd_sum=1.2e6, hmul_sum=2.4e6, hfma_sum=4.8e7, integer_sum=8e6),
        _h100(5, "void triad<float>(T1 *, const T1 *, const T1 *, T1, int)", "(256, 1, 1)",
              "(64, 1, 1)", 5000, 1e10, f_x2=20, ffma=10, integer_sum=1.2e6),
    ]
    _write(HERE / "h100_roofline_raw.csv", "modern", launches)


def rtx3080_fixture() -> None:
    """Two dev.csv rows (accuracy-cuda, ace-cuda allenCahn) turned back into the rates the
    roofline section reports, printed the older way: verbose units, thousands separators,
    ncu log lines and program output around the table (as in a captured stdout)."""
    def row(i: int, name: str, block: str, grid: str, ns: float, dram: float, dp: float,
            sp: float, ints: float) -> dict:
        cycles = 1.44 * ns  # cycle/nsecond x ns
        return {"ID": str(i), "Process ID": "777", "Process Name": "main",
                "Host Name": "127.0.0.1", "Kernel Name": name, "Context": "1", "Stream": "7",
                "Block Size": block, "Grid Size": grid, "Device": "0", "CC": "8.6",
                "device__attribute_display_name": "NVIDIA GeForce RTX 3080",
                "gpu__time_duration.sum": ns / 1e3,
                "dram__bytes.sum.per_second": float(f"{dram / ns:.6g}"),
                "smsp__cycles_elapsed.avg.per_second": 1.44,
                "sm__throughput.avg.pct_of_peak_sustained_elapsed": 12.3,
                _rate("dadd"): float(f"{0.2 * dp / cycles:.6g}"),
                _rate("dmul"): float(f"{0.1 * dp / cycles:.6g}"),
                f"derived__{SASS.format('dfma')}_x2": float(f"{0.7 * dp / cycles:.6g}"),
                _rate("dfma"): float(f"{0.35 * dp / cycles:.6g}"),
                _rate("fadd"): float(f"{0.5 * sp / cycles:.6g}"),
                _rate("fmul"): float(f"{0.5 * sp / cycles:.6g}"),
                SASS.format("integer") + ".sum": ints}
    launches = [
        row(0, "accuracy_kernel(int, int, int, const float *, const int *, int *)",
            "(256, 1, 1)", "(2048, 1, 1)", 500576.0, 3.29575e08, 0, 0, 593883115),
        row(1, "allenCahn(double (*)[400][400], double (*)[400][400], double (*)[400][400], "
            "double (*)[400][400], double (*)[400][400], double (*)[400][400], double, double, "
            "double, double, double, double, double, double)", "(8, 8, 4)", "(50, 50, 100)",
            57631040.0, 3.64208e09, 1.50045e10, 8.83009e08, 17787924936),
    ]
    preamble = ("==PROF== Connected to process 777 (/work/build/main)\n"
                "Running 10 iterations\n"
                "==PROF== Profiling \"accuracy_kernel\" - 0: 0%....50%....100% - 9 passes\n")
    trailer = "PASS\n==PROF== Disconnected from process 777\n"
    _write(HERE / "rtx3080_gpuflopbench_raw.csv", "verbose", launches, preamble, trailer)


if __name__ == "__main__":
    h100_fixture()
    rtx3080_fixture()
