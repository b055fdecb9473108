"""The value the search's stages pass on: which (pair, score) combinations and sets are still in.

:class:`Shortlist` replaces the search's anonymous ``(candidate, kept index, set
index)`` tuples.  Every stage of :mod:`dpaudit.auditors.blackbox.stages` takes one
and returns a smaller one; :class:`Budget` is what a stage may spend (the
sampler, the sample sizes, the error split).  Also the two operations every
counting stage shares: counting the kept combinations on fresh outputs
(:func:`count_combos`) and ranking sets by their projection (:func:`rank_sets`).
Imports nothing above ``auditors/``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from dpaudit.auditors.blackbox.config import AuditConfig
from dpaudit.auditors.blackbox.pairs import InputPair
from dpaudit.auditors.blackbox.representation import RepresentationLook
from dpaudit.auditors.blackbox.sampler import Sampler
from dpaudit.auditors.blackbox.scores import LikelihoodRatioScore, Score
from dpaudit.auditors.blackbox.selection import Candidate, CandidateTable, SideStats
from dpaudit.auditors.core.trust import TrustReport
from dpaudit.mechanisms.base import Mechanism


@dataclass(frozen=True)
class Combo:
    """One trained (pair, score) combination and its grid of candidate thresholds."""

    pair_index: int
    score: Score
    thresholds: np.ndarray


@dataclass(frozen=True)
class Entry:
    """One candidate set still in: set ``index`` of combination ``combo``, as ranked."""

    combo: int
    index: int
    candidate: Candidate

    @property
    def key(self) -> tuple[int, int]:
        """``(combo, index)``: which set this is."""
        return (self.combo, self.index)

    @property
    def group(self) -> tuple[int, bool]:
        """The playoff's (pair, orientation) group."""
        return (self.candidate.pair_index, self.candidate.numerator_is_x)


@dataclass(frozen=True)
class Shortlist:
    """The search's state between two stages.

    ``pairs``: every input pair tried so far (``train`` sets them: the audit's
    pairs and the pair search's moves; combinations index them by position).
    ``combos`` are the (pair, score) combinations still in; ``tables[k]`` holds
    the counts of every set of ``combos[k]`` on the latest sample counted for it
    (training, ranking, or ranking + playoff pooled).  ``pool``
    the sets still in, as ``(combo, set index)`` (``None``: every set of every
    combination); ``ranked`` those of them with a finite projection, best first.
    ``runners_up`` are groups the playoff could not tell from the leader's,
    ``hedges`` the leader group's best set under the ranking's own margin where
    that is not the leader (``SearchConfig.playoff_hedge``), ``rungs`` the
    winner's ladder.  ``compared``: candidates compared on the
    training sample; ``samples``: outputs per input each stage used.
    """

    pairs: tuple[InputPair, ...] = ()
    families: tuple[str, ...] = ()
    combos: tuple[Combo, ...] = ()
    tables: tuple[CandidateTable, ...] = ()
    pool: tuple[tuple[int, int], ...] | None = None
    ranked: tuple[Entry, ...] = ()
    runners_up: tuple[Entry, ...] = ()
    hedges: tuple[Entry, ...] = ()
    rungs: tuple[Entry, ...] = ()
    #: Rare-event sets the ranking confirmed (certified beside the others, one more in K each).
    rare: tuple[Entry, ...] = ()
    compared: int = 0
    samples: dict[str, int] = field(default_factory=dict)
    #: Inputs the input design screened (0 when it did not run).
    screened: int = 0
    #: Per pair trained: what the float-representation check saw (empty when it did not run).
    representation: tuple[RepresentationLook, ...] = ()

    def proposals(self, best: int) -> tuple[list[Entry], list[Entry], list[Entry], list[Entry]]:
        """The sets the final stage certifies: the ``best`` leaders, runners-up, hedges, rungs.

        Each set once (a runner-up, hedge or rung already proposed is not repeated).
        """
        leaders = list(self.ranked[:best])
        taken = {e.key for e in leaders}
        runners = [e for e in self.runners_up if e.key not in taken]
        taken.update(e.key for e in runners)
        hedges = [e for e in self.hedges if e.key not in taken]
        taken.update(e.key for e in hedges)
        rungs = [e for e in self.rungs if e.key not in taken]
        return leaders, runners, hedges, rungs


