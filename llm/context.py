"""What the model sees of one kernel: code without comments, launch facts, within a budget.

Comments are stripped because they may carry instructions to the model (or the answer).
Paths are reduced to file names so a prompt (and its cache key) does not depend on where
the sources sit on disk.

Truncation rule, in priority order, for a budget of B estimated tokens:
  1. the kernel's own code, always; if it alone exceeds B, its first lines up to B are kept
     and a `// [truncated: N more lines]` line is added;
  2. the launch facts (block, grid, program arguments, launch sites), always, capped;
  3. the `__device__` functions it calls, by name (a stable order, so the prompt and its
     cache key do not depend on discovery order), each whole or not at all while they fit;
     the names of the ones left out are listed;
  4. the host code that sizes and launches it: whole lines, chosen first the launch lines
     (those naming the kernel, with one line either side), then sizing lines (allocations,
     argv parsing, sizeof, dim3, constants), then the rest in order, while they fit; shown
     in source order with `// ...` where lines were skipped. An OpenMP region's own text
     inside its host function is replaced by one marker line.
Tokens are estimated as ceil(characters / CHARS_PER_TOKEN), a conservative figure for code
(about 3 characters per token was measured for code with a small model's tokenizer).
"""
from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from roofcast.analyzer.model import KernelIR

    from roofcast.predictors.base import LaunchContext

CHARS_PER_TOKEN = 3.0
DEFAULT_BUDGET = 1500
MIN_BUDGET = 64
_MAX_FACT_CHARS = 400

_TOKEN = re.compile(
    r"""//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'""",
    re.DOTALL,
)
_DEVICE_NAME = re.compile(r"([A-Za-z_]\w*)\s*(?:<[^()]*>)?\s*\(")
_SIZING = re.compile(
    r"malloc|Malloc|\bnew\b|\bato[il]|\bstrto|\bsto[il]\b|argv|sizeof|\bdim3\b|"
    r"\bconst\s+(?:int|long|size_t|unsigned)|#define|\bsize_t\b"
)
REGION_MARKER = "// (the offloaded region shown above)"


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def strip_comments(code: str) -> str:
    """Remove // and /* */ comments (not inside string or char literals); tidy blank lines."""

    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        if token.startswith("//"):
            return ""
        if token.startswith("/*"):
            return " " if "\n" not in token else "\n" * token.count("\n")
        return token

    text = _TOKEN.sub(replace, code)
    lines = [line.rstrip() for line in text.splitlines()]
    out: list[str] = []
    for line in lines:
        if not line and (not out or not out[-1]):
            continue
        out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out)


def truncate_lines(code: str, budget: int) -> tuple[str, int]:
    """The first whole lines of `code` within `budget` tokens, and how many were cut."""
    lines = code.splitlines()
    kept: list[str] = []
    used = 0
    for line in lines:
        cost = estimate_tokens(line + "\n")
        if used + cost > budget:
            break
        kept.append(line)
        used += cost
    return "\n".join(kept), len(lines) - len(kept)


@dataclass
class KernelContext:
    """The rendered context and what the truncation rule left out."""

    text: str
    tokens: int
    truncated_lines: int = 0
    dropped_device_functions: list[str] = field(default_factory=list)
    host_lines_cut: int = 0


def _fence(language: str) -> str:
    return "cuda" if language == "cuda" else "cpp"


def _device_name(code: str) -> str:
    head = code.split("{", 1)[0]
    names = _DEVICE_NAME.findall(head)
    return names[-1] if names else "?"


def launch_facts(ir: KernelIR, launch: LaunchContext | None) -> list[str]:
    """Block/grid/arguments from the caller (a manifest row) and launch sites in the code."""
    facts: list[str] = []
    if launch is not None:
        if launch.block:
            facts.append(f"block = {launch.block}")
        if launch.grid:
            facts.append(f"grid = {launch.grid}")
        if launch.exe_args:
            facts.append(f"program arguments: {launch.exe_args[:_MAX_FACT_CHARS]}")
    for site in sorted(ir.launches, key=lambda s: (PurePath(s.file).name, s.line))[:3]:
        args = ", ".join(site.args)
        facts.append(
            f"launched at {PurePath(site.file).name}:{site.line} as "
            f"<<<{site.grid}, {site.block}>>>({args})"[:_MAX_FACT_CHARS]
        )
    if ir.language == "openmp" and ir.pragma and ir.pragma not in ir.source:
        facts.append(f"pragma: {ir.pragma}"[:_MAX_FACT_CHARS])
    return facts


