"""Manifest = a CSV with dev.csv's columns: which kernels to score and their profiled truth.

Rows are parsed once into `ManifestRow` so matching, predictors and metrics never touch raw
CSV text; every input problem becomes a `ManifestError` whose message fits on one line.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from roofcast.errors import RoofcastError
from roofcast.evaluation.signatures import bare_function_name, parse_signature

#: Columns a manifest must have: what identifies a kernel, its launch, and its label.
REQUIRED_COLUMNS: tuple[str, ...] = (
    "target", "language", "kernel", "kernel_signature", "omp_function", "omp_line",
    "block", "grid", "label",
)  # fmt: skip
#: Measured figures; optional (without them there is no count accuracy for that row).
MEASURED_COLUMNS: tuple[str, ...] = (
    "xtime_ns", "dram_bytes", "sp_flops", "dp_flops", "int_ops", "sp_ai", "dp_ai", "int_ai",
    "hp_flops", "hp_ai",
)  # fmt: skip
LANGUAGES = {"cuda": "CUDA", "omp": "OMP", "openmp": "OMP"}
LABELS = {"compute": "compute", "bandwidth": "bandwidth"}

Dim = tuple[int, int, int]


class ManifestError(RoofcastError):
    """A manifest that cannot be read or has a bad row; the message is one line."""


@dataclass(frozen=True)
class ManifestRow:
    """One profiled kernel launch. `measured` and `label` are truth, never predictor inputs."""

    index: int  # 0-based data row number in the file (stable id for reports)
    target: str
    family: str
    language: str  # "CUDA" or "OMP"
    kernel: str
    kernel_signature: str
    omp_function: str
    omp_line: int | None
    block: Dim | None
    grid: Dim | None
    exe_args: str
    label: str  # "compute" or "bandwidth"
    measured: dict[str, float] = field(default_factory=dict, compare=False, hash=False)

    @property
    def threads(self) -> int | None:
        """block x grid product: the launch's thread count as profiled."""
        if self.block is None or self.grid is None:
            return None
        return math.prod(self.block) * math.prod(self.grid)

    @property
    def key(self) -> str:
        """Short human id used in unmatched lists and reports."""
        if self.language == "OMP":
            return f"{self.target}:{self.omp_function_name()}:l{self.omp_line}"
        name = parse_signature(self.kernel_signature).name if self.kernel_signature else ""
        return f"{self.target}:{name or self.kernel}"

    def omp_function_name(self) -> str:
        return bare_function_name(self.omp_function) if self.omp_function else ""


_DIM_NUMBERS = re.compile(r"-?\d+")
_DIM_SHAPE = re.compile(r"^[(\[]?\s*-?\d+(\s*[,xX*]\s*-?\d+){0,2}\s*,?\s*[)\]]?$")


def parse_dim(text: str) -> Dim | None:
    """'(256, 1, 1)', '256', '256x2', '[16,16]' -> a 3-tuple padded with 1s; '' -> None."""
    text = (text or "").strip()
    if not text:
        return None
    if not _DIM_SHAPE.match(text):
        raise ValueError(f"launch dimension {text!r} is not like '(256, 1, 1)'")
    numbers = [int(n) for n in _DIM_NUMBERS.findall(text)]
    if any(n <= 0 for n in numbers):
        raise ValueError(f"launch dimension {text!r} has a non-positive size")
    numbers += [1] * (3 - len(numbers))
    return (numbers[0], numbers[1], numbers[2])


def _float(text: str) -> float | None:
    text = (text or "").strip()
    if not text:
        return None
    return float(text)


def parse_row(record: dict[str, str | None], index: int, line: str = "") -> ManifestRow:
    """One CSV record -> ManifestRow; raises ManifestError naming where the record is."""
    line = line or f"row {index + 1}"
    raw = {k: (v or "") for k, v in record.items() if isinstance(k, str)}
    try:
        language = LANGUAGES.get(raw["language"].strip().lower())
        if language is None:
            raise ValueError(f"language {raw['language']!r} is not CUDA or OMP")
        label = LABELS.get(raw["label"].strip().lower())
        if label is None:
            raise ValueError(f"label {raw['label']!r} is not Compute or Bandwidth")
        target = raw["target"].strip()
        if not target:
            raise ValueError("empty target")
        omp_line = raw["omp_line"].strip()
        measured: dict[str, float] = {}
        for column in MEASURED_COLUMNS:
            value = _float(raw.get(column, "") or "")
            if value is not None:
                measured[column] = value
        row = ManifestRow(
            index=index,
            target=target,
            family=(raw.get("family") or "").strip() or re.sub(r"-(cuda|omp)$", "", target),
            language=language,
            kernel=raw["kernel"].strip(),
            kernel_signature=raw["kernel_signature"].strip(),
            omp_function=raw["omp_function"].strip(),
            omp_line=int(float(omp_line)) if omp_line else None,
            block=parse_dim(raw["block"]),
            grid=parse_dim(raw["grid"]),
            exe_args=(raw.get("exe_args") or "").strip(),
            label=label,
            measured=measured,
        )
    except ValueError as exc:
        raise ManifestError(f"{line}: {exc}") from None
    if row.language == "OMP" and (not row.omp_function or row.omp_line is None):
        raise ManifestError(f"{line}: OMP row without omp_function/omp_line")
    if row.language == "CUDA" and not (row.kernel or row.kernel_signature):
        raise ManifestError(f"{line}: CUDA row without kernel name")
    return row


def load_manifest(path: Path | str) -> list[ManifestRow]:
    """Read and validate a manifest CSV; any problem is a one-line ManifestError."""
    path = Path(path)
    if not path.is_file():
        raise ManifestError(f"manifest {path}: no such file")
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            columns = reader.fieldnames or []
            missing = [c for c in REQUIRED_COLUMNS if c not in columns]
            if missing:
                raise ManifestError(
                    f"manifest {path}: missing column(s) {', '.join(missing)}"
                    " (expected the columns of gpuflopbench dev.csv)"
                )
            rows = [
                parse_row(raw, i, f"{path.name} line {reader.line_num}")
                for i, raw in enumerate(reader)
            ]
    except UnicodeDecodeError:
        raise ManifestError(f"manifest {path}: not UTF-8 text") from None
    except csv.Error as exc:
        raise ManifestError(f"manifest {path}: malformed CSV ({exc})") from None
    if not rows:
        raise ManifestError(f"manifest {path}: no data rows")
    return rows
