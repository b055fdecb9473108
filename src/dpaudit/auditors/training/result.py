"""The typed detail of a one-run training audit: the guess rules tried and what each gave."""

from __future__ import annotations

from dataclasses import dataclass

from dpaudit.results.audit import AuditorKind, register_detail
from dpaudit.results.guess import GuessRule


@register_detail(AuditorKind.TRAINING)
@dataclass(frozen=True)
class TrainingDetail:
    """What a one-run audit (Steinke, Nasr & Jagielski, NeurIPS 2023) did and saw.

    ``canaries`` per run, ``runs`` independent trainings pooled (each canary in one run, so
    the pooled guesses are one game with ``canaries·runs`` canaries), ``included`` of them
    in training; every rule of ``rules`` (the grid, once per score the trainer offers) is
    certified at ``error_per_rule`` = α/len(rules) (Bonferroni), so the best of them holds
    at the result's confidence; ``ceiling``: the largest bound the grid could give (all
    guesses of a rule correct); ``auc``: the best rule's score's area under the ROC curve,
    in against out (descriptive, not certified).  ``bound``: how the guesses were certified
    (``"eps-delta"``, or ``"f-dp"``: each rule tested twice, at ``α/(2·len(rules))``);
    under f-DP ``curve_testable`` says whether all-correct guesses of some rule would have
    refuted the claimed curve, and ``mu_ceiling`` the largest μ the grid could certify
    (μ-GDP claims).
    """

    method: str
    access: str
    canary_kind: str
    canary_description: str
    canaries: int
    runs: int
    included: int
    delta: float
    claim_source: str
    rules: tuple[GuessRule, ...]
    best: int
    error_per_rule: float
    ceiling: float
    auc: float
    seconds_per_run: float
    assumptions: tuple[str, ...]
    bound: str = "eps-delta"
    curve_testable: bool | None = None
    mu_ceiling: float | None = None

    @property
    def mu_lower_bound(self) -> float | None:
        """The best rule's certified μ (μ-GDP claims under the f-DP test), else None."""
        return self.rules[self.best].mu_lower_bound


__all__ = ["GuessRule", "TrainingDetail"]
