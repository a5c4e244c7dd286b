"""roofcast.llm: the paper's LLM scenarios (plus a hybrid) against any OpenAI-compatible server.

Modules, one job each: `config` (settings, key from env), `context` (what the model sees,
budget), `prompts` (scenario builders), `structured` (grammar / json_schema), `answers`
(parse, confidence, vote), `client` (openai + retries), `store` (SQLite, resumable),
`ask` (store-first answering), `campaign` (concurrency, progress, scores), `dataset`
(manifest rows -> kernels), `fewshot` (examples), `finetune` (JSONL export), `predictor`
(the Predictor protocol), `serve` (local llama.cpp server), `cost` (price table).
Imports here stay light: the openai client is only loaded by modules that talk to a server.
"""
from __future__ import annotations

from roofcast.llm.answers import BANDWIDTH, COMPUTE, UNPARSED, parse_answer
from roofcast.llm.config import LLMConfig
from roofcast.llm.prompts import SCENARIOS

__all__ = ["BANDWIDTH", "COMPUTE", "SCENARIOS", "UNPARSED", "LLMConfig", "LLMPredictor",
           "parse_answer"]


def __getattr__(name: str):
    if name == "LLMPredictor":
        from roofcast.llm.predictor import LLMPredictor

        return LLMPredictor
    raise AttributeError(name)
