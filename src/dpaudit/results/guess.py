"""One certified guess rule of a one-run guessing game, as a plain value.

A rule guesses *in* for the ``positive`` members with the highest values of a score and
*out* for the ``negative`` lowest, abstaining on the rest; the core's game certifier
(:mod:`dpaudit.auditors.core.game`) counts its correct guesses against the inclusion bits
it drew and bounds ε from them.  A plain value: it imports nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GuessRule"]


@dataclass(frozen=True)
class GuessRule:
    """One rule of the grid: guess *in* for the ``positive`` highest values of ``score``,
    *out* for the ``negative`` lowest, abstain on the rest; ``correct`` of the ``positive +
    negative`` guesses were right, which certifies ε ≥ ``epsilon_lower_bound`` at the rule's
    error.  Under the f-DP test (curve claims): ``refutes_curve``, whether the guesses refute
    the claimed curve as a whole, and for a μ-GDP claim ``mu_lower_bound``, the μ they
    certify (Mahloujifar, Melis & Chaudhuri 2024); both None otherwise."""

    positive: int
    negative: int
    correct: int
    epsilon_lower_bound: float
    score: str = "score"
    refutes_curve: bool | None = None
    mu_lower_bound: float | None = None

    @property
    def guesses(self) -> int:
        """Guesses made (abstentions excluded)."""
        return self.positive + self.negative
