"""Option parsing shared by verbs: GPUs, --define, launch dimensions, predictors."""

from __future__ import annotations

from roofcast.cli.errors import fail
from roofcast.gpu_specs import GPU, UnknownGPUError, load_gpu


def gpu_or_fail(name: str) -> GPU:
    try:
        return load_gpu(name)
    except UnknownGPUError as exc:
        fail(str(exc))


def defines_or_fail(items: list[str] | None) -> dict[str, str]:
    from roofcast.features.resolve import parse_define

    out: dict[str, str] = {}
    for item in items or []:
        try:
            name, value = parse_define(item)
        except ValueError as exc:
            fail(str(exc))
        out[name] = value
    return out


def dims_or_fail(text: str | None, option: str) -> tuple[int, int, int] | None:
    """`256`, `256,1,1`, `(256, 1, 1)` or `16x16` -> (x, y, z)."""
    if not text:
        return None
    cleaned = text.strip().strip("()").replace("x", ",").replace(" ", "")
    try:
        parts = [int(p) for p in cleaned.split(",") if p]
    except ValueError:
        fail(f"malformed {option} '{text}': expected e.g. 256 or 16,16,1")
    if not 1 <= len(parts) <= 3 or any(p <= 0 for p in parts):
        fail(f"malformed {option} '{text}': expected 1 to 3 positive integers")
    while len(parts) < 3:
        parts.append(1)
    return parts[0], parts[1], parts[2]