def render_kernel(
    ir: KernelIR,
    launch: LaunchContext | None = None,
    budget: int = DEFAULT_BUDGET,
    include_host: bool = True,
) -> KernelContext:
    """The kernel's code, callees, launch facts and host code under the truncation rule."""
    budget = max(budget, MIN_BUDGET)
    fence = _fence(ir.language)
    language = "CUDA" if ir.language == "cuda" else "OpenMP offload (C/C++)"
    header = f"Kernel `{ir.name}` ({language}, {PurePath(ir.file).name} line {ir.line})"
    facts = launch_facts(ir, launch)
    facts_text = "Launch:\n" + "\n".join(f"- {f}" for f in facts) if facts else ""
    fixed = estimate_tokens(header) + estimate_tokens(facts_text) + 12
    remaining = max(budget - fixed, MIN_BUDGET // 2)

    kernel_code = strip_comments(ir.source)
    cut = 0
    if estimate_tokens(kernel_code) > remaining:
        kernel_code, cut = truncate_lines(kernel_code, remaining - 8)
        kernel_code += f"\n// [truncated: {cut} more lines]"
    remaining -= estimate_tokens(kernel_code) + 4
    parts = [header, f"```{fence}\n{kernel_code}\n```"]

    kept: list[str] = []
    dropped: list[str] = []
    for code in sorted(_unique(ir.device_sources), key=_device_name):
        code = strip_comments(code)
        cost = estimate_tokens(code) + 2
        if cost <= remaining:
            kept.append(code)
            remaining -= cost
        else:
            dropped.append(_device_name(code))
    if kept:
        parts.append("Device functions it calls:\n```" + fence + "\n" + "\n\n".join(kept) + "\n```")
    if dropped:
        parts.append("Device functions left out (token budget): " + ", ".join(dropped))
    if facts_text:
        parts.append(facts_text)

    host_cut = 0
    host = host_code_of(ir) if include_host else ""
    if host and remaining > 24:
        host_code, host_cut = select_host_lines(host, ir.name, remaining - 12)
        if host_code.strip():
            parts.append(f"Host code that sizes and launches it:\n```cpp\n{host_code}\n```")
    elif host:
        host_cut = len(host.splitlines())

    text = "\n\n".join(parts)
    return KernelContext(
        text=text,
        tokens=estimate_tokens(text),
        truncated_lines=cut,
        dropped_device_functions=dropped,
        host_lines_cut=host_cut,
    )


def host_code_of(ir: KernelIR) -> str:
    """The host context without comments, an OpenMP region's own text folded to a marker."""
    if not ir.host_context:
        return ""
    host = strip_comments(ir.host_context)
    region = strip_comments(ir.source)
    if ir.language == "openmp" and region and region in host:
        host = host.replace(region, REGION_MARKER, 1)
    return host


def select_host_lines(host: str, kernel_name: str, budget: int) -> tuple[str, int]:
    """Launch lines, then sizing lines, then the rest, within budget; source order kept."""
    lines = host.splitlines()
    name = re.compile(rf"\b{re.escape(kernel_name)}\b") if kernel_name else None
    priority = [2] * len(lines)
    for i, line in enumerate(lines):
        if _SIZING.search(line):
            priority[i] = min(priority[i], 1)
        if (name and name.search(line)) or line.strip() == REGION_MARKER:
            for j in range(max(0, i - 1), min(len(lines), i + 2)):
                priority[j] = 0
    keep: set[int] = set()
    used = 0
    for i in sorted(range(len(lines)), key=lambda i: (priority[i], i)):
        cost = estimate_tokens(lines[i] + "\n")
        if used + cost > budget:
            continue
        keep.add(i)
        used += cost
    out: list[str] = []
    for i, line in enumerate(lines):
        if i in keep:
            out.append(line)
        elif not out or out[-1] != "// ...":
            out.append("// ...")
    return "\n".join(out), len(lines) - len(keep)


def _unique(items: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out
