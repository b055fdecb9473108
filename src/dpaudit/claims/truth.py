"""What is analytically *true* about a mechanism, set beside what it claims.

Not a claim itself: :class:`AnalyticTruth` is the exact worst case that
:mod:`dpaudit.analysis` computes for a mechanism, which :meth:`AnalyticTruth.violates`
compares with the mechanism's :class:`~dpaudit.claims.point.PrivacyClaim`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dpaudit.witness import Witness

if TYPE_CHECKING:
    from dpaudit.claims.point import PrivacyClaim


@dataclass(frozen=True)
class AnalyticTruth:
    """What is provably true about a mechanism, computed by :mod:`dpaudit.analysis`.

    ``true_epsilon`` is the exact worst case over the claimed domain (``inf``
    when the privacy loss is unbounded); ``method`` says how it was obtained
    (``closed form``, ``exhaustive search over codes``, ``support argument``...).
    """

    true_epsilon: float
    method: str
    true_delta: float = 0.0
    true_sensitivity: float | None = None
    sensitivity_norm: str | None = None
    witness: Witness | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    def violates(self, claim: PrivacyClaim, rtol: float = 1e-9) -> bool:
        """True when the exact ε exceeds the claimed ε (beyond rounding)."""
        return self.true_epsilon > claim.epsilon * (1 + rtol)
