"""Prompt builders for the five scenarios; each returns chat messages and the answer format.

Scenarios: `profile` (measured figures + GPU peaks), `zero-shot` (code + GPU), `few-shot`
(k labelled examples first), `fine-tuned` (the short format `export-finetune` trains on) and
`hybrid` (code + GPU + roofcast's static counts and default verdict, confirm or overturn).
The texts are ours. Unlike the paper's zero-shot example, a streaming `a[i] = a[i] + b[i]`
loop is described as what it is: bandwidth-bound.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from roofcast.llm.answers import BANDWIDTH, COMPUTE
from roofcast.llm.context import DEFAULT_BUDGET, render_kernel

if TYPE_CHECKING:
    from roofcast.analyzer.model import KernelIR
    from roofcast.gpu_specs import GPU

    from roofcast.predictors.base import LaunchContext
    from roofcast.results import KernelResult

#: Longest line of the hybrid scenario's static summary (symbolic counts can be long).
MAX_SUMMARY_LINE = 300
SCENARIOS: tuple[str, ...] = ("profile", "zero-shot", "few-shot", "fine-tuned", "hybrid")
AnswerFormat = Literal["word", "json", "json_reason"]
#: Classes the roofline label uses (the ground truth ignores FP16), in prompt order.
CLASSES: tuple[tuple[str, str], ...] = (("sp", "FP32"), ("dp", "FP64"), ("int", "INT"))

ROOFLINE_RULE = (
    "Roofline rule: for each operation class (FP32, FP64, integer), arithmetic intensity = "
    "operations of that class executed by the whole launch / bytes moved between DRAM and "
    "the GPU. The kernel is compute-bound when the intensity of at least one class reaches "
    "that class's balance point (peak operation rate / DRAM bandwidth); otherwise it is "
    "bandwidth-bound. An FMA counts as 2 operations. Data served from caches or shared "
    "memory is not DRAM traffic, so reuse raises intensity; integer index arithmetic counts "
    "on the INT roofline. A loop that reads and writes each element once with a few "
    "operations per element, such as a[i] = a[i] + b[i], is bandwidth-bound."
)
SYSTEM = (
    "You are a GPU performance engineer. You decide whether a kernel is compute-bound or "
    "bandwidth-bound on a given GPU, using the roofline model. "
)
ANSWER_TEXT: dict[str, str] = {
    "word": "Reply with exactly one word: Compute or Bandwidth.",
    "json": 'Reply with a JSON object only: {"bound": "Compute"} or {"bound": "Bandwidth"}.',
    "json_reason": (
        'Reply with a JSON object only: {"bound": "Compute" or "Bandwidth", '
        '"reason": "<one sentence>"}.'
    ),
}


@dataclass
class KernelInput:
    """One kernel to ask about: its IR, launch facts, and scenario-specific extras."""

    key: str  # stable id shown in reports and stored (manifest key or file:line:name)
    ir: KernelIR
    launch: LaunchContext | None = None
    result: KernelResult | None = None  # static analysis (hybrid)
    measured: Mapping[str, float] = field(default_factory=dict)  # profile figures
    truth: str | None = None  # COMPUTE / BANDWIDTH when known (manifest label)
    family: str = ""
    language: str = ""  # "CUDA" / "OMP"

    @property
    def lang(self) -> str:
        return self.language or ("CUDA" if self.ir.language == "cuda" else "OMP")


@dataclass(frozen=True)
class Example:
    """A labelled kernel for few-shot prompts; `label` is COMPUTE or BANDWIDTH."""

    kernel: KernelInput
    label: str


@dataclass(frozen=True)
class Prompt:
    scenario: str
    messages: tuple[dict[str, str], ...]
    answer_format: AnswerFormat
    notes: dict[str, object] = field(default_factory=dict, compare=False, hash=False)

    def text(self) -> str:
        return "\n\n".join(f"[{m['role']}]\n{m['content']}" for m in self.messages)


def _num(value: float, digits: int = 4) -> str:
    if value == 0:
        return "0"
    if math.isinf(value):
        return "inf"
    return f"{value:.{digits}g}"


def gpu_block(gpu: GPU) -> str:
    peaks = gpu.peaks
    balance = gpu.balance_points
    peak_text = ", ".join(
        f"{label} {_num(peaks[k] / 1e12)} T{'FLOP' if k != 'int' else 'OP'}/s"
        for k, label in CLASSES
        if k in peaks
    )
    balance_text = ", ".join(f"{label} {_num(balance[k])}" for k, label in CLASSES if k in balance)
    return (
        f"Target GPU: {gpu.name}: {gpu.sms} SMs, DRAM bandwidth {_num(gpu.bandwidth_gbs)} GB/s, "
        f"L2 cache {_num(gpu.l2_mb)} MB. Peaks: {peak_text}. "
        f"Balance points (operations per DRAM byte): {balance_text}."
    )


def answer_format_for(scenario: str, structured_mode: str) -> AnswerFormat:
    if scenario == "hybrid":
        return "json_reason"
    return "json" if structured_mode == "json_schema" else "word"


def _answer_line(label: str, fmt: AnswerFormat) -> str:
    if fmt == "word":
        return label
    return '{"bound": "' + label + '"}'


def profile_figures(measured: Mapping[str, float]) -> list[str]:
    """Measured figures as lines; intensities derived from counts when not given."""
    lines = []
    if "xtime_ns" in measured:
        lines.append(f"duration: {_num(measured['xtime_ns'] / 1e3)} us")
    dram = measured.get("dram_bytes")
    if dram is not None:
        lines.append(f"DRAM traffic (read + write): {_num(dram)} bytes")
    names = {"sp": "FP32 operations", "dp": "FP64 operations", "int": "integer instructions"}
    counts = {"sp": "sp_flops", "dp": "dp_flops", "int": "int_ops"}
    for cls, column in counts.items():
        if column in measured:
            lines.append(f"{names[cls]}: {_num(measured[column])}")
    intensities = []
    for cls, label in CLASSES:
        ai = measured.get(f"{cls}_ai")
        if ai is None and dram is not None and counts[cls] in measured:
            ai = measured[counts[cls]] / dram if dram else math.inf
        if ai is not None:
            intensities.append(f"{label} {_num(ai)}")
    if intensities:
        lines.append("arithmetic intensity (operations per DRAM byte): " + ", ".join(intensities))
    return lines


def _launch_line(kernel: KernelInput) -> str:
    launch = kernel.launch
    parts = []
    if launch and launch.block:
        parts.append(f"block {launch.block}")
    if launch and launch.grid:
        parts.append(f"grid {launch.grid}")
    return ", ".join(parts)


def build_profile(kernel: KernelInput, gpu: GPU, fmt: AnswerFormat) -> Prompt:
    figures = profile_figures(kernel.measured)
    if not figures:
        raise ValueError(f"{kernel.key}: the profile scenario needs measured figures")
    launch = _launch_line(kernel)
    user = "\n".join(
        [
            gpu_block(gpu),
            "",
            f"Kernel `{kernel.ir.name}` ({kernel.lang})"
            + (f", launched with {launch}" if launch else "")
            + ", as measured by a profiler on this GPU:",
            *[f"- {line}" for line in figures],
            "",
            "Is this kernel compute-bound or bandwidth-bound on this GPU? " + ANSWER_TEXT[fmt],
        ]
    )
    return Prompt(
        "profile",
        ({"role": "system", "content": SYSTEM + ROOFLINE_RULE}, {"role": "user", "content": user}),
        fmt,
    )


def _kernel_message(
    kernel: KernelInput, gpu: GPU, budget: int, fmt: AnswerFormat
) -> tuple[str, dict]:
    ctx = render_kernel(kernel.ir, kernel.launch, budget)
    user = (
        f"{gpu_block(gpu)}\n\n{ctx.text}\n\n"
        f"Is this kernel compute-bound or bandwidth-bound on this GPU? {ANSWER_TEXT[fmt]}"
    )
    notes = {
        "context_tokens": ctx.tokens,
        "truncated_lines": ctx.truncated_lines,
        "dropped_device_functions": ctx.dropped_device_functions,
    }
    return user, notes


def build_zero_shot(kernel: KernelInput, gpu: GPU, fmt: AnswerFormat, budget: int) -> Prompt:
    user, notes = _kernel_message(kernel, gpu, budget, fmt)
    return Prompt(
        "zero-shot",
        ({"role": "system", "content": SYSTEM + ROOFLINE_RULE}, {"role": "user", "content": user}),
        fmt,
        notes,
    )


def build_few_shot(
    kernel: KernelInput,
    gpu: GPU,
    fmt: AnswerFormat,
    budget: int,
    examples: Sequence[Example],
) -> Prompt:
    """k examples as earlier user/assistant turns, then the kernel; example budget = B/2."""
    if not examples:
        raise ValueError("the few-shot scenario needs at least one example")
    if any(e.kernel.key == kernel.key for e in examples):
        raise ValueError(f"{kernel.key}: a few-shot example is the kernel under test")
    messages: list[dict[str, str]] = [
        {
            "role": "system",
            "content": SYSTEM + ROOFLINE_RULE + " The first kernels come with their measured "
            "answer on this GPU.",
        }
    ]
    for example in examples:
        user, _ = _kernel_message(example.kernel, gpu, max(budget // 2, 64), fmt)
        messages.append({"role": "user", "content": user})
        messages.append({"role": "assistant", "content": _answer_line(example.label, fmt)})
    user, notes = _kernel_message(kernel, gpu, budget, fmt)
    messages.append({"role": "user", "content": user})
    notes["examples"] = [e.kernel.key for e in examples]
    return Prompt("few-shot", tuple(messages), fmt, notes)


FINETUNE_SYSTEM = (
    "Classify the GPU kernel as compute-bound or bandwidth-bound on the stated GPU "
    "(roofline model)."
)


def build_fine_tuned(kernel: KernelInput, gpu: GPU, fmt: AnswerFormat, budget: int) -> Prompt:
    """The short format a fine-tuned model was trained on (see `finetune.py`)."""
    ctx = render_kernel(kernel.ir, kernel.launch, budget)
    balance = ", ".join(
        f"{label} {_num(gpu.balance_points[k])}" for k, label in CLASSES if k in gpu.balance_points
    )
    user = (
        f"GPU: {gpu.name} (balance points {balance} ops/byte)\n\n{ctx.text}\n\n" + ANSWER_TEXT[fmt]
    )
    return Prompt(
        "fine-tuned",
        ({"role": "system", "content": FINETUNE_SYSTEM}, {"role": "user", "content": user}),
        fmt,
        {"context_tokens": ctx.tokens, "truncated_lines": ctx.truncated_lines},
    )


def static_summary(result: KernelResult) -> list[str]:
    """roofcast's counts and verdict for one kernel, from the JSON output contract."""
    data = result.to_json()
    lines = []
    threads = data.get("threads")
    if isinstance(threads, dict):
        threads = threads.get("total", threads.get("threads"))
    if threads not in (None, ""):
        lines.append(f"threads (or loop iterations) in the launch: {threads}")
    flops = data.get("flops_per_thread", {})
    lines.append(
        "per thread: "
        + ", ".join(
            f"{label} {flops.get(k, 0)}"
            for k, label in (("sp", "FP32 ops"), ("dp", "FP64 ops"), ("int", "INT ops"))
        )
    )
    nbytes = data.get("bytes_per_thread", {})
    lines.append(
        f"global memory per thread: {nbytes.get('load', 0)} bytes loaded, "
        f"{nbytes.get('store', 0)} bytes stored"
    )
    ai = data.get("arithmetic_intensity", {})
    if ai:
        lines.append(
            "static arithmetic intensity (ops per byte): "
            + ", ".join(f"{label} {ai[k]}" for k, label in CLASSES if k in ai)
        )
    symbols = data.get("symbols") or []
    if symbols:
        lines.append("sizes left symbolic (defaults applied): " + ", ".join(map(str, symbols)))
    bound = data.get("bound", "unknown")
    reason = f" ({data['reason']})" if data.get("reason") else ""
    spoke = data.get("predictor") or "roofline"
    lines.append(f"static verdict ({spoke} predictor): {bound}-bound{reason}")
    return [
        line if len(line) <= MAX_SUMMARY_LINE else line[: MAX_SUMMARY_LINE - 3] + "..."
        for line in lines
    ]


