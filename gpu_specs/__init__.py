"""GPU machine files: one TOML per GPU with cited figures; peaks and balance points derived here.

Balance point of a class = peak ops/s of that class / DRAM bytes/s (an FMA counts 2 ops),
the same definition the Nsight Compute roofline and the gpuFLOPBench labels use.
"""

from __future__ import annotations

import difflib
import sys
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from roofcast.gpu_specs.opclasses import CLASSES, LANE_KEYS, PRECISIONS

__all__ = ["CLASSES", "GPU", "UnknownGPUError", "list_gpus", "load_gpu"]


class UnknownGPUError(ValueError):
    """Raised for a GPU name no spec file or alias matches; the message suggests the nearest."""


@dataclass(frozen=True)
class GPU:
    key: str
    name: str
    vendor: str
    architecture: str
    sms: int
    base_clock_ghz: float
    boost_clock_ghz: float
    clock: str
    bandwidth_gbs: float
    l2_mb: float
    smem_per_sm_kb: float
    lanes_per_sm: dict[str, float]
    aliases: tuple[str, ...] = ()
    source: dict[str, str] = field(default_factory=dict)
    #: Optional vendor peaks (TFLOP/s or TOP/s) overriding lanes x SMs x clock, cited in the file.
    peak_override_tops: dict[str, float] = field(default_factory=dict)
    #: Names the driver reports (nvidia-smi, ncu's device__attribute_display_name).
    device_names: tuple[str, ...] = ()
    compute_capability: str = ""
    #: Last-level cache when it is not the L2 (AMD Infinity Cache); defaults to the L2.
    llc_mb: float = 0.0
    #: Informational: vendor tensor/matrix peaks (dense TFLOP/s); not used by the roofline.
    tensor_peak_tflops: dict[str, float] = field(default_factory=dict)
    #: Vendor peak figures (TFLOP/s, keyed by lane name) the derived peaks are checked against.
    datasheet_peak_tflops: dict[str, float] = field(default_factory=dict)
    #: Special-function costs where this GPU's instruction sequences differ from the intrinsic
    #: catalogue's defaults (features/data/intrinsics.toml): kind -> precision -> FLOPs per
    #: call, from the file's `[special_flops]` table, which must cite its source. Empty: the
    #: defaults hold (no bundled GPU has a cited difference).
    special_flops: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def clock_ghz(self) -> float:
        return self.base_clock_ghz if self.clock == "base" else self.boost_clock_ghz

    @property
    def peaks(self) -> dict[str, float]:
        """Peak ops/s per class: lanes/SM x SMs x clock x 2 (an FMA is 2 ops)."""
        out: dict[str, float] = {}
        for cls in CLASSES:
            if cls in self.peak_override_tops:
                out[cls] = self.peak_override_tops[cls] * 1e12
                continue
            lanes = self.lanes_per_sm.get(LANE_KEYS[cls])
            if lanes:
                out[cls] = lanes * self.sms * self.clock_ghz * 1e9 * 2
        return out

    @property
    def bandwidth_bytes(self) -> float:
        return self.bandwidth_gbs * 1e9

    @property
    def balance_points(self) -> dict[str, float]:
        """Ops per DRAM byte at which each class turns compute-bound."""
        return {cls: peak / self.bandwidth_bytes for cls, peak in self.peaks.items()}

    @property
    def l2_bytes(self) -> float:
        return self.l2_mb * 1024 * 1024

    @property
    def llc_bytes(self) -> float:
        """Bytes of the last cache before DRAM: what a working set must fit to stay on chip."""
        return (self.llc_mb or self.l2_mb) * 1024 * 1024

    def to_json(self) -> dict:
        return {
            "key": self.key,
            "name": self.name,
            "vendor": self.vendor,
            "architecture": self.architecture,
            "compute_capability": self.compute_capability,
            "aliases": list(self.aliases),
            "sms": self.sms,
            "clock": self.clock,
            "bandwidth_gbs": self.bandwidth_gbs,
            "clock_ghz": self.clock_ghz,
            "l2_mb": self.l2_mb,
            "smem_per_sm_kb": self.smem_per_sm_kb,
            "peaks": {k: v for k, v in self.peaks.items()},
            "balance_points": {k: round(v, 4) for k, v in self.balance_points.items()},
        }


