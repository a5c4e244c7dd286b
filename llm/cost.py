"""Estimated cost of a request from its token counts: list prices per 1M tokens, in USD.

Prices are public list prices (standard tier, no batch or cached-input discount) and change;
`--price-in/--price-out` override them, a local server costs 0, an unknown model has no
estimate (None) rather than a made-up one.
"""
from __future__ import annotations

#: model id prefix -> (input, output) USD per 1M tokens. Longest matching prefix wins.
PRICES_PER_M: dict[str, tuple[float, float]] = {
    "gpt-5-nano": (0.05, 0.40),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5": (1.25, 10.00),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "o4-mini": (1.10, 4.40),
    "o3-mini": (1.10, 4.40),
    "o3": (2.00, 8.00),
    # fine-tuned models are billed at their own (higher) inference rates
    "ft:gpt-4o-mini": (0.30, 1.20),
    "ft:gpt-4o": (3.75, 15.00),
    "ft:gpt-4.1-nano": (0.20, 0.80),
    "ft:gpt-4.1-mini": (0.80, 3.20),
    "ft:gpt-4.1": (3.00, 12.00),
}


def price_for(model: str) -> tuple[float, float] | None:
    best = None
    for prefix, price in PRICES_PER_M.items():
        if model.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, price)
    return best[1] if best else None


def estimate_cost(
    model: str,
    prompt_tokens: int | None,
    completion_tokens: int | None,
    local: bool = False,
    price_in_per_m: float | None = None,
    price_out_per_m: float | None = None,
) -> float | None:
    """USD for one request, 0.0 on a local server, None when the price is unknown."""
    if local and price_in_per_m is None and price_out_per_m is None:
        return 0.0
    table = price_for(model)
    p_in = price_in_per_m if price_in_per_m is not None else (table[0] if table else None)
    p_out = price_out_per_m if price_out_per_m is not None else (table[1] if table else None)
    if p_in is None or p_out is None:
        return None
    return ((prompt_tokens or 0) * p_in + (completion_tokens or 0) * p_out) / 1e6