def build_hybrid(kernel: KernelInput, gpu: GPU, budget: int) -> Prompt:
    if kernel.result is None:
        raise ValueError(f"{kernel.key}: the hybrid scenario needs the static analysis result")
    ctx = render_kernel(kernel.ir, kernel.launch, budget)
    summary = "\n".join(f"- {line}" for line in static_summary(kernel.result))
    user = (
        f"{gpu_block(gpu)}\n\n{ctx.text}\n\n"
        f"A static analyser counted this kernel:\n{summary}\n\n"
        "Static counts cannot see cache reuse (data kept in L2 or shared memory moves fewer "
        "DRAM bytes than it loads), real problem sizes or library calls. Confirm or overturn "
        "the static verdict, and say why in one sentence. " + ANSWER_TEXT["json_reason"]
    )
    return Prompt(
        "hybrid",
        ({"role": "system", "content": SYSTEM + ROOFLINE_RULE}, {"role": "user", "content": user}),
        "json_reason",
        {"context_tokens": ctx.tokens, "truncated_lines": ctx.truncated_lines},
    )


def build_prompt(
    scenario: str,
    kernel: KernelInput,
    gpu: GPU,
    structured_mode: str = "grammar",
    budget: int = DEFAULT_BUDGET,
    examples: Sequence[Example] = (),
) -> Prompt:
    """Dispatch on the scenario name; ValueError for an unknown one or missing inputs."""
    fmt = answer_format_for(scenario, structured_mode)
    if scenario == "profile":
        return build_profile(kernel, gpu, fmt)
    if scenario == "zero-shot":
        return build_zero_shot(kernel, gpu, fmt, budget)
    if scenario == "few-shot":
        return build_few_shot(kernel, gpu, fmt, budget, examples)
    if scenario == "fine-tuned":
        return build_fine_tuned(kernel, gpu, fmt, budget)
    if scenario == "hybrid":
        return build_hybrid(kernel, gpu, budget)
    raise ValueError(f"unknown scenario {scenario!r}; one of {', '.join(SCENARIOS)}")


__all__ = [
    "BANDWIDTH",
    "COMPUTE",
    "SCENARIOS",
    "Example",
    "KernelInput",
    "Prompt",
    "build_prompt",
    "gpu_block",
]
