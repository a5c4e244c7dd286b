"""Constrained decoding payloads: a GBNF grammar (llama.cpp) or an OpenAI json_schema.

Both force the reply into the shapes `answers.parse_answer` accepts, so a small model
answers in one word (or one JSON object) instead of an essay.
"""
from __future__ import annotations

#: Longest reason the hybrid grammar lets through (characters); one sentence.
REASON_CHARS = 240

_LABEL = '("Compute" | "Bandwidth")'
GRAMMARS: dict[str, str] = {
    "word": f"root ::= {_LABEL}\n",
    "json": f'root ::= "{{\\"bound\\": \\"" {_LABEL} "\\"}}"\n',
    "json_reason": (
        f'root ::= "{{\\"bound\\": \\"" {_LABEL} "\\", \\"reason\\": \\"" reason "\\"}}"\n'
        f'reason ::= [^"\\\\\\n]{{1,{REASON_CHARS}}}\n'
    ),
}

_BOUND = {"type": "string", "enum": ["Compute", "Bandwidth"]}


def json_schema(answer_format: str) -> dict:
    """The OpenAI `response_format` for a JSON answer (strict: no other keys)."""
    properties: dict[str, dict] = {"bound": _BOUND}
    if answer_format == "json_reason":
        properties["reason"] = {"type": "string"}
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "roofline_verdict",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": properties,
                "required": list(properties),
                "additionalProperties": False,
            },
        },
    }


def constraint_kwargs(mode: str, answer_format: str) -> tuple[dict, dict]:
    """(create() keyword args, extra_body) that constrain the answer under `mode`."""
    if mode == "grammar":
        return {}, {"grammar": GRAMMARS[answer_format]}
    if mode == "json_schema" and answer_format != "word":
        return {"response_format": json_schema(answer_format)}, {}
    return {}, {}
