"""How do roofcast's verdicts fare on textbook kernels it was never fitted to?

Runs the real `analyze` pipeline on every kernel of kernels/textbook/ with its sidecar's
defines, on each reference GPU, with `--predictor roofline` and with the default predictor,
and prints one row per kernel and GPU: the expected verdict (reasoned from first principles in
the sidecar), both predictions, and the static DRAM bytes of the launch (per-thread bytes
times threads) against the sidecar's hand-counted bytes. Then agreement per predictor.

    python bench/textbook.py                 # the table and the agreement
    python bench/textbook.py --gpu h100      # one GPU
    python bench/textbook.py -k gemm         # entries whose id matches a regex
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from roofcast.gpu_specs import GPU, UnknownGPUError, load_gpu
from roofcast.kernels.textbook import GPUS, TextbookError, TextbookKernel, load_textbook

from roofcast.pipeline import analyze_paths
from roofcast.predictors import Predictor
from roofcast.registry import default_predictor, get_predictor
from roofcast.results import KernelResult


@dataclass(frozen=True)
class Row:
    """One kernel on one GPU: what is expected and what each predictor said."""

    entry: TextbookKernel
    gpu: str
    expected: str
    default: str
    roofline: str
    static_bytes: float | None
    expected_bytes: int | None
    launch_bytes: float | None = None

    @property
    def ratio(self) -> float | None:
        """Per-thread bytes x threads over the sidecar's; None when either is missing."""
        if self.static_bytes is None or not self.expected_bytes:
            return None
        return self.static_bytes / self.expected_bytes

    @property
    def launch_ratio(self) -> float | None:
        """The traffic model's launch bytes over the sidecar's."""
        if self.launch_bytes is None or not self.expected_bytes:
            return None
        return self.launch_bytes / self.expected_bytes


def _find(results: Iterable[KernelResult], entry: TextbookKernel) -> KernelResult | None:
    for result in results:
        if result.ir.name == entry.name and result.ir.line == entry.line:
            return result
    return None


def _verdict(
    entry: TextbookKernel, gpu: GPU, predictor: Predictor
) -> tuple[str, KernelResult | None]:
    report = analyze_paths([entry.source], gpu, entry.defines, predictor=predictor)
    found = _find(report.kernels, entry)
    if found is None:
        return "not found", None
    return (found.verdict.bound if found.verdict else "unknown"), found


def collect_rows(
    entries: Sequence[TextbookKernel],
    gpus: Sequence[str],
    default: Predictor,
    roofline: Predictor,
) -> list[Row]:
    """Every entry on every GPU through the pipeline, once per predictor."""
    rows = []
    for entry in entries:
        for key in gpus:
            gpu = load_gpu(key)
            got_default, _ = _verdict(entry, gpu, default)
            got_roofline, result = _verdict(entry, gpu, roofline)
            static = launch = None
            if result is not None:
                static = result.resolved.bytes * result.resolved.threads
                if result.resolved.dram is not None:
                    launch = result.resolved.dram.total
            dram = entry.expected_dram
            rows.append(
                Row(
                    entry=entry,
                    gpu=key,
                    expected=entry.verdicts[key],
                    default=got_default,
                    roofline=got_roofline,
                    static_bytes=static,
                    expected_bytes=dram.total if dram else None,
                    launch_bytes=launch,
                )
            )
    return rows


def agreement(rows: Sequence[Row], column: str) -> tuple[int, int]:
    """(agreeing rows, rows) for one predictor column."""
    hits = sum(getattr(r, column) == r.expected for r in rows)
    return hits, len(rows)


def _bytes(value: float | None) -> str:
    if value is None:
        return "-"
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= size:
            return f"{value / size:.4g} {unit}"
    return f"{value:.0f} B"


def render(rows: Sequence[Row]) -> str:
    """The table, then agreement per predictor (overall, per GPU, on the flip set)."""
    head = (
        "kernel",
        "gpu",
        "expected",
        "default",
        "roofline",
        "per-thread B",
        "launch B",
        "expected B",
        "ratio pt",
        "ratio launch",
    )
    body = []
    for r in rows:
        ratio = f"{r.ratio:.3g}" if r.ratio is not None else "-"
        launch_ratio = f"{r.launch_ratio:.3g}" if r.launch_ratio is not None else "-"
        mark = "*" if r.entry.flip else ""
        body.append(
            (
                r.entry.id + mark,
                r.gpu,
                r.expected,
                r.default,
                r.roofline,
                _bytes(r.static_bytes),
                _bytes(r.launch_bytes),
                _bytes(r.expected_bytes),
                ratio,
                launch_ratio,
            )
        )
    widths = [max(len(str(x[i])) for x in [head, *body]) for i in range(len(head))]
    lines = ["  ".join(str(x[i]).ljust(widths[i]) for i in range(len(head))) for x in [head, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.append("(* flip set: the expected verdict differs between the GPUs)")
    lines.append("")
    subsets = [("all", list(rows))]
    subsets += [(g, [r for r in rows if r.gpu == g]) for g in sorted({r.gpu for r in rows})]
    subsets.append(("flip set", [r for r in rows if r.entry.flip]))
    for column in ("default", "roofline"):
        parts = []
        for label, subset in subsets:
            if subset:
                hits, total = agreement(subset, column)
                parts.append(f"{label} {hits}/{total} ({100 * hits / total:.0f}%)")
        lines.append(f"agreement {column:8s}: " + ", ".join(parts))
    for label, attr in (("per-thread", "ratio"), ("launch", "launch_ratio")):
        ratios = sorted(
            getattr(r, attr) for r in rows if getattr(r, attr) is not None and r.gpu == rows[0].gpu
        )
        if ratios:
            mid = ratios[len(ratios) // 2]
            within = sum(0.5 <= x <= 2 for x in ratios)
            lines.append(
                f"{label} / expected DRAM bytes over {len(ratios)} kernels: median {mid:.3g}, "
                f"range {ratios[0]:.3g}-{ratios[-1]:.3g}, {within} within 2x"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpu", action="append", help="GPU key or alias (repeatable)")
    parser.add_argument("-k", "--kernel", help="only entries whose id matches this regex")
    args = parser.parse_args(argv)
    try:
        entries = load_textbook()
        gpus = args.gpu or list(GPUS)
        for key in gpus:
            load_gpu(key)
        pattern = re.compile(args.kernel) if args.kernel else None
    except (TextbookError, UnknownGPUError, re.error) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if pattern:
        entries = [e for e in entries if pattern.search(e.id)]
    if not entries:
        print(f"error: no textbook entry matches '{args.kernel}'", file=sys.stderr)
        return 2
    unknown = [g for g in gpus if g not in GPUS]
    if unknown:
        print(f"error: the sidecars give verdicts for {', '.join(GPUS)} only", file=sys.stderr)
        return 2
    rows = collect_rows(entries, gpus, default_predictor(), get_predictor("roofline"))
    print(render(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
