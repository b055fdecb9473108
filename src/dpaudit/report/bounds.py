"""How a lower bound is printed: never negative, ``∞`` spelled out, nothing certified said so."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from dpaudit.report.collect import as_float, fmt

#: What a lower bound at or below zero is printed as: it certifies nothing.
NOTHING_CERTIFIED = "none (≤ 0)"
#: The bound of a claim refuted by an exact analysis with an infinite loss.
INFINITE_EXACT = "∞ exact"


def bound_text(value: Any, symbol: str = "ε_lcb", digits: int = 4) -> str:
    """A lower bound as printed: ``ε_lcb = 1.96``, ``∞``, or :data:`NOTHING_CERTIFIED` (≤ 0).

    A negative number is never printed as a bound; ``symbol`` "" prints the number alone.
    """
    v = as_float(value) if not isinstance(value, bool) else None
    if v is None or math.isnan(v):
        return "—"
    if v <= 0:
        return NOTHING_CERTIFIED
    text = "∞" if math.isinf(v) else fmt(v, digits)
    return f"{symbol} = {text}" if symbol else text


def scrub_negative_bounds(text: str) -> str:
    """``ε ≥ -0.76`` (a statement's raw bound) as ``ε ≥ 0 (nothing certified)``."""
    return re.sub(r"(ε(?:_lcb)?\s*(?:≥|=)\s*)[-−]\d[\d.e+-]*", r"\g<1>0 (nothing certified)", text)


def canary_bound_text(epsilon_lower_bound: Any, detail: Mapping[str, Any]) -> str:
    """A canary audit's certified bound: ``ε_lcb``, and under the f-DP test the best μ_lcb
    (μ-GDP claims) and whether a rule refuted the claimed curve."""
    text = bound_text(epsilon_lower_bound)
    if detail.get("bound") != "f-dp":
        return text
    rules = detail.get("rules") or ()
    mus = [r.get("mu_lower_bound") for r in rules if r.get("mu_lower_bound") is not None]
    if mus:
        text += f"; {bound_text(max(mus), 'μ_lcb')}"
    if any(r.get("refutes_curve") for r in rules):
        text += "; claimed curve refuted (f-DP test)"
    return text
