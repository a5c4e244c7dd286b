"""Ask one prompt: serve it from the store when it was asked before, else from the endpoint.

n samples are n requests (sample index in the key, seed + index), answered and stored one
by one, then majority-voted. With `replay`, nothing is sent: samples missing from the store
are reported as `missing`.
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field

import openai
from roofcast.llm.answers import (
    UNPARSED,
    ParsedAnswer,
    label_confidence,
    majority_vote,
    parse_answer,
)
from roofcast.llm.client import (
    EndpointError,
    LLMClient,
    Request,
    build_request,
    effective_mode,
    is_fatal,
)
from roofcast.llm.config import LLMConfig
from roofcast.llm.cost import estimate_cost
from roofcast.llm.prompts import Prompt
from roofcast.llm.store import Store, StoredRequest

ERROR = "error"
MISSING = "missing"


@dataclass
class Answer:
    """The voted answer for one kernel and what it took."""

    kernel_id: str
    scenario: str
    model: str
    label: str  # Compute | Bandwidth | unparsed | error | missing
    confidence: float | None = None
    reason: str = ""
    samples: list[StoredRequest] = field(default_factory=list)
    hits: int = 0
    sent: int = 0
    missing: int = 0
    error: str | None = None

    @property
    def prompt_tokens(self) -> int:
        return sum(s.prompt_tokens or 0 for s in self.samples)

    @property
    def completion_tokens(self) -> int:
        return sum(s.completion_tokens or 0 for s in self.samples)

    @property
    def cost_usd(self) -> float | None:
        costs = [s.cost_usd for s in self.samples]
        return None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)

    @property
    def latency_s(self) -> float:
        return sum(s.latency_s or 0.0 for s in self.samples)

    @property
    def bound(self) -> str:
        """`compute` / `bandwidth` / `unknown`, the Verdict vocabulary."""
        return self.label.lower() if self.label in ("Compute", "Bandwidth") else "unknown"


class Asker:
    """Store-first answering for one config; thread-safe (the store serialises writes)."""

    def __init__(
        self,
        config: LLMConfig,
        store: Store,
        client: LLMClient | None = None,
        model_id: str | None = None,
        replay: bool = False,
    ) -> None:
        if client is None and not replay:
            raise ValueError("an Asker needs a client unless it replays from the store")
        self.config = config
        self.store = store
        self.client = client
        self.replay = replay
        self._model_id = model_id
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        with self._lock:
            if self._model_id is None:
                if self.client is None:
                    raise EndpointError("replay needs the model name as stored")
                self._model_id = self.client.model_id()
            return self._model_id

    def request(self, prompt: Prompt, sample: int) -> Request:
        return build_request(
            self.config, self.model_id, prompt, sample,
            effective_mode(self.config, prompt.scenario),
        )

    def ask(self, prompt: Prompt, kernel_id: str) -> Answer:
        answer = Answer(kernel_id, prompt.scenario, self.model_id, UNPARSED)
        parsed: list[ParsedAnswer] = []
        errors: list[str] = []
        for sample in range(self.config.n):
            request = self.request(prompt, sample)
            stored = self.store.get(request.request_hash)
            if stored is not None and stored.error is None:
                answer.hits += 1
            elif self.replay:
                answer.missing += 1
                continue
            else:
                stored = self._send(request, kernel_id)
                answer.sent += 1
            answer.samples.append(stored)
            if stored.error is not None:
                errors.append(stored.error)
                continue
            parsed.append(
                ParsedAnswer(stored.answer or UNPARSED, stored.reason or "", stored.confidence)
            )
        if not parsed:
            answer.label = MISSING if answer.missing and not errors else ERROR
            answer.error = errors[-1] if errors else None
            return answer
        vote = majority_vote(parsed)
        answer.label = vote.label
        answer.confidence = vote.confidence
        answer.reason = next((p.reason for p in parsed if p.label == vote.label and p.reason), "")
        return answer

    def _send(self, request: Request, kernel_id: str) -> StoredRequest:
        assert self.client is not None
        record = StoredRequest(
            request_hash=request.request_hash,
            prompt_hash=request.prompt_hash,
            scenario=request.prompt.scenario,
            model=self.model_id,
            base_url=self.client.endpoint,
            params=json.dumps(_public_params(self.config, request), sort_keys=True),
            kernel_id=kernel_id,
            sample=request.sample,
        )
        try:
            reply = self.client.send(request)
        except openai.APIConnectionError as exc:
            if isinstance(exc, openai.APITimeoutError):
                record.error = self.client.describe(exc)
                self.store.put(record)
                return record
            raise EndpointError(
                f"endpoint {self.client.endpoint} unreachable: {self.client.describe(exc)}"
            ) from None
        except openai.APIError as exc:
            if is_fatal(exc):
                raise EndpointError(
                    f"endpoint {self.client.endpoint}: {self.client.describe(exc)}"
                ) from None
            record.error = self.client.describe(exc)
            self.store.put(record)
            return record
        except Exception as exc:  # noqa: BLE001 - an odd server reply is recorded, not fatal
            record.error = self.client.describe(exc)
            self.store.put(record)
            return record
        parsed = parse_answer(reply.text)
        record.answer = parsed.label
        record.reason = parsed.reason or None
        record.confidence = (
            label_confidence(reply.text, parsed.label, reply.tokens) if parsed.parsed else None
        )
        record.raw_text = reply.text
        record.finish_reason = reply.finish_reason
        record.prompt_tokens = reply.prompt_tokens
        record.completion_tokens = reply.completion_tokens
        record.latency_s = round(reply.latency_s, 4)
        record.cost_usd = estimate_cost(
            self.model_id,
            reply.prompt_tokens,
            reply.completion_tokens,
            local=self.config.is_local,
            price_in_per_m=self.config.price_in_per_m,
            price_out_per_m=self.config.price_out_per_m,
        )
        self.store.put(record)
        return record


def _public_params(config: LLMConfig, request: Request) -> dict:
    """What was asked, minus the messages (hashed) and with no secret."""
    identity = {k: v for k, v in request.identity.items() if k != "messages"}
    identity["timeout_s"] = config.timeout_s
    identity["answer_format"] = request.prompt.answer_format
    return identity
