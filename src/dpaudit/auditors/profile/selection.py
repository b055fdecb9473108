"""Selection: choose which threshold sets to certify, on samples the final count never sees.

Every set is ``{score > t}`` or its complement ``{score ≤ t}`` ("above" /
"at or below", the two tails), read in either direction (``x`` over ``x'`` or
``x'`` over ``x``): four statements per threshold.  Candidate thresholds are
quantiles of the pooled selection scores, log-spaced towards both ends so the
far tails — where the profile at large ε and the GDP bound at large μ are
decided — are represented.

For each candidate the selection samples give point estimates ``p̂1, p̂2``;
from them the *anticipated* certified bounds at the final sample size (the
Clopper–Pearson bounds of the scaled counts at the planned per-bound error)
rank the sets: per ε of the grid the set with the largest anticipated
``p1_lower − e^ε p2_upper``, the set with the largest anticipated GDP bound
``Φ⁻¹(p1_lower) − Φ⁻¹(p2_upper)`` and, per Rényi order, the largest anticipated
binary Rényi divergence.  The distinct winners are the proposals; only they
are certified, so the Bonferroni split pays for a few dozen statements, not
for every candidate.  Choosing uses the selection samples only, which costs no
confidence.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from dpaudit.analysis.privacy_conversions import binary_renyi
from dpaudit.auditors.core.dkw import candidate_thresholds, exceed_fractions
from dpaudit.auditors.core.statistics import clopper_pearson_lower, clopper_pearson_upper

#: The four statements of one threshold t: (set is {s > t}?, numerator is x?).
KINDS = ((True, True), (False, True), (True, False), (False, False))


@dataclass(frozen=True)
class ProposedSet:
    """One statement: the set ``{s > t}`` (``above``) or ``{s ≤ t}``, numerator ``x`` or ``x'``."""

    threshold: float
    above: bool
    forward: bool
    column: int = 0
    column_name: str = ""

    def describe(self) -> str:
        """E.g. ``Pr[M(x) ∈ {s > 1.25}] vs Pr[M(x') ∈ same]``."""
        op = ">" if self.above else "≤"
        a, b = ("x", "x'") if self.forward else ("x'", "x")
        name = f"score[{self.column_name}]" if self.column_name else "score"
        return f"S = {{{name} {op} {self.threshold:.6g}}}, Pr[M({a}) ∈ S] vs Pr[M({b}) ∈ S]"


def statement_probabilities(gx: np.ndarray, gxp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(p1, p2)`` of the four statements per threshold (rows in :data:`KINDS` order)."""
    p1 = np.stack([gx, 1.0 - gx, gxp, 1.0 - gxp])
    p2 = np.stack([gxp, 1.0 - gxp, gx, 1.0 - gx])
    return p1, p2


def select_sets(
    scores_x: np.ndarray,
    scores_x_prime: np.ndarray,
    *,
    final_samples: int,
    error: float,
    epsilons: np.ndarray,
    orders: tuple[float, ...],
    candidates: int,
    column_names: tuple[str, ...] = (),
) -> tuple[ProposedSet, ...]:
    """The distinct sets worth certifying (at least one), ranked as the module says.

    ``error`` is the planned per-bound error at the final stage (an upper bound
    on what certification will use, so the ranking is conservative).  Two-dimensional
    scores are ``k`` candidate columns (``column_names`` names them in the sets' text).
    """
    wide = np.ndim(scores_x) == 2
    cols_x = np.asarray(scores_x).reshape(len(scores_x), -1)
    cols_xp = np.asarray(scores_x_prime).reshape(len(scores_x_prime), -1)
    pairs = list(zip(cols_x.T, cols_xp.T, strict=True))
    per = [candidate_thresholds(a, b, candidates) for a, b in pairs]
    thr = np.concatenate(per)
    column_of = np.concatenate([np.full(len(t), j) for j, t in enumerate(per)])
    p1, p2 = statement_probabilities(
        np.concatenate([exceed_fractions(a, t) for (a, _), t in zip(pairs, per, strict=True)]),
        np.concatenate([exceed_fractions(b, t) for (_, b), t in zip(pairs, per, strict=True)]),
    )
    n = final_samples
    lo = np.asarray(clopper_pearson_lower(np.rint(p1 * n), n, error))
    hi = np.asarray(clopper_pearson_upper(np.rint(p2 * n), n, error))
    chosen: list[int] = []
    values = lo[None] - np.exp(epsilons)[:, None, None] * hi[None]  # (ε, kind, threshold)
    for v in values:
        if v.max() > 0:
            chosen.append(int(np.argmax(v)))
    with np.errstate(divide="ignore"):
        mu = np.where(lo > 0, special.ndtri(lo) - special.ndtri(hi), -np.inf)
    chosen.append(int(np.argmax(mu)))  # always one, so there is something to certify
    for a in orders:
        d = np.where(lo > hi, binary_renyi(a, lo, hi), 0.0)
        if d.max() > 0:
            chosen.append(int(np.argmax(d)))
    picks = sorted(set(chosen))
    out = []
    for i in picks:
        at = i % len(thr)
        column = int(column_of[at])
        name = column_names[column] if wide and column < len(column_names) else ""
        out.append(ProposedSet(float(thr[at]), *KINDS[i // len(thr)], column, name))
    return tuple(out)