def _load_file(key: str, text: str) -> GPU:
    data = tomllib.loads(text)
    return GPU(
        key=key,
        name=data["name"],
        vendor=data.get("vendor", "nvidia"),
        architecture=data.get("architecture", ""),
        sms=int(data["sms"]),
        base_clock_ghz=float(data["base_clock_ghz"]),
        boost_clock_ghz=float(data.get("boost_clock_ghz", data["base_clock_ghz"])),
        clock=data.get("clock", "boost"),
        bandwidth_gbs=float(data["bandwidth_gbs"]),
        l2_mb=float(data.get("l2_mb", 0)),
        smem_per_sm_kb=float(data.get("smem_per_sm_kb", 0)),
        lanes_per_sm={k: float(v) for k, v in data.get("lanes_per_sm", {}).items()},
        aliases=tuple(a.lower() for a in data.get("aliases", [])),
        source={k: str(v) for k, v in data.get("source", {}).items()},
        peak_override_tops={k: float(v) for k, v in data.get("peak_override_tops", {}).items()},
        device_names=tuple(str(d) for d in data.get("device_names", [])),
        compute_capability=str(data.get("compute_capability", "")),
        llc_mb=float(data.get("llc_mb", 0)),
        tensor_peak_tflops=_floats(data.get("tensor_peak_tflops", {})),
        datasheet_peak_tflops=_floats(data.get("datasheet_peak_tflops", {})),
        special_flops=_special_flops(key, data.get("special_flops", {})),
    )


def _special_flops(key: str, table: dict) -> dict[str, dict[str, int]]:
    """A file's `[special_flops]` overrides, checked for shape here (the kinds are checked
    against the catalogue where they are used, `mathfuncs.special_costs`)."""
    out: dict[str, dict[str, int]] = {}
    for kind, by_precision in table.items():
        if not isinstance(by_precision, dict) or not set(by_precision) <= set(PRECISIONS):
            raise ValueError(f"{key}.toml: [special_flops] {kind} must map hp/sp/dp to FLOPs")
        out[kind] = {p: int(v) for p, v in by_precision.items()}
    return out


def _floats(table: dict) -> dict[str, float]:
    return {k: float(v) for k, v in table.items()}


@cache
def list_gpus() -> tuple[GPU, ...]:
    """Every bundled GPU, sorted by key."""
    gpus = []
    for entry in resources.files(__name__).iterdir():
        if entry.name.endswith(".toml"):
            gpus.append(_load_file(entry.name[: -len(".toml")], entry.read_text("utf-8")))
    return tuple(sorted(gpus, key=lambda g: g.key))


def _normalise(name: str) -> str:
    return name.lower().replace("_", "-").replace(" ", "-")


@cache
def _name_index() -> dict[str, GPU]:
    """Every normalised name a GPU answers to: key, full name, aliases, driver device names."""
    names: dict[str, GPU] = {}
    for gpu in list_gpus():
        for candidate in (gpu.key, gpu.name, *gpu.aliases, *gpu.device_names):
            names.setdefault(_normalise(candidate), gpu)
    return names


@cache
def _short_names() -> frozenset[str]:
    """Names worth suggesting: keys and aliases (long device names only add noise)."""
    return frozenset(_normalise(n) for g in list_gpus() for n in (g.key, *g.aliases))


def load_gpu(name: str) -> GPU:
    """Find a GPU by file key, alias, full name or driver device name (case-insensitive)."""
    wanted = _normalise(name)
    names = _name_index()
    if wanted in names:
        return names[wanted]
    short = {n: g for n, g in names.items() if n in _short_names()}
    near = difflib.get_close_matches(wanted, list(short), n=3, cutoff=0.4)
    hint = f"; did you mean {', '.join(near)}?" if near else ""
    raise UnknownGPUError(f"unknown GPU '{name}'{hint} (`roofcast gpus` lists them)")
