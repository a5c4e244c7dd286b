"""`roofcast explain`: the "and why" of a verdict, line by line.

Each source line's operations and global bytes per thread and per launch, the rules that
counted them and the loop trip counts they run under; then each array's footprint and DRAM
bytes, the L2 decision, and the class whose intensity decided the verdict.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path

import sympy

from roofcast.features.numeric import NotNumeric, evaluate
from roofcast.features.opcount import SPECIAL_PREFIX
from roofcast.gpu_specs import GPU
from roofcast.results import KernelResult

#: count name -> its column
_COLUMNS = {
    "flops_sp": "sp",
    "flops_dp": "dp",
    "flops_hp": "hp",
    "int_ops": "int",
    "load_bytes": "load B",
    "store_bytes": "store B",
    "flops_tensor": "tensor",
}


def _number(expr: sympy.Expr, values: dict[str, float]) -> float:
    try:
        return float(evaluate(expr, values))
    except (NotNumeric, OverflowError, ZeroDivisionError, ValueError, TypeError):
        try:
            return float(expr.xreplace({s: values.get(s.name, 0) for s in expr.free_symbols}))
        except (TypeError, ValueError):
            return math.nan


def explain(result: KernelResult, gpu: GPU) -> dict:
    """The explanation of one kernel's verdict (counted with `by_line`), as plain data."""
    fv, r = result.features, result.resolved
    values = dict(r.bindings)
    threads = r.threads
    per_line: dict[int, dict] = defaultdict(lambda: {"per_thread": {}, "rules": set()})
    for (line, name), expr in fv.by_line.items():
        if name.startswith(SPECIAL_PREFIX):
            column = name[len(SPECIAL_PREFIX) :]
        elif name in _COLUMNS:
            column = _COLUMNS[name]
        else:
            continue
        value = _number(expr, values)
        if not value:
            continue
        row = per_line[line]
        row["per_thread"][column] = row["per_thread"].get(column, 0.0) + value
        row["rules"].update(fv.line_rules.get((line, name), ()))
    sass = _sass_lines(fv.sass_by_line, values) if fv.counted_from == "sass" else {}
    lines = _source_lines(result.ir.file)
    rows = []
    for line in sorted(set(per_line) | set(sass)):
        row = per_line[line]
        shown = {
            "line": line,
            "source": lines[line - 1].strip() if 0 < line <= len(lines) else "",
            "per_thread": {k: _clean(v) for k, v in row["per_thread"].items()},
            "per_launch": {k: _clean(v * threads) for k, v in row["per_thread"].items()},
            "rules": sorted(row["rules"]),
            "trips": fv.line_nests.get(line, []),
        }
        if fv.counted_from == "sass":
            counts = sass.get(line, {})
            shown["sass_per_thread"] = {k: _clean(v) for k, v in counts.items()}
            shown["sass_per_launch"] = {k: _clean(v * threads) for k, v in counts.items()}
        rows.append(shown)
    verdict = result.verdict
    details = verdict.details if verdict is not None else {}
    decided_by = details.get("class")
    dram = r.dram.to_json() if r.dram is not None else None
    data = {
        "name": result.ir.name,
        "file": result.ir.file,
        "line": result.ir.line,
        "gpu": gpu.key,
        "threads": _clean(threads),
        "bound": verdict.bound if verdict else "unknown",
        "predictor": verdict.predictor if verdict else None,
        "reason": verdict.reason if verdict else "",
        "decided_by": decided_by,
        "intensities": r.intensity_json(),
        "balance_points": {k: round(v, 4) for k, v in gpu.balance_points.items()},
        "traffic_model": r.traffic,
        "symbols": {name: _clean(values[name]) for name in sorted(r.unbound) if name in values},
        "defaults_applied": r.defaults_json(),
        "lines": rows,
        "dram_bytes": dram,
        "dominant_lines": [line for line, _, _ in dominant_lines(dram)],
    }
    if fv.counted_from:  # compile mode (docs/counting.md S0-S10): what counted FLOPs, int ops
        data["counted_from"], data["counted_why"] = fv.counted_from, fv.counted_why
    site = [note for note in r.notes if note.startswith("[D33]")]
    if site:  # a kernel launched from several sites: whose host values were used
        data["launch_site"] = site[0]
    return data


def _sass_lines(
    by_line: Mapping[int, Mapping[str, sympy.Expr]], values: dict[str, float]
) -> dict[int, dict[str, float]]:
    """Compile mode: each line's per-thread FLOPs and int ops from its SASS (rule S7), in
    the source columns' names; lines whose SASS does none of them are left out."""
    out: dict[int, dict[str, float]] = {}
    for line, counts in by_line.items():
        row = {}
        for name, expr in counts.items():
            value = _number(expr, values)
            if value and name in _COLUMNS:
                row[_COLUMNS[name]] = value
        if row:
            out[line] = row
    return out