@dataclass(frozen=True)
class Budget:
    """What a stage may spend: the sampler, the audit's sizes and the error split.

    ``pairs`` are the audit's own input pairs, before any pair search (which puts
    the pairs it adds in :attr:`Shortlist.pairs`); nothing here changes during a
    search except the sampler's :class:`~dpaudit.auditors.blackbox.sampler.Tally`.

    ``alpha_side`` is the error of each one-sided bound the selection projects
    with (``α/(2·best_candidates)``); the final certification re-splits ``α``
    over the sets it actually certifies.
    """

    mechanism: Mechanism
    config: AuditConfig
    pairs: Sequence[InputPair]
    families: tuple[str, ...]
    sampler: Sampler
    alpha_side: float
    delta: float
    #: What the audit's trust call found, passed into the result's construction.
    trust: TrustReport | None = None


def count_combos(
    budget: Budget, state: Shortlist, ks: list[int], n: int, stage: int, label: str
) -> dict[int, CandidateTable]:
    """Candidate tables of the combinations ``state.combos[k]``, ``k`` in ``ks``, on ``n``
    fresh outputs per input.

    One job per input: its outputs are drawn once and counted under every score in
    ``ks`` that uses it.
    """
    pairs, combos = state.pairs, state.combos
    slots: dict[tuple[float, ...], list[tuple[int, int]]] = {}  # input → [(combo, side)]
    for k in ks:
        i = combos[k].pair_index
        slots.setdefault(pairs[i].x, []).append((k, 0))
        slots.setdefault(pairs[i].x_prime, []).append((k, 1))
    jobs, signs, where = [], [], {}
    for j, (x, uses) in enumerate(slots.items()):
        scores = tuple(combos[k].score for k, _ in uses)
        jobs.append((x, scores, tuple(combos[k].thresholds for k, _ in uses)))
        # Likelihood-ratio scores also return importance-weighted sums (see SideStats).
        signs.append(
            tuple(
                (1 - 2 * side) if isinstance(combos[k].score, LikelihoodRatioScore) else 0
                for k, side in uses
            )
        )
        where.update({use: (j, m) for m, use in enumerate(uses)})
    counts = budget.sampler.counts(jobs, n, stage, label, importance_signs=signs)

    def side(k: int, s: int) -> SideStats:
        j, m = where[(k, s)]
        return SideStats.from_counts(counts[j], m)

    return {k: CandidateTable.of(combos[k].thresholds, side(k, 0), side(k, 1)) for k in ks}


def rank_sets(
    budget: Budget,
    combos: Sequence[Combo],
    tables: Sequence[CandidateTable] | dict[int, CandidateTable],
    keys: Sequence[tuple[int, int]],
    compared: int | None = None,
) -> tuple[Entry, ...]:
    """The sets ``keys`` as entries, best projection on ``tables`` first.

    Each is projected with the margin for ``compared`` candidates (default
    ``len(keys)``: counts on which only these sets were compared); sets with no
    finite projection are dropped.  Ties keep the order of combination, then of
    ``keys``.
    """
    cfg, delta = budget.config, budget.delta
    n_compared = compared or len(keys)
    out: list[Entry] = []
    for k in sorted({k for k, _ in keys}):
        mine = np.array([j for kk, j in keys if kk == k], dtype=np.int64)
        t = tables[k]
        proj = t.project(cfg.final_samples, budget.alpha_side, delta, n_compared, only=mine)
        c = combos[k]
        for j in mine:
            if np.isfinite(proj[j]):
                cand = t.candidate(
                    c.pair_index, c.score, c.thresholds, int(j), float(proj[j]), delta
                )
                out.append(Entry(k, int(j), cand))
    out.sort(key=lambda e: -e.candidate.projected)
    return tuple(out)


def leading_group_under_ranking_margin(
    state: Shortlist, budget: Budget, tables: Sequence[CandidateTable], ranked: Sequence[Entry]
) -> tuple[Entry, ...]:
    """The sets of ``ranked[0]``'s (pair, orientation) group on ``tables``, best first,
    under the margin for every candidate the ranking compared (``state.tables``):
    what the playoff's hedge chooses from."""
    if not ranked:
        return ()
    mine = [e.key for e in ranked if e.group == ranked[0].group]
    ranked_from = sum(t.size for t in state.tables)
    return rank_sets(budget, state.combos, tables, mine, ranked_from)
