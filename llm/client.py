"""One client for any OpenAI-compatible endpoint, with retries and request identities.

`openai` does the HTTP; tenacity retries timeouts, connection failures, 429 and 5xx with
exponential backoff and full jitter (the SDK's own retries are off so there is one policy).
Every request gets a hash of what decides its reply, the store's key.
"""
from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import PurePath

import openai
from roofcast.llm.config import LOCAL_ALIAS, LLMConfig, redact_url
from roofcast.llm.prompts import Prompt
from roofcast.llm.structured import constraint_kwargs
from tenacity import (
    RetryError,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_random_exponential,
)

#: Completion tokens when the caller sets none: a word, a small JSON object, JSON + a sentence.
DEFAULT_MAX_TOKENS = {"word": 8, "json": 16, "json_reason": 120}
BACKOFF_MAX_S = 20.0
#: OpenAI reasoning models (o1, o3, o4-mini, gpt-5...; fine-tuned ones too).
REASONING_MODELS = re.compile(r"^(?:ft:)?(?:o\d|gpt-5)")
#: Their completion budget includes hidden reasoning tokens, so one word needs far more.
REASONING_MAX_TOKENS = 4096


class EndpointError(RuntimeError):
    """The endpoint cannot serve this campaign (unreachable, auth, unknown model)."""


@dataclass
class Request:
    """Everything sent for one sample of one prompt, and its identity in the store."""

    prompt: Prompt
    sample: int
    kwargs: dict
    extra_body: dict
    identity: dict
    request_hash: str
    prompt_hash: str


@dataclass
class Reply:
    text: str
    finish_reason: str | None
    tokens: list[dict] = field(default_factory=list)  # logprob entries (plain dicts)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float = 0.0


def _hash(data: object) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def prompt_hash(prompt: Prompt) -> str:
    return _hash([dict(m) for m in prompt.messages])


def is_transient(exc: BaseException) -> bool:
    """Worth retrying: timeouts, connection failures, rate limits, server errors."""
    if isinstance(exc, (openai.APIConnectionError, openai.RateLimitError)):
        return True
    return isinstance(exc, openai.APIStatusError) and exc.status_code >= 500


def is_fatal(exc: BaseException) -> bool:
    """No request of the campaign can succeed: bad key, no access, unknown model or route."""
    return isinstance(
        exc, (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError)
    )


def describe(exc: BaseException, secret: str | None = None) -> str:
    """A one-line description of an API failure, with any secret scrubbed."""
    if isinstance(exc, RetryError):
        exc = exc.last_attempt.exception() or exc
    if isinstance(exc, openai.APITimeoutError):
        text = "request timed out"
    elif isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        text = f"connection failed ({cause})" if cause else "connection failed"
    elif isinstance(exc, openai.APIStatusError):
        text = f"HTTP {exc.status_code}: {_short(exc.message)}"
    else:
        text = f"{type(exc).__name__}: {_short(str(exc))}"
    text = " ".join(text.split())
    if secret and secret in text:
        text = text.replace(secret, "***")
    return text[:500]


def _short(message: object) -> str:
    return str(message).splitlines()[0] if message else ""


