"""Turn a model's reply into `Compute`, `Bandwidth` or `unparsed`; never guess.

Accepted replies: exactly one of the two words (case-insensitive; surrounding spaces and
quotes, one trailing full stop and a `-bound` / ` bound` suffix allowed), or a JSON object
whose `bound` (or `verdict`) field is one of them. Anything else, including a reply that
names both or is cut short, is `unparsed`.
Confidence comes from the first answer token's logprobs, renormalised over the two labels.
"""
from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

COMPUTE = "Compute"
BANDWIDTH = "Bandwidth"
UNPARSED = "unparsed"
LABELS: tuple[str, str] = (COMPUTE, BANDWIDTH)
JSON_FIELDS = ("bound", "verdict", "answer", "label")

_WORD = re.compile(
    r"""^\s*["'`*]*\s*(compute|bandwidth)(?:[- ]bound)?\s*["'`*]*\s*\.?\s*$""", re.IGNORECASE
)
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


@dataclass(frozen=True)
class ParsedAnswer:
    label: str  # COMPUTE, BANDWIDTH or UNPARSED
    reason: str = ""
    confidence: float | None = None

    @property
    def parsed(self) -> bool:
        return self.label != UNPARSED


def _canonical(word: object) -> str | None:
    if not isinstance(word, str):
        return None
    match = _WORD.match(word)
    if not match:
        return None
    return COMPUTE if match.group(1).lower() == "compute" else BANDWIDTH


def parse_answer(text: str | None) -> ParsedAnswer:
    """One word or a JSON object; `unparsed` for anything else."""
    if not text or not text.strip():
        return ParsedAnswer(UNPARSED)
    word = _canonical(text)
    if word:
        return ParsedAnswer(word)
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    try:
        data = json.loads(body)
    except ValueError:
        return ParsedAnswer(UNPARSED)
    if not isinstance(data, dict):
        return ParsedAnswer(UNPARSED)
    labels = {_canonical(data.get(k)) for k in JSON_FIELDS if k in data}
    labels.discard(None)
    if len(labels) != 1:
        return ParsedAnswer(UNPARSED)
    reason = data.get("reason", "")
    label = cast(str, labels.pop())  # None was discarded above
    return ParsedAnswer(label, reason=reason.strip() if isinstance(reason, str) else "")


def _token_fields(token: object) -> tuple[str, float | None, list]:
    """(text, logprob, top_logprobs) of one logprob entry, from an SDK object or a dict."""
    if isinstance(token, dict):
        return token.get("token", ""), token.get("logprob"), token.get("top_logprobs") or []
    return (
        getattr(token, "token", ""),
        getattr(token, "logprob", None),
        list(getattr(token, "top_logprobs", None) or []),
    )


def label_confidence(text: str, label: str, tokens: Sequence[object] | None) -> float | None:
    """P(label) / (P(Compute) + P(Bandwidth)) at the token where the label starts.

    A candidate token counts for a label when its stripped text is a non-empty prefix of that
    label (case-insensitive). When the other label's first token is not among the top
    logprobs, its probability is taken as the smallest one listed (it can be no larger than
    that), which keeps the confidence conservative. None when the server sent no logprobs or
    the label cannot be located in the reply.
    """
    if not tokens or label not in LABELS:
        return None
    start = text.lower().find(label.lower())
    if start < 0:
        return None
    offset = 0
    for token in tokens:
        piece, logprob, top = _token_fields(token)
        end = offset + len(piece)
        if end > start and piece.strip():
            return _renormalised(label, piece, logprob, top)
        offset = end
    return None


def _renormalised(label: str, piece: str, logprob: float | None, top: list) -> float | None:
    other = BANDWIDTH if label == COMPUTE else COMPUTE
    mass = {label: 0.0, other: 0.0}
    seen_floor = 0.0
    candidates = [_token_fields(t)[:2] for t in top] or [(piece, logprob)]
    for text, lp in candidates:
        if lp is None:
            continue
        p = math.exp(lp)
        seen_floor = p if seen_floor == 0.0 else min(seen_floor, p)
        stripped = text.strip().lower()
        for name in (label, other):
            if stripped and name.lower().startswith(stripped):
                mass[name] += p
    if mass[label] == 0.0 and logprob is not None:
        mass[label] = math.exp(logprob)
    if mass[label] == 0.0:
        return None
    if mass[other] == 0.0:
        mass[other] = seen_floor if len(candidates) > 1 else 0.0
    return round(mass[label] / (mass[label] + mass[other]), 4)


@dataclass(frozen=True)
class Vote:
    label: str
    confidence: float | None
    counts: dict[str, int]


def majority_vote(answers: Sequence[ParsedAnswer]) -> Vote:
    """Most frequent parsed label; unparsed samples do not vote.

    A tie goes to the label with the larger summed confidence when every vote has one;
    otherwise a tie stays `unparsed` (no coin flips). Confidence = share of parsed votes,
    or the mean logprob confidence for a single sample.
    """
    counts = Counter(a.label for a in answers)
    votes = {k: counts.get(k, 0) for k in LABELS}
    total = sum(votes.values())
    tally = {**votes, UNPARSED: counts.get(UNPARSED, 0)}
    if total == 0:
        return Vote(UNPARSED, None, tally)
    if len(answers) == 1:
        return Vote(answers[0].label, answers[0].confidence, tally)
    if votes[COMPUTE] != votes[BANDWIDTH]:
        winner = max(votes, key=lambda k: votes[k])
        return Vote(winner, round(votes[winner] / total, 4), tally)
    parsed = [a for a in answers if a.parsed]
    if all(a.confidence is not None for a in parsed):
        mass = {k: sum(a.confidence or 0.0 for a in parsed if a.label == k) for k in LABELS}
        if mass[COMPUTE] != mass[BANDWIDTH]:
            winner = max(mass, key=lambda k: mass[k])
            return Vote(winner, 0.5, tally)
    return Vote(UNPARSED, None, tally)
