"""`roofcast gpus`: the bundled GPU machine files with their derived balance points."""

from __future__ import annotations

import json
from enum import Enum
from typing import Annotated, Literal

import typer
from rich.console import Console
from rich.table import Table

from roofcast.cli.errors import fail
from roofcast.gpu_specs import CLASSES, GPU, UnknownGPUError, list_gpus, load_gpu


class GpusFormat(str, Enum):
    table = "table"
    json = "json"


def _table(gpus: list[GPU]) -> Table:
    table = Table(
        title="GPUs: balance points in ops per DRAM byte (an FMA counts 2)",
        caption="clock: boost, as the vendor peaks use; * base clock (rtx3080, as profiled "
        "for gpuFLOPBench)",
    )
    for header in ("key", "name", "aliases", "SMs", "GHz", "GB/s", "L2 MB"):
        justify: Literal["left", "right"] = (
            "left" if header in ("key", "name", "aliases") else "right"
        )
        table.add_column(header, justify=justify, no_wrap=header == "key")
    for cls in CLASSES:
        table.add_column(f"bal {cls}", justify="right")
    for gpu in gpus:
        balance = gpu.balance_points
        table.add_row(
            gpu.key,
            gpu.name,
            ", ".join(gpu.aliases),
            str(gpu.sms),
            f"{gpu.clock_ghz:.4g}" + ("*" if gpu.clock == "base" else ""),
            f"{gpu.bandwidth_gbs:g}",
            f"{gpu.l2_mb:g}",
            *(f"{balance[c]:.4g}" if c in balance else "-" for c in CLASSES),
        )
    return table


def gpus(
    name: Annotated[
        list[str] | None, typer.Argument(help="Only these GPUs (key, alias or device name).")
    ] = None,
    fmt: Annotated[
        GpusFormat, typer.Option("--format", "-f", help="table or json.")
    ] = GpusFormat.table,
) -> None:
    """List the GPUs roofcast knows, with peaks, bandwidth and balance points."""
    try:
        selected = [load_gpu(n) for n in name] if name else list(list_gpus())
    except UnknownGPUError as err:
        fail(str(err))
    if fmt is GpusFormat.json:
        typer.echo(json.dumps([g.to_json() for g in selected], indent=2))
        return
    Console().print(_table(selected))


def register(app: typer.Typer) -> None:
    """Add `gpus` to the main app."""
    app.command("gpus")(gpus)