class LLMClient:
    """Sends chat requests for one `LLMConfig`; resolves `local` to the served model's name."""

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self._secret = config.api_key()
        self._client = openai.OpenAI(
            base_url=config.resolved_base_url,
            api_key=self._secret,
            timeout=config.timeout_s,
            max_retries=0,
        )
        self._model_id: str | None = None

    @property
    def endpoint(self) -> str:
        return redact_url(str(self._client.base_url)) or ""

    def model_id(self) -> str:
        """The model name requests and the store use; `local` becomes `local:<served file>`."""
        if self._model_id is None:
            self._model_id = resolve_model(self.config, self._list_models)
        return self._model_id

    def probe(self) -> None:
        """Reach the endpoint once (its model list) so a dead or unauthorised endpoint fails
        up front in one line; a server without a model list (404) is let through."""
        import openai

        try:
            self._retrying(self._client.models.list)
        except openai.NotFoundError:
            return
        except Exception as exc:  # noqa: BLE001 - every failure becomes one line
            message = describe(exc, self._secret)
            raise EndpointError(f"endpoint {self.endpoint}: {message}") from None

    def _list_models(self) -> list[str]:
        try:
            return [m.id for m in self._retrying(self._client.models.list)]
        except Exception as exc:  # noqa: BLE001 - every failure becomes one line
            message = describe(exc, self._secret)
            raise EndpointError(f"endpoint {self.endpoint}: {message}") from None

    def _retrying(self, fn, *args, **kwargs):
        retrying = Retrying(
            retry=retry_if_exception(is_transient),
            wait=wait_random_exponential(multiplier=0.5, max=BACKOFF_MAX_S),
            stop=stop_after_attempt(self.config.retries + 1),
            reraise=True,
        )
        return retrying(fn, *args, **kwargs)

    def send(self, request: Request) -> Reply:
        """One request with retries; raises the last API error when they are spent.
        The latency is the wall time of the call, retries and backoff included."""
        start = time.perf_counter()
        response = self._retrying(
            self._client.chat.completions.create,
            messages=[dict(m) for m in request.prompt.messages],
            extra_body=request.extra_body or None,
            **request.kwargs,
        )
        latency = time.perf_counter() - start
        choice = response.choices[0]
        tokens: list[dict] = []
        content_lp = getattr(getattr(choice, "logprobs", None), "content", None) or []
        for entry in content_lp:
            tokens.append(
                {
                    "token": entry.token,
                    "logprob": entry.logprob,
                    "top_logprobs": [
                        {"token": t.token, "logprob": t.logprob}
                        for t in (entry.top_logprobs or [])
                    ],
                }
            )
        usage = response.usage
        return Reply(
            text=choice.message.content or "",
            finish_reason=choice.finish_reason,
            tokens=tokens,
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None),
            latency_s=latency,
        )

    def describe(self, exc: BaseException) -> str:
        return describe(exc, self._secret)


def resolve_model(config: LLMConfig, list_models=None) -> str:
    """`local` -> `local:<basename of the served model>`; other names are used as given."""
    if config.model != LOCAL_ALIAS:
        return config.model  # `local:<file>` names the served model already
    if list_models is None:
        raise EndpointError("the local model's name needs the server (or pass --model local:NAME)")
    served = list_models()
    if not served:
        raise EndpointError("the local server lists no model")
    return f"{LOCAL_ALIAS}:{PurePath(served[0]).name}"


def effective_mode(config: LLMConfig, scenario: str) -> str:
    """The structured mode for a scenario: a fine-tuned model answers in its trained format,
    so `auto` sends it no schema on a remote endpoint."""
    if config.structured == "auto" and scenario == "fine-tuned" and not config.local_alias:
        return "none"
    return config.structured_mode


def build_request(
    config: LLMConfig, model_id: str, prompt: Prompt, sample: int, mode: str
) -> Request:
    """Pure: the create() arguments and the identity hash; no network."""
    reasoning = bool(REASONING_MODELS.match(model_id))
    max_tokens = config.max_tokens or (
        REASONING_MAX_TOKENS if reasoning else DEFAULT_MAX_TOKENS[prompt.answer_format]
    )
    sent_model = LOCAL_ALIAS if model_id.startswith(LOCAL_ALIAS + ":") else model_id
    kwargs: dict = {"model": sent_model}
    seed = None if config.seed is None else config.seed + sample
    if reasoning:
        # reasoning models take max_completion_tokens (thinking included) and reject
        # temperature, top_p and logprobs
        kwargs["max_completion_tokens"] = max_tokens
    else:
        kwargs["max_tokens"] = max_tokens
        if config.temperature is not None:
            kwargs["temperature"] = config.temperature
        if config.top_p is not None:
            kwargs["top_p"] = config.top_p
        if seed is not None:
            kwargs["seed"] = seed
        if config.logprobs:
            kwargs["logprobs"] = True
            if config.top_logprobs:
                kwargs["top_logprobs"] = config.top_logprobs
    constraint, extra_body = constraint_kwargs(mode, prompt.answer_format)
    kwargs.update(constraint)
    if mode == "grammar":  # llama.cpp: answers must not depend on its KV cache state
        extra_body = {**extra_body, "cache_prompt": False}
    identity = {
        "model": model_id,
        "messages": [dict(m) for m in prompt.messages],
        "max_tokens": max_tokens,
        "temperature": config.temperature,
        "top_p": config.top_p,
        "seed": seed,
        "structured": mode,
        "answer_format": prompt.answer_format,
        "logprobs": config.logprobs,
        "top_logprobs": config.top_logprobs if config.logprobs else None,
        "sample": sample,
    }
    if reasoning:
        identity["reasoning_model"] = True
    return Request(
        prompt=prompt,
        sample=sample,
        kwargs=kwargs,
        extra_body=extra_body,
        identity=identity,
        request_hash=_hash(identity),
        prompt_hash=prompt_hash(prompt),
    )
