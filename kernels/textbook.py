"""The textbook check set: kernels written from first principles, outside any benchmark suite.

`textbook/cuda/*.cu` and `textbook/openmp/*.cpp` each have a `<stem>.toml` sidecar giving, per
kernel, the problem size (`defines`, as `--define` takes them), the verdict a profiler would
give on each reference GPU with the reasoning behind it, the work per launch and the
compulsory DRAM traffic per launch. Unlike the corpus sidecars (per-thread counts by the
analyzer's own rules), these state what the hardware does, so they can judge the predictors
and the launch-level traffic model on code none of them was fitted to.

This module only reads and checks the sidecars; `bench/textbook.py` runs the pipeline on them.
(A module beside the `textbook/` data folder: that folder has no `__init__.py`, and a module
wins over a bare folder of the same name on import.)
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: The GPUs every entry gives a verdict for (aliases `roofcast gpus` resolves).
GPUS: tuple[str, ...] = ("a100", "h100")
VERDICTS: tuple[str, ...] = ("compute", "bandwidth")
#: Roofline classes an entry may give ops for (docs/counting.md).
OP_CLASSES: tuple[str, ...] = ("sp", "dp", "hp", "int")
#: How the expected DRAM bytes were obtained: hand-counted compulsory traffic, or an estimate
#: resting on a model of L2 reuse between thread blocks (stated in the reasoning).
DRAM_BASES: tuple[str, ...] = ("compulsory", "estimate")
SOURCE_SUFFIXES: dict[str, str] = {"cuda": ".cu", "openmp": ".cpp"}


class TextbookError(ValueError):
    """A sidecar that does not follow the schema; the message names the file and the entry."""


@dataclass(frozen=True)
class ExpectedDram:
    """DRAM bytes of one launch at the entry's sizes, 32-byte sectors."""

    load_bytes: int
    store_bytes: int
    basis: str

    @property
    def total(self) -> int:
        return self.load_bytes + self.store_bytes


@dataclass(frozen=True)
class TextbookKernel:
    """One kernel at one problem size, with what the hardware is expected to do."""

    source: Path
    name: str
    line: int
    language: str
    defines: dict[str, str]
    verdicts: dict[str, str]
    reasoning: str
    ops: dict[str, int] = field(default_factory=dict)
    expected_dram: ExpectedDram | None = None
    #: Chosen to lie between the two GPUs' balance points, so the verdicts differ.
    flip: bool = False

    @property
    def id(self) -> str:
        """Readable, unique id: folder/file:line:name plus the defines that tell sizes apart."""
        sizes = ",".join(
            f"{k}={v}" for k, v in self.defines.items() if not k.startswith(("blockDim", "gridDim"))
        )
        return f"{self.source.parent.name}/{self.source.name}:{self.line}:{self.name}[{sizes}]"

    def intensities(self) -> dict[str, float]:
        """Ops per DRAM byte for each class, from the sidecar's own figures."""
        if self.expected_dram is None or self.expected_dram.total == 0:
            return {}
        return {c: self.ops.get(c, 0) / self.expected_dram.total for c in OP_CLASSES}


def textbook_root() -> Path:
    """The folder holding cuda/ and openmp/ of the textbook set."""
    return Path(__file__).resolve().parent / "textbook"


def source_files(root: Path | None = None) -> list[Path]:
    """Every kernel source of the set, sorted."""
    root = root or textbook_root()
    out: list[Path] = []
    for folder, suffix in SOURCE_SUFFIXES.items():
        out.extend((root / folder).glob(f"*{suffix}"))
    return sorted(out)


def _fail(where: str, message: str) -> TextbookError:
    return TextbookError(f"{where}: {message}")


def _require(raw: dict[str, Any], key: str, kind: type, where: str) -> Any:
    value = raw.get(key)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise _fail(where, f"'{key}' missing or not a {kind.__name__}")
    return value


def _parse_dram(raw: Any, where: str) -> ExpectedDram | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise _fail(where, "'expected_dram' must be a table")
    load = _require(raw, "load_bytes", int, where)
    store = _require(raw, "store_bytes", int, where)
    basis = raw.get("basis", "compulsory")
    if load < 0 or store < 0 or load + store == 0:
        raise _fail(where, "expected_dram bytes must be >= 0 and not both 0")
    if basis not in DRAM_BASES:
        raise _fail(where, f"expected_dram basis '{basis}' is not one of {', '.join(DRAM_BASES)}")
    return ExpectedDram(load, store, basis)


def _parse_ops(raw: Any, where: str) -> dict[str, int]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise _fail(where, "'expected_ops' must be a table")
    unknown = sorted(set(raw) - set(OP_CLASSES))
    if unknown:
        raise _fail(where, f"expected_ops has unknown classes {unknown}")
    if any(not isinstance(v, int) or isinstance(v, bool) or v < 0 for v in raw.values()):
        raise _fail(where, "expected_ops values must be non-negative integers")
    return dict(raw)


def _parse_entry(source: Path, raw: dict[str, Any], index: int) -> TextbookKernel:
    where = f"{source.with_suffix('.toml').name} kernel #{index + 1}"
    name = _require(raw, "name", str, where)
    where = f"{where} ({name})"
    line = _require(raw, "line", int, where)
    language = _require(raw, "language", str, where)
    if SOURCE_SUFFIXES.get(language) != source.suffix:
        raise _fail(where, f"language '{language}' does not match {source.name}")
    defines = raw.get("defines", {})
    if not isinstance(defines, dict):
        raise _fail(where, "'defines' must be a table")
    verdict = raw.get("verdict")
    if not isinstance(verdict, dict):
        raise _fail(where, "'verdict' table missing")
    verdicts: dict[str, str] = {}
    for gpu in GPUS:
        if verdict.get(gpu) not in VERDICTS:
            raise _fail(where, f"verdict for {gpu} must be one of {', '.join(VERDICTS)}")
        verdicts[gpu] = verdict[gpu]
    reasoning = verdict.get("reasoning")
    if not isinstance(reasoning, str) or not reasoning.strip():
        raise _fail(where, "verdict reasoning is missing or empty")
    flip = raw.get("flip", False)
    if not isinstance(flip, bool):
        raise _fail(where, "'flip' must be true or false")
    return TextbookKernel(
        source=source,
        name=name,
        line=line,
        language=language,
        defines={str(k): str(v) for k, v in defines.items()},
        verdicts=verdicts,
        reasoning=reasoning.strip(),
        ops=_parse_ops(raw.get("expected_ops"), where),
        expected_dram=_parse_dram(raw.get("expected_dram"), where),
        flip=flip,
    )


def load_sidecar(source: Path) -> list[TextbookKernel]:
    """The entries of one source's sidecar; a missing or malformed sidecar is an error."""
    path = source.with_suffix(".toml")
    if not path.exists():
        raise TextbookError(f"{path.name}: no sidecar for {source.name}")
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise TextbookError(f"{path.name}: not valid TOML ({exc})") from None
    raw_entries = data.get("kernel")
    if not isinstance(raw_entries, list) or not raw_entries:
        raise TextbookError(f"{path.name}: no [[kernel]] entries")
    return [_parse_entry(source, raw, i) for i, raw in enumerate(raw_entries)]


def load_textbook(root: Path | None = None) -> list[TextbookKernel]:
    """Every entry of the set, in file then sidecar order."""
    entries: list[TextbookKernel] = []
    for source in source_files(root):
        entries.extend(load_sidecar(source))
    return entries