def dominant_lines(dram: Mapping | None, top: int = 3) -> list[tuple[int, str, float]]:
    """(line, array, its DRAM bytes) for the lines of the arrays that move the most in a
    kernel's `dram_bytes` JSON, most first: explain's summary and SARIF's relatedLocations."""
    out: list[tuple[int, str, float]] = []
    for array in (dram or {}).get("arrays") or []:  # sorted by DRAM bytes, most first
        moved = sum((array.get("dram_bytes") or {}).values())
        for line in sorted(array.get("lines") or []):
            if line and all(line != seen for seen, _, _ in out):
                out.append((int(line), str(array["array"]), float(moved)))
    return out[:top]


def _source_lines(file: str) -> list[str]:
    try:
        return Path(file).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def _clean(value: float) -> float:
    if not math.isfinite(value):
        return value
    return int(value) if float(value).is_integer() and abs(value) < 2**53 else float(f"{value:.6g}")


def _bytes(value: float) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= size:
            return f"{value / size:.3g} {unit}"
    return f"{value:.0f} B"


def _short(value: float) -> str:
    return f"{value:.3g}" if value < 1e6 else f"{value:.2e}"


def render(data: dict, width: int = 80) -> str:
    """The explanation as text for an 80-column terminal."""
    out = [
        f"{data['name']}  {data['file']}:{data['line']}  on {data['gpu']}"
        f"  ({_short(data['threads'])} threads)",
    ]
    out += _wrap(f"verdict: {data['bound']} ({data['predictor']}): {data['reason']}", width)
    if data.get("launch_site"):
        out += _wrap(data["launch_site"], width)
    out += ["", "per source line (per thread; x threads for the launch)"]
    if data.get("counted_from") == "sass":
        out += _wrap(
            f"FLOPs and int ops counted from SASS ({data['counted_why']}): the SASS lines",
            width,
        )
    elif data.get("counted_why"):
        out += _wrap(f"counted from source: {data['counted_why']}", width)
    for row in data["lines"]:
        source = row["source"]
        head = f"{row['line']:>5}  "
        room = width - len(head)
        out.append(head + (source if len(source) <= room else source[: room - 3] + "..."))
        counts = ", ".join(f"{k} {_short(v)}" for k, v in row["per_thread"].items())
        rules = " ".join(row["rules"])
        detail = f"       {counts}  [{rules}]"
        if row["trips"]:
            detail += f"  trips: {'; '.join(row['trips'])}"
        if row["per_thread"]:
            out.extend(_wrap(detail, width))
        if row.get("sass_per_thread"):
            sass = ", ".join(f"{k} {_short(v)}" for k, v in row["sass_per_thread"].items())
            out.extend(_wrap(f"       SASS: {sass}  [S1-S10]", width))
    dram = data["dram_bytes"]
    if dram is not None:
        out += [
            "",
            f"DRAM per launch ({data['traffic_model']} model): load {_bytes(dram['load'])}, "
            f"store {_bytes(dram['store'])}",
            f"working set {_bytes(dram['working_set_bytes'])} vs L2 "
            f"{_bytes(dram['l2_bytes'])}, {dram['waves']} wave(s): {dram['l2_decision']}",
            f"{'array':<20} {'footprint':>10} {'requested':>10} {'DRAM':>10}  lines",
        ]
        for array in dram["arrays"]:
            footprint = array["footprint_bytes"]["load"] + array["footprint_bytes"]["store"]
            moved = array["dram_bytes"]["load"] + array["dram_bytes"]["store"]
            name = array["array"] if len(array["array"]) <= 20 else array["array"][:17] + "..."
            mark = "" if array["from_index"] else " *"
            out.append(
                f"{name:<20} {_bytes(footprint):>10} {_bytes(array['requested_bytes']):>10} "
                f"{_bytes(moved):>10}  {','.join(map(str, array['lines']))}{mark}"
            )
        if any(not a["from_index"] for a in dram["arrays"]):
            out.append("* place not affine in the thread and loop indices (rule T6/T8)")
    out += ["", "intensity vs balance (launch ops / DRAM bytes):"]
    for cls, ai in data["intensities"].items():
        balance = data["balance_points"].get(cls)
        if balance is None:
            continue
        mark = "  <- decides" if cls == data["decided_by"] else ""
        shown = ai if isinstance(ai, str) else _short(ai)
        out.append(f"  {cls:<4} {shown:>10} vs {balance:g}{mark}")
    if data["defaults_applied"]:
        shown = ", ".join(f"{k}={v}" for k, v in data["defaults_applied"].items())
        out += _wrap(f"defaults (unbound symbols): {shown}", width)
    return "\n".join(wrapped for line in out for wrapped in _wrap(line, width))


def _wrap(text: str, width: int) -> list[str]:
    lines = []
    while len(text) > width:
        cut = text.rfind(" ", 0, width)
        cut = cut if cut > 8 else width
        lines.append(text[:cut])
        text = "         " + text[cut:].lstrip()
    lines.append(text)
    return lines
