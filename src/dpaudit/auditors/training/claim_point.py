"""The (ε, δ) point a training audit tests: the claim's own, or read off its curve at δ."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpaudit.errors import InvalidArgumentError

#: ε beyond which a curve is not searched (its δ(ε) is taken as reached).
SEARCH_CAP = 100.0


def claimed_point(claim: Any, delta: float | None = None) -> tuple[float, float]:
    """``(ε, δ)`` of ``claim``: a point claim's own; a curve's smallest ε with δ(ε) ≤ δ.

    A curve claim (RDP, μ-GDP, a profile) needs ``delta``; its ε is found by bisection on
    ``claim.profile`` (non-increasing in ε), to 1e-9.
    """
    eps = getattr(claim, "epsilon", None)
    if isinstance(eps, int | float) and not isinstance(eps, bool) and math.isfinite(eps):
        own = float(getattr(claim, "delta", 0.0))
        if delta is not None and not math.isclose(delta, own):
            raise InvalidArgumentError(
                "delta", delta, f"the claim's own δ = {own:g} (the claim is a point)"
            )
        return float(eps), own
    if not callable(getattr(claim, "profile", None)):
        raise InvalidArgumentError("claim", claim, "an (ε, δ) claim or a curve with a profile")
    if delta is None or not 0.0 < delta < 1.0:
        raise InvalidArgumentError("delta", delta, "a probability in (0, 1) to read the curve at")

    def above(e: float) -> bool:
        return float(np.asarray(claim.profile(np.array([e])))[0]) > delta

    if not above(0.0):
        return 0.0, delta
    lo, hi = 0.0, SEARCH_CAP
    if above(hi):
        return math.inf, delta
    while hi - lo > 1e-9:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if above(mid) else (lo, mid)
    return hi, delta


__all__ = ["claimed_point"]
