"""One certified statement, as every auditor that certifies sets records it.

A statement reads ``Pr[M(a) ∈ S] ≤ e^ε·Pr[M(b) ∈ S] + δ`` for an ordered input
pair ``(a, b)`` and an event ``S``; certifying it means counting fresh final
samples of both inputs and bounding ``p1 = Pr[M(a) ∈ S]`` from below and
``p2 = Pr[M(b) ∈ S]`` from above, each one-sided bound at the error its share
of the audit's confidence allows.  :class:`CertifiedStatement` is that record,
the same for the black-box search and the profile certifier (``detail.certified``
of their results).  A plain value: it imports nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["CertifiedStatement", "statement_of"]


@dataclass(frozen=True)
class CertifiedStatement:
    """One statement certified together with the audit's others: its event, counts and bounds.

    ``pair_index``: the input pair (0-based, in the order the auditor tried them;
    0 for an audit of one pair); ``forward``: the statement reads with ``a, b =
    x, x'`` (else ``x', x``).  ``event``: the set in words; ``role``: why the
    auditor proposed it (the black box: ``"best"``, ``"runner-up"``, ``"hedge"``,
    ``"rung"`` or ``"rare"``; the profile: ``"profile"``).  ``p1_hits`` of
    ``p1_samples`` fresh outputs of ``M(a)`` and ``p2_hits`` of ``p2_samples`` of
    ``M(b)`` fell in the set; ``p1_lower`` and ``p2_upper`` are the one-sided
    Clopper–Pearson bounds on ``p1`` and ``p2``, each at error ``error``;
    ``epsilon_lower_bound = ln(p1_lower − δ) − ln(p2_upper)`` at the claim's δ
    (may be ``−inf``).  What only one auditor records is optional:
    ``face_projection`` (black box: the bound the set projected at face value on
    the ranking's counts, the number the ladder compares rungs by) and
    ``threshold``/``above`` (profile: the set is ``{score > threshold}`` when
    ``above``, else ``{score ≤ threshold}``; ``score_column``: which named column of a
    score of several, None for a plain score).
    """

    pair_index: int
    forward: bool
    event: str
    role: str
    p1_hits: int
    p1_samples: int
    p2_hits: int
    p2_samples: int
    p1_lower: float
    p2_upper: float
    error: float
    epsilon_lower_bound: float
    face_projection: float | None = None
    threshold: float | None = None
    above: bool | None = None
    score_column: str | None = None


def statement_of(
    pair_index: int,
    forward: bool,
    event: str,
    role: str,
    p1: Any,
    p2: Any,
    epsilon_lower_bound: float,
) -> CertifiedStatement:
    """The record of a statement an auditor keeps as two probability estimates (``hits``,
    ``samples``, ``bound`` and ``bound_error`` each, as :class:`dpaudit.witness.
    ProbabilityEstimate` has them): the metric and rewriter auditors' views."""
    return CertifiedStatement(
        pair_index=pair_index,
        forward=forward,
        event=event,
        role=role,
        p1_hits=p1.hits,
        p1_samples=p1.samples,
        p2_hits=p2.hits,
        p2_samples=p2.samples,
        p1_lower=p1.bound,
        p2_upper=p2.bound,
        error=p1.bound_error,
        epsilon_lower_bound=epsilon_lower_bound,
    )
