"""What an audit of a given size could have seen: the smallest loss it would certify.

A "no violation found" is only as strong as the audit behind it.  With ``n``
final samples per input and each one-sided bound at error ``e`` (the split of
:func:`dpaudit.auditors.core.certify.split_error`), a set ``S`` with
``Pr[M(x) ∈ S] = p`` and ``Pr[M(x') ∈ S] = p·e^{−L}`` (a true loss ``L`` on that
set) is certified above the claimed ε only if the Clopper–Pearson bounds of its
counts leave room for it.  :func:`detectable_loss` finds the smallest ``L`` for
which that happens *with high probability*: the counts are taken
:data:`POWER_Z` standard deviations on the unlucky side of their means
(numerator down, denominator up), so each count is at least that good with
probability ≈ 95 % and the certification succeeds with probability ≈ 90 %.

Two limits follow from the sample size alone, whatever the mechanism:

* the bound can never exceed ``ln(1/p2_upper)`` with no hit under ``x'``, i.e.
  about ``ln(n / ln(1/e))`` (:func:`certifiable_ceiling`): a claim above that
  cannot be refuted at this size;
* a small set pays more: its counts are noisier, so the detectable loss grows
  as ``p`` shrinks.  The rare-event case is where black-box audits are blind.
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.auditors.core.statistics import clopper_pearson_lower, clopper_pearson_upper
from dpaudit.errors import InvalidArgumentError

#: Standard deviations by which each count is assumed unlucky (one-sided 95 %).
POWER_Z = 1.6448536269514722


def certifiable_ceiling(n: int, error: float) -> float:
    """The largest bound ``n`` samples per input can give: all hits under x, none under x'."""
    lo = float(clopper_pearson_lower(n, n, error))
    hi = float(clopper_pearson_upper(0, n, error))
    return math.log(lo) - math.log(hi)


def _unlucky_bound(p1: float, loss: float, n: int, error: float, delta: float) -> float:
    """The certified bound of a set of mass ``p1`` and true loss ``loss`` with unlucky counts."""
    p2 = (p1 - delta) * math.exp(-loss) if p1 > delta else 0.0
    k1 = math.floor(max(n * p1 - POWER_Z * math.sqrt(n * p1 * (1 - p1)), 0.0))
    k2 = math.ceil(min(n * p2 + POWER_Z * math.sqrt(n * p2 * (1 - p2)), float(n)))
    lo = float(clopper_pearson_lower(k1, n, error))
    hi = float(clopper_pearson_upper(k2, n, error))
    with np.errstate(divide="ignore"):
        return float(np.log(max(lo - delta, 0.0)) - np.log(hi))


def detectable_loss(claimed: float, n: int, error: float, mass: float, delta: float = 0.0) -> float:
    """The smallest true loss on a set of this ``mass`` that ``n`` samples certify above ε.

    ``error``: the per-bound error of the final certification (α/(2K)).
    Returns ``inf`` when no loss could be certified at this size and mass
    (the ceiling of the sample size, see :func:`certifiable_ceiling`).
    """
    if not 0.0 < mass <= 1.0:
        raise InvalidArgumentError("mass", mass, "a probability in (0, 1]")
    if n < 1:
        raise InvalidArgumentError("n", n, "an integer >= 1")
    top = 60.0  # e^-60 ≈ 1e-26: far beyond any sample size
    if _unlucky_bound(mass, top, n, error, delta) <= claimed:
        return math.inf
    lo, hi = claimed, top
    for _ in range(60):  # bisection to ~1e-16 relative of the bracket
        mid = 0.5 * (lo + hi)
        if _unlucky_bound(mass, mid, n, error, delta) > claimed:
            hi = mid
        else:
            lo = mid
    return hi


#: Largest sample size :func:`samples_for_loss` reports (beyond it: "more than any audit draws").
MAX_SAMPLES = 2**62


def samples_for_loss(
    target: float, claimed: float, error: float, mass: float, delta: float = 0.0
) -> int:
    """The smallest ``n`` at which a true loss ``target`` on a set of this ``mass`` is certified.

    The inverse of :func:`detectable_loss` in ``n``: the same unlucky counts
    (probability ≈ 90 % of a certification above ``claimed``), found by doubling
    ``n`` and bisecting on ``log n`` to 0.1 % (the bound grows with ``n`` up to
    the rounding of the counts, so the answer is approximate).  Returns :data:`MAX_SAMPLES`
    when ``target`` cannot be shown at any size below it (``target ≤ claimed``).
    """
    if not 0.0 < mass <= 1.0:
        raise InvalidArgumentError("mass", mass, "a probability in (0, 1]")
    if not target > claimed:
        return MAX_SAMPLES

    def certified(n: int) -> bool:
        return _unlucky_bound(mass, target, n, error, delta) > claimed

    # Doubling from n = 1 (cheap: the Clopper–Pearson bounds of huge n are the slow ones),
    # then bisection on log n between the last failure and the first success.
    lo, hi = 1, 2
    while not certified(hi):
        if hi >= MAX_SAMPLES:
            return MAX_SAMPLES
        lo, hi = hi, min(2 * hi, MAX_SAMPLES)
    while hi - lo > max(1, lo // 1000):  # to 0.1 %: an order of magnitude for planning
        mid = min(max(int(math.sqrt(lo) * math.sqrt(hi)), lo + 1), hi - 1)
        if certified(mid):
            hi = mid
        else:
            lo = mid
    return hi


def power_summary(
    claimed: float,
    n: int,
    error: float,
    delta: float = 0.0,
    masses: tuple[float, ...] = (0.5, 0.1, 0.01, 0.001),
) -> dict[str, float]:
    """Detectable loss per set mass, and the sample size's ceiling, keyed for a result's JSON."""
    out = {f"mass {m:g}": detectable_loss(claimed, n, error, m, delta) for m in masses}
    out["ceiling"] = certifiable_ceiling(n, error)
    return out


def describe_power(claimed: float, summary: dict[str, float]) -> str:
    """One sentence: the loss a proposed set of each mass needed for this audit to show it."""
    parts = [
        f"≥ {v:.3g} on a set of {k}" if math.isfinite(v) else f"none on a set of {k}"
        for k, v in summary.items()
        if k != "ceiling"
    ]
    return (
        f"What this audit could see: had the search proposed, on one of the pairs it tried, a "
        f"set S carrying a true loss "
        f"{', '.join(parts)} (mass = Pr[M(x) ∈ S]), the final samples would have shown a "
        f"violation of ε = {claimed:g} with probability ≈ 90 %; no bound above "
        f"{summary['ceiling']:.3g} can be certified at this sample size."
    )
