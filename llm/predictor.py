"""The LLM as a Predictor (name "llm"), so `analyze` and `evaluate` use it like any other.

`predict` takes a batch, as every predictor does (`roofcast.predictors.base`): it builds the
scenario's prompt for each kernel and asks them through the store (a kernel asked before
costs nothing), `concurrency` requests in flight. An unparsed or failed answer is an
`unknown` verdict with the reason, never a guess. The profile scenario reads measured figures from
`LaunchContext.extra` (dram_bytes, sp_flops, dp_flops, int_ops, xtime_ns).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, cast

from roofcast.llm.ask import Answer, Asker
from roofcast.llm.client import LLMClient, effective_mode
from roofcast.llm.config import LOCAL_ALIAS, LLMConfig
from roofcast.llm.context import DEFAULT_BUDGET
from roofcast.llm.prompts import SCENARIOS, KernelInput, build_prompt
from roofcast.llm.store import Store

from roofcast.predictors.base import Bound, Item, Verdict, check_items
from roofcast.results import KernelResult, LaunchContext

if TYPE_CHECKING:
    from roofcast.gpu_specs import GPU
    from roofcast.llm.fewshot import ExamplePool
    from roofcast.llm.prompts import Example


#: String options `get_predictor("llm", **options)` and `evaluate -o KEY=VALUE` accept.
OPTION_FIELDS: dict[str, tuple[str, type]] = {
    "base_url": ("base_url", str),
    "api_key_env": ("api_key_env", str),
    "structured": ("structured", str),
    "temperature": ("temperature", float),
    "top_p": ("top_p", float),
    "timeout": ("timeout_s", float),
    "max_tokens": ("max_tokens", int),
    "seed": ("seed", int),
    "n": ("n", int),
    "samples": ("n", int),
    "retries": ("retries", int),
}


class LLMPredictor:
    """Predictor protocol over one model and scenario (default: hybrid).

    `LLMPredictor(model="gpt-4o", scenario="hybrid", base_url=..., temperature="0")`: the
    endpoint options may be strings (as `evaluate -o KEY=VALUE` passes them), or give a
    ready `config`. `store` is a Store or a path; `budget`, `k` and `replay` (answers from
    the store only, no endpoint) as in `roofcast llm run`; `concurrency`: requests in flight
    while a batch is predicted.
    """

    name = "llm"

    def __init__(
        self,
        model: str | None = None,
        scenario: str = "hybrid",
        config: LLMConfig | None = None,
        store: Store | str | None = None,
        budget: int | str = DEFAULT_BUDGET,
        k: int | str = 2,
        pool: ExamplePool | None = None,
        replay: bool = False,
        concurrency: int | str = 1,
        **options: object,
    ) -> None:
        if scenario not in SCENARIOS:
            raise ValueError(f"unknown scenario {scenario!r}; one of {', '.join(SCENARIOS)}")
        if config is not None and (model or options):
            raise ValueError("give either config or model/endpoint options, not both")
        self.config = config or self._config(model or "local", options)
        self.scenario = scenario
        self.store = store if isinstance(store, Store) else Store(store)
        self.budget = int(budget)
        self.k = int(k)
        self.pool = pool
        self.concurrency = max(1, int(concurrency))
        if replay:  # score from the store only, as `roofcast llm run --replay`
            model_id = replay_model_id(self.config, self.store)
            self._asker = Asker(self.config, self.store, None, model_id=model_id, replay=True)
        else:
            self._asker = Asker(self.config, self.store, LLMClient(self.config))

    @staticmethod
    def _config(model: str, options: dict[str, object]) -> LLMConfig:
        args: dict[str, object] = {"model": model}
        for key, value in options.items():
            key = key.replace("-", "_")
            if key not in OPTION_FIELDS:
                raise ValueError(
                    f"unknown llm option {key!r}; known: model, scenario, store, "
                    f"budget, k, {', '.join(OPTION_FIELDS)}"
                )
            field_name, kind = OPTION_FIELDS[key]
            try:
                args[field_name] = value if value is None else kind(value)
            except (TypeError, ValueError):
                raise ValueError(f"llm option {key}={value!r} is not a {kind.__name__}") from None
        return LLMConfig(**args)  # type: ignore[arg-type]

    def check(self) -> str:
        """Resolve the model now (the local server is asked for its model name), so a dead
        endpoint fails once, up front, with EndpointError; returns the model id."""
        if self._asker.client is not None:
            self._asker.client.probe()
        return self._asker.model_id

    @classmethod
    def from_options(cls, **options: str) -> LLMPredictor:
        """Same as the constructor; kept for registries that pass string options."""
        return cls(**options)  # type: ignore[arg-type]

    def predict(self, items: Sequence[Item], gpu: GPU) -> list[Verdict]:
        """One verdict per item, in order; `concurrency` requests in flight."""
        items = check_items(items, gpu)
        if self.scenario == "few-shot" and self.pool is None and items:
            from roofcast.llm.fewshot import corpus_pool

            try:
                self.pool = corpus_pool(gpu)
            except ValueError as exc:
                return [Verdict("unknown", f"no prompt: {exc}", self.name) for _ in items]
        if self.concurrency == 1 or len(items) < 2:
            return [self._predict_one(kernel, context, gpu) for kernel, context in items]
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(lambda item: self._predict_one(item[0], item[1], gpu), items))

    def _predict_one(
        self, kernel: KernelResult, context: LaunchContext | None, gpu: GPU
    ) -> Verdict:
        ir = kernel.ir
        kernel_input = KernelInput(
            key=ir.id,
            ir=ir,
            launch=context,
            result=kernel,
            measured=dict(context.extra) if context else {},
        )
        try:
            examples: Sequence[Example] = ()
            if self.scenario == "few-shot" and self.pool is not None:
                examples = self.pool.pick(kernel_input, self.k, self.budget)
            prompt = build_prompt(
                self.scenario,
                kernel_input,
                gpu,
                effective_mode(self.config, self.scenario),
                self.budget,
                examples,
            )
        except ValueError as exc:
            return Verdict("unknown", f"no prompt: {exc}", self.name)
        return to_verdict(self._asker.ask(prompt, ir.id), self.name)


def replay_model_id(config: LLMConfig, store: Store) -> str:
    """The stored model name a replay scores: `local` means the one local model the store
    holds (its name depends on the server that answered); ValueError when that is ambiguous."""
    if config.model != LOCAL_ALIAS:
        return config.model
    local = [m for m in store.models() if m.startswith(LOCAL_ALIAS + ":")]
    if len(local) != 1:
        names = ", ".join(local) or "none"
        raise ValueError(
            f"--replay with --model local: the store holds local models {names}; "
            "name one with --model local:NAME"
        )
    return local[0]


def to_verdict(answer: Answer, name: str = "llm") -> Verdict:
    """Answer -> Verdict; the reason says what the model said (or why nothing usable)."""
    details: dict[str, object] = {
        "model": answer.model,
        "scenario": answer.scenario,
        "answer": answer.label,
        "store_hits": answer.hits,
        "prompt_tokens": answer.prompt_tokens,
        "completion_tokens": answer.completion_tokens,
        "cost_usd": answer.cost_usd,
    }
    if answer.bound == "unknown":
        why = answer.error or (
            "the reply was neither Compute nor Bandwidth"
            if answer.label == "unparsed"
            else answer.label
        )
        return Verdict(
            "unknown", f"{answer.model} ({answer.scenario}): {why}", name, details=details
        )
    reason = answer.reason or f"{answer.model} ({answer.scenario}) answered {answer.label}"
    bound = cast(Bound, answer.bound)  # an answered label: compute or bandwidth
    return Verdict(bound, reason, name, confidence=answer.confidence, details=details)
