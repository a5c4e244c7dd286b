"""Read Nsight Compute's raw-page CSV (`ncu --csv --page raw`) into one record per kernel launch.

The raw page is wide: a header row (launch columns such as "ID", "Kernel Name", "Block Size",
then one column per metric), a units row, then one row per profiled launch. Values are
converted to base units (bytes, seconds, cycles, instructions) whatever `--print-units` was
used, so a CSV exported without `--print-units base` reads the same. ncu's own log lines
(`==PROF==`, `==WARNING==`) and the program's output around the table are skipped.
"""
from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass, field

#: Columns that describe the launch rather than hold a metric.
LAUNCH_COLUMNS = frozenset(
    {
        "ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Kernel Time",
        "Context", "Stream", "Block Size", "Grid Size", "Device", "CC",
    }
)

_PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
           "n": 1e-9, "u": 1e-6, "m": 1e-3}
_TIME = {"s": 1.0, "second": 1.0, "ns": 1e-9, "nsecond": 1e-9, "us": 1e-6, "usecond": 1e-6,
         "ms": 1e-3, "msecond": 1e-3}
_UNIT_TOKEN = re.compile(
    r"^([KMGTPnum]?)(byte|B|cycle|inst|warp|sector|request|thread|block|Hz)s?$"
)


class RawCsvError(ValueError):
    """The text is not an ncu raw-page CSV (no header row, or no launch rows)."""


@dataclass
class NcuLaunch:
    """One profiled kernel launch: what ncu says about it, metrics in base units."""

    launch_id: str
    kernel_name: str
    block: str = ""
    grid: str = ""
    device: str = ""
    compute_capability: str = ""
    process: str = ""
    metrics: dict[str, float] = field(default_factory=dict)

    def metric(self, name: str) -> float | None:
        """A metric's value, or None when ncu did not report it (absent, n/a, empty)."""
        value = self.metrics.get(name)
        return None if value is None or math.isnan(value) else value


def unit_scale(unit: str) -> float:
    """Factor that turns a value printed in `unit` into base units ('Gbyte/second' -> 1e9)."""
    unit = unit.strip()
    if not unit or unit in ("%", "(!) n/a"):
        return 1.0
    numerator, _, denominator = unit.partition("/")
    return _token_scale(numerator) / (_token_scale(denominator) if denominator else 1.0)


def _token_scale(token: str) -> float:
    token = token.strip()
    if token in _TIME:
        return _TIME[token]
    if len(token) > 1 and token[0] in _PREFIX and token[1:] in _TIME and _TIME[token[1:]] == 1.0:
        return _PREFIX[token[0]]
    match = _UNIT_TOKEN.match(token)
    return _PREFIX[match.group(1)] if match else 1.0


def parse_number(text: str) -> float:
    """ncu prints '1,234,567.5', 'n/a' or ''; NaN stands for 'not reported'."""
    cleaned = text.strip().replace(",", "")
    if not cleaned or cleaned.lower() in ("n/a", "nan", "(!) n/a"):
        return math.nan
    try:
        return float(cleaned)
    except ValueError:
        return math.nan


def _table_lines(text: str) -> list[str]:
    """The CSV lines of the raw table: from the header row on, quoted lines only."""
    lines = text.splitlines()
    for start, line in enumerate(lines):
        if line.startswith('"ID",'):
            return [ln for ln in lines[start:] if ln.startswith('"')]
    raise RawCsvError("no ncu raw CSV header (a line starting with \"ID\",) found")


def parse_raw_csv(text: str) -> list[NcuLaunch]:
    """Every launch in an ncu raw-page CSV, metrics scaled to base units."""
    rows = list(csv.reader(io.StringIO("\n".join(_table_lines(text)))))
    header, body = rows[0], rows[1:]
    units: list[str] = [""] * len(header)
    if body and not body[0][0].strip():  # the units row has an empty ID
        units, body = body[0] + [""] * (len(header) - len(body[0])), body[1:]
    launches = [_launch(dict(zip(header, row, strict=False)), header, units) for row in body if row]
    if not launches:
        raise RawCsvError("the ncu CSV has a header but no profiled launches")
    return launches


def _launch(row: dict[str, str], header: list[str], units: list[str]) -> NcuLaunch:
    metrics = {
        name: parse_number(row.get(name, "")) * unit_scale(unit)
        for name, unit in zip(header, units, strict=False)
        if name not in LAUNCH_COLUMNS and not name.startswith("device__attribute_display_name")
    }
    device = row.get("device__attribute_display_name", "") or row.get("Device", "")
    if device.strip().isdigit():  # "Device" holds the ordinal in recent ncu versions
        device = row.get("device__attribute_display_name", "")
    return NcuLaunch(
        launch_id=row.get("ID", ""),
        kernel_name=row.get("Kernel Name", ""),
        block=row.get("Block Size", ""),
        grid=row.get("Grid Size", ""),
        device=device.strip(),
        compute_capability=row.get("CC", ""),
        process=row.get("Process Name", ""),
        metrics=metrics,
    )
