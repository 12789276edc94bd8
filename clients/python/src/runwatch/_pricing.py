"""Optional cost estimate with `genai-prices` (pip install runwatch[prices]); without it the server prices runs."""

from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger("runwatch")

try:  # optional dependency
    from genai_prices import Usage as _Usage
    from genai_prices import calc_price as _calc_price
except ImportError:  # pragma: no cover - depends on the environment
    _calc_price = None
    _Usage = None


def available() -> bool:
    return _calc_price is not None


def estimate_cost_usd(
    model: str | None, prompt_tokens: int, completion_tokens: int, provider: str | None = None
) -> float | None:
    """USD cost of the usage from genai-prices' bundled table, or None (unknown model, library absent)."""
    if _calc_price is None or _Usage is None or not model or (prompt_tokens <= 0 and completion_tokens <= 0):
        return None
    usage: Any = _Usage(input_tokens=prompt_tokens, output_tokens=completion_tokens)
    for provider_id in [provider, None] if provider else [None]:
        try:
            return float(_calc_price(usage, model_ref=model, provider_id=provider_id).total_price)
        except Exception:
            continue
    logger.debug("runwatch: no price known for model %r; the server may price it", model)
    return None


def total_cost_usd(known: float | None, calls: list[tuple[str | None, int, int, str | None]]) -> float | None:
    """`known` plus each call's estimate (model, prompt tokens, completion tokens, provider); None when any call has no
    known price (the server then prices the run)."""
    total = known or 0.0
    for model, prompt, completion, provider in calls:
        cost = estimate_cost_usd(model, prompt, completion, provider)
        if cost is None:
            return None
        total += cost
    return total
