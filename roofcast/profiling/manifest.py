"""Profiled launches as manifest rows in the columns of the gpuFLOPBench dev.csv, so
`roofcast evaluate` scores predictions against our own ground truth the same way.

The label is the analytic roofline rule of the dataset: Compute when the SP, DP or INT
intensity reaches that class's balance point on the GPU, else Bandwidth. Half precision is
measured and written (hp_flops, hp_ai) but, as in the dataset, does not decide the label.
"""

from __future__ import annotations

import csv
import io
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from roofcast.errors import EXIT_USAGE
from roofcast.gpu_specs import GPU, UnknownGPUError, load_gpu
from roofcast.gpu_specs.opclasses import LABEL_CLASSES
from roofcast.profiling.figures import LaunchFigures, launch_figures
from roofcast.profiling.names import demangle, parse_omp_entry, short_name
from roofcast.profiling.ncu import ProfilingError
from roofcast.profiling.rawcsv import NcuLaunch

#: dev.csv's columns, in its order; extra measured columns follow them.
DATASET_COLUMNS: tuple[str, ...] = (
    "target", "family", "language", "kernel", "kernel_signature", "omp_function", "omp_line",
    "block", "grid", "exe_args", "xtime_ns", "dram_bytes", "sp_flops", "dp_flops", "int_ops",
    "sp_ai", "dp_ai", "int_ai", "label",
)  # fmt: skip
EXTRA_COLUMNS: tuple[str, ...] = ("hp_flops", "hp_ai", "gpu", "device", "launch_id")
COLUMNS = DATASET_COLUMNS + EXTRA_COLUMNS


@dataclass
class ManifestRow:
    target: str
    family: str
    language: str
    kernel: str
    kernel_signature: str
    omp_function: str
    omp_line: int | str
    block: str
    grid: str
    exe_args: str
    xtime_ns: float
    dram_bytes: float
    sp_flops: float
    dp_flops: float
    int_ops: float
    sp_ai: float
    dp_ai: float
    int_ai: float
    label: str
    hp_flops: float
    hp_ai: float
    gpu: str
    device: str
    launch_id: str


def family_of(target: str) -> str:
    """HeCBench-style family: the program folder without its -cuda / -omp suffix."""
    for suffix in ("-cuda", "-omp", "-hip", "-sycl"):
        if target.endswith(suffix):
            return target[: -len(suffix)]
    return target


def label_for(figures: LaunchFigures, gpu: GPU) -> tuple[str, str]:
    """('Compute' | 'Bandwidth', reason naming the deciding class and its balance point)."""
    balance = gpu.balance_points
    crossed = [
        (c, figures.intensity(c)) for c in LABEL_CLASSES if figures.intensity(c) >= balance[c]
    ]
    if crossed:
        cls, ai = max(crossed, key=lambda item: item[1] / balance[item[0]])
        return "Compute", f"{cls} AI {ai:.4g} >= balance {balance[cls]:.4g}"
    cls = max(LABEL_CLASSES, key=lambda c: figures.intensity(c) / balance[c])
    return "Bandwidth", f"highest {cls} AI {figures.intensity(cls):.4g} < {balance[cls]:.4g}"


def resolve_gpu(device: str, override: GPU | None) -> GPU:
    """The override when given, else the spec whose device name ncu reported."""
    if override is not None:
        return override
    if not device:
        raise ProfilingError("ncu's CSV names no device; pass --gpu NAME", EXIT_USAGE)
    try:
        return load_gpu(device)
    except UnknownGPUError as err:
        raise ProfilingError(
            f"ncu reports device '{device}', which gpu_specs does not know ({err}); "
            "pass --gpu NAME",
            EXIT_USAGE,
        ) from err


def build_row(launch: NcuLaunch, gpu: GPU, target: str, exe_args: str) -> ManifestRow:
    """One manifest row for one profiled launch."""
    figures = launch_figures(launch)
    signature = demangle(launch.kernel_name.strip())
    entry = parse_omp_entry(signature)
    label, _ = label_for(figures, gpu)
    return ManifestRow(
        target=target,
        family=family_of(target),
        language="OMP" if entry else "CUDA",
        kernel=signature if entry else short_name(signature),
        kernel_signature=signature,
        omp_function=entry.function if entry else "",
        omp_line=entry.line if entry else "",
        block=launch.block,
        grid=launch.grid,
        exe_args=exe_args,
        xtime_ns=figures.duration_ns,
        dram_bytes=figures.dram_bytes,
        sp_flops=figures.sp_flops,
        dp_flops=figures.dp_flops,
        int_ops=figures.int_ops,
        sp_ai=figures.intensity("sp"),
        dp_ai=figures.intensity("dp"),
        int_ai=figures.intensity("int"),
        label=label,
        hp_flops=figures.hp_flops,
        hp_ai=figures.intensity("hp"),
        gpu=gpu.key,
        device=launch.device,
        launch_id=launch.launch_id,
    )


def build_rows(
    launches: Iterable[NcuLaunch],
    *,
    target: str,
    exe_args: Sequence[str] | str = "",
    gpu: GPU | None = None,
) -> list[ManifestRow]:
    """Rows for every launch; each launch's GPU comes from its device name unless `gpu` is set."""
    args = exe_args if isinstance(exe_args, str) else shlex.join(exe_args)
    return [build_row(launch, resolve_gpu(launch.device, gpu), target, args) for launch in launches]


def to_csv(rows: Iterable[ManifestRow]) -> str:
    """The manifest as CSV text (header + rows), numbers at full precision."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(COLUMNS), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(asdict(row))
    return buffer.getvalue()


def write_manifest(rows: Iterable[ManifestRow], path: str | Path) -> None:
    Path(path).write_text(to_csv(rows), encoding="utf-8")
