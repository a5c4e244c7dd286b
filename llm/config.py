"""Endpoint and sampling settings of one LLM campaign, and where its secret comes from.

The API key is read from the environment at the moment a client is made and lives only in
that client: it is never a field here, so it cannot reach the store, a log or a report.
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, replace
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

#: How the answer is constrained: llama.cpp GBNF grammar, OpenAI json_schema, or free text.
Structured = Literal["auto", "grammar", "json_schema", "none"]
STRUCTURED_MODES: tuple[str, ...] = ("auto", "grammar", "json_schema", "none")

#: `--model local` / `--llm local` talk to `roofcast llm serve` on this address by default.
LOCAL_HOST = "127.0.0.1"
LOCAL_PORT = 8642
LOCAL_ALIAS = "local"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
#: Env var that overrides where `local` points (e.g. a server on another port).
LOCAL_URL_ENV = "ROOFCAST_LLM_LOCAL_URL"


class ConfigError(ValueError):
    """A setting that cannot work (missing key for a remote endpoint, bad value)."""


def local_base_url() -> str:
    return os.environ.get(LOCAL_URL_ENV) or f"http://{LOCAL_HOST}:{LOCAL_PORT}/v1"


def is_local_url(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    return host in {"127.0.0.1", "localhost", "::1"}


def redact_url(url: str | None) -> str | None:
    """The URL without user:password and query string, fit to store or print."""
    if not url:
        return url
    parts = urlsplit(url)
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


@dataclass(frozen=True)
class LLMConfig:
    """Everything that decides which endpoint is asked and how (secrets excepted)."""

    model: str = LOCAL_ALIAS
    base_url: str | None = None  # None: OpenAI's default, or the local server for `local`
    api_key_env: str = DEFAULT_KEY_ENV
    temperature: float | None = 0.0
    top_p: float | None = None
    max_tokens: int | None = None  # None: the scenario's default (one word vs JSON + reason)
    seed: int | None = 0
    n: int = 1  # samples per kernel; majority vote over them
    timeout_s: float = 120.0
    retries: int = 4
    structured: Structured = "auto"
    logprobs: bool = True
    top_logprobs: int = 10
    #: A server on this machine (no key needed, no cost); None: inferred from model and URL.
    local_server: bool | None = None
    price_in_per_m: float | None = None  # USD per 1M prompt tokens (overrides the table)
    price_out_per_m: float | None = None

    def __post_init__(self) -> None:
        if self.structured not in STRUCTURED_MODES:
            raise ConfigError(f"structured output must be one of {', '.join(STRUCTURED_MODES)}")
        if self.n < 1:
            raise ConfigError("n (samples) must be at least 1")
        if self.temperature is not None and not 0 <= self.temperature <= 2:
            raise ConfigError("temperature must be within 0..2")
        if self.top_p is not None and not 0 < self.top_p <= 1:
            raise ConfigError("top_p must be within (0, 1]")
        if self.timeout_s <= 0:
            raise ConfigError("timeout must be positive")

    @property
    def local_alias(self) -> bool:
        """`local` or `local:<model file>`: the model served by `roofcast llm serve`."""
        return self.model == LOCAL_ALIAS or self.model.startswith(LOCAL_ALIAS + ":")

    @property
    def resolved_base_url(self) -> str | None:
        if self.base_url:
            return self.base_url.rstrip("/")
        if self.local_alias:
            return local_base_url()
        return None

    @property
    def is_local(self) -> bool:
        if self.local_server is not None:
            return self.local_server
        if self.local_alias:
            return True
        url = self.resolved_base_url
        return is_local_url(url) if url else False

    @property
    def structured_mode(self) -> str:
        """`auto`: GBNF grammar on `roofcast llm serve` (llama.cpp), json_schema elsewhere
        (OpenAI, vLLM, Ollama and llama.cpp all accept it)."""
        if self.structured != "auto":
            return self.structured
        return "grammar" if self.local_alias else "json_schema"

    def api_key(self) -> str:
        """The key from the named env var; local servers need none. Never store the result."""
        key = os.environ.get(self.api_key_env, "").strip()
        if key:
            return key
        if self.is_local:
            return "no-key-needed"
        raise ConfigError(
            f"no API key: set {self.api_key_env} (or name another variable with --api-key-env)"
        )

    def with_model(self, model: str) -> LLMConfig:
        return replace(self, model=model)

    def public(self) -> dict:
        """Settings fit to store or print: no secrets, URL redacted."""
        out = asdict(self)
        out["base_url"] = redact_url(self.resolved_base_url)
        return out
