"""The LLM as a Predictor (name "llm"), so `analyze` and `evaluate` use it like any other.

Each `predict` builds the scenario's prompt for one kernel and asks it through the store
(a kernel asked before costs nothing). An unparsed or failed answer is an `unknown` verdict
with the reason, never a guess. The profile scenario reads measured figures from
`LaunchContext.extra` (dram_bytes, sp_flops, dp_flops, int_ops, xtime_ns).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from roofcast.llm.ask import Answer, Asker
from roofcast.llm.client import LLMClient
from roofcast.llm.config import LLMConfig
from roofcast.llm.context import DEFAULT_BUDGET
from roofcast.llm.prompts import KernelInput, build_prompt
from roofcast.llm.store import Store
from roofcast.predictors.base import LaunchContext, Verdict

if TYPE_CHECKING:
    from roofcast.gpu_specs import GPU
    from roofcast.llm.fewshot import ExamplePool
    from roofcast.pipeline import KernelResult


@dataclass
class LLMPredictor:
    """Predictor protocol over one model and scenario (default: hybrid)."""

    config: LLMConfig
    scenario: str = "hybrid"
    store: Store | None = None
    budget: int = DEFAULT_BUDGET
    k: int = 2
    pool: ExamplePool | None = None
    name: str = "llm"

    def __post_init__(self) -> None:
        self.store = self.store or Store()
        self._asker = Asker(self.config, self.store, LLMClient(self.config))

    def predict(
        self, kernel: KernelResult, gpu: GPU, context: LaunchContext | None = None
    ) -> Verdict:
        ir = kernel.ir
        kernel_input = KernelInput(
            key=ir.id, ir=ir, launch=context, result=kernel,
            measured=dict(context.extra) if context else {},
        )
        try:
            examples = ()
            if self.scenario == "few-shot":
                if self.pool is None:
                    from roofcast.llm.fewshot import corpus_pool

                    self.pool = corpus_pool(gpu)
                examples = self.pool.pick(kernel_input, self.k, self.budget)
            prompt = build_prompt(
                self.scenario, kernel_input, gpu, self.config.structured_mode, self.budget,
                examples,
            )
        except ValueError as exc:
            return Verdict("unknown", f"no prompt: {exc}", self.name)
        return to_verdict(self._asker.ask(prompt, ir.id), self.name)


def to_verdict(answer: Answer, name: str = "llm") -> Verdict:
    """Answer -> Verdict; the reason says what the model said (or why nothing usable)."""
    details: dict[str, object] = {
        "model": answer.model, "scenario": answer.scenario, "answer": answer.label,
        "store_hits": answer.hits, "prompt_tokens": answer.prompt_tokens,
        "completion_tokens": answer.completion_tokens, "cost_usd": answer.cost_usd,
    }
    if answer.bound == "unknown":
        why = answer.error or (
            "the reply was neither Compute nor Bandwidth" if answer.label == "unparsed"
            else answer.label
        )
        return Verdict("unknown", f"{answer.model} ({answer.scenario}): {why}", name,
                       details=details)
    reason = answer.reason or f"{answer.model} ({answer.scenario}) answered {answer.label}"
    return Verdict(answer.bound, reason, name, confidence=answer.confidence, details=details)
