"""What the metric audit of one pair could have seen: its power against the pair's ``ε·d``.

A pair ``(w, w')`` of a metric claim may lose at most ``ε·d(w, w')``.  Its
true loss is ``max_y |ln p(y|w) − ln p(y|w')|`` over *single* outputs ``y``
(a ratio of sums never exceeds the largest ratio of its terms), so a loss of
the claimed size can sit on one output — including the rarest output the
mechanism produces.  The audit's sets are unions of outputs it saw in its
selection samples; the rarest of those has mass about
:attr:`PairPower.resolution_mass`, the smallest selection frequency among the
outputs either word produced (``1/samples`` when some output was seen once,
as with any large vocabulary).  Outputs rarer than that were not seen at all.

The statement for the pair is then :func:`~dpaudit.auditors.core.power.detectable_loss`
at that mass: the smallest true loss that the final samples would certify above
``ε·d`` with probability ≈ 90 % *wherever among the outputs it saw* it lies
(larger sets only lower it).  The pair is

* ``no violation found`` only when that detectable loss is at most
  ``power_ratio·ε·d`` — a violation by that factor (default 2) would have been
  seen;
* ``inconclusive`` otherwise, with ``samples_needed``: the final samples per
  input at which it would (:func:`~dpaudit.auditors.core.power.samples_for_loss`,
  at the same mass).

The old rule, ``ln(1/α')·e^{ε·d}/p`` with ``p`` the mass of the set the audit
happened to choose, called a pair conclusive when its *chosen* set was large,
although the loss could be on a rare output the sample could not resolve
(issue 25: mldp-text's TEM, whose violations sit on close pairs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpaudit.auditors.core.power import (
    MAX_SAMPLES,
    certifiable_ceiling,
    detectable_loss,
    samples_for_loss,
)

#: Set masses of the per-pair power curve in results (beside the resolution mass).
CURVE_MASSES = (0.5, 0.1, 0.01, 0.001)


@dataclass(frozen=True)
class PairPower:
    """The power of one pair's audit: where it could see a loss, and how large.

    ``detectable_loss``: smallest true loss certified above ``ε·d`` with
    probability ≈ 90 % on an output of mass ``resolution_mass`` (``inf``: none
    could be); ``target``: ``power_ratio·ε·d``; ``conclusive``: detectable ≤
    target; ``samples_needed``: final samples per input for that (``None`` when
    conclusive or when no size can, e.g. ``ε·d = 0``); ``curve``: detectable loss
    per set mass and the size's ceiling.
    """

    resolution_mass: float
    detectable_loss: float
    target: float
    conclusive: bool
    samples_needed: int | None
    curve: dict[str, float]

    def describe(self) -> str:
        """One clause: what the pair's audit could have flagged."""
        det = (
            "no loss"
            if math.isinf(self.detectable_loss)
            else f"a loss ≥ {self.detectable_loss:.3g}"
        )
        return (
            f"could flag {det} on outputs of mass ≥ {self.resolution_mass:.2g} "
            f"(target {self.target:.3g})"
        )


def resolution_mass(counts: tuple[np.ndarray, ...], n: int) -> float:
    """Smallest selection frequency among outputs seen in any of ``counts`` (``n`` draws each)."""
    seen = [c[c > 0] for c in counts if np.any(c > 0)]
    if not seen:
        return 1.0 / max(n, 1)
    return float(min(int(s.min()) for s in seen)) / max(n, 1)


def pair_power(
    allowed: float, n_final: int, error: float, mass: float, power_ratio: float
) -> PairPower:
    """The power of a pair with allowed loss ``allowed`` (= ``ε·d``, finite) at ``mass``.

    ``error``: the per-bound error of the final certification (``α/(2K)``).
    """
    mass = min(max(mass, 1e-300), 1.0)
    target = power_ratio * allowed
    det = detectable_loss(allowed, n_final, error, mass)
    curve = {f"mass {m:g}": detectable_loss(allowed, n_final, error, m) for m in CURVE_MASSES}
    curve["ceiling"] = certifiable_ceiling(n_final, error)
    conclusive = allowed > 0 and det <= target
    needed = None
    if not conclusive and allowed > 0:
        found = samples_for_loss(target, allowed, error, mass)
        needed = None if found >= MAX_SAMPLES else found
    return PairPower(mass, det, target, conclusive, needed, curve)
