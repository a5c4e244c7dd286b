"""`roofcast llm export-finetune`: manifest rows -> OpenAI chat fine-tuning JSONL.

Each line is `{"messages": [system, user, assistant]}` where system and user are exactly what
the `fine-tuned` scenario sends at inference (same builder, same budget) and the assistant
turn is the profiled label, so the trained model meets its training format again.
"""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from roofcast.llm.context import DEFAULT_BUDGET
from roofcast.llm.prompts import KernelInput, build_fine_tuned

if TYPE_CHECKING:
    from roofcast.gpu_specs import GPU

#: OpenAI rejects fine-tuning files with fewer examples than this.
MIN_EXAMPLES = 10


def finetune_record(kernel: KernelInput, gpu: GPU, budget: int, answer_format: str) -> dict:
    if kernel.truth is None:
        raise ValueError(f"{kernel.key}: no label to train on")
    prompt = build_fine_tuned(kernel, gpu, answer_format, budget)  # type: ignore[arg-type]
    reply = kernel.truth if answer_format == "word" else json.dumps({"bound": kernel.truth})
    return {"messages": [*map(dict, prompt.messages), {"role": "assistant", "content": reply}]}


def write_jsonl(
    kernels: Sequence[KernelInput],
    gpu: GPU,
    out: Path,
    budget: int = DEFAULT_BUDGET,
    answer_format: str = "word",
    exclude_families: Iterable[str] = (),
) -> Counter:
    """Write one training line per kernel (families in `exclude_families` left out)."""
    excluded = set(exclude_families)
    counts: Counter = Counter()
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    with partial.open("w", encoding="utf-8") as handle:
        for kernel in kernels:
            if kernel.family and kernel.family in excluded:
                counts["excluded"] += 1
                continue
            record = finetune_record(kernel, gpu, budget, answer_format)
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            counts[kernel.truth or "?"] += 1
    partial.replace(out)
    return counts
