"""The search's first stage, ``train``: the (pair, score) combinations and their pairs.

:class:`Train` trains every family's score on a small sample per input and fixes
its threshold grid; where the pair search runs it also proposes local moves of the
best pairs and keeps those that beat their parent.  It is the one stage that creates
candidates: the state it returns holds every pair tried (the audit's and the kept
and dropped moves, which later stages index by position) and every combination.
Imports nothing above ``auditors/``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dpaudit.auditors.blackbox.config import SearchConfig, pair_search_z
from dpaudit.auditors.blackbox.histogram import train_histogram
from dpaudit.auditors.blackbox.pair_search import propose_pairs, searchable
from dpaudit.auditors.blackbox.pairs import InputPair
from dpaudit.auditors.blackbox.rare_scan import add_rare, looks_for_rare_sets
from dpaudit.auditors.blackbox.representation import RepresentationLook, train_representation
from dpaudit.auditors.blackbox.scores import (
    LikelihoodRatioScore,
    Score,
    TrainingData,
    candidate_thresholds,
    train_classifier,
)
from dpaudit.auditors.blackbox.selection import CandidateTable, SideStats
from dpaudit.auditors.blackbox.shortlist import Budget, Combo, Shortlist
from dpaudit.auditors.core.streams import StageKey, pair_search_round

#: Per pair: best training projection of its sets, that set's log-ratio estimate, its SE.
PairBest = tuple[float, float, float]


@dataclass(frozen=True)
class Train:
    """Train every family's score on a small sample per input and fix its threshold grid.

    Then, where :func:`~dpaudit.auditors.blackbox.pair_search.searchable` and the
    audit generated its pairs, the pair search: ``rounds`` rounds of local moves
    around the best-projecting pairs so far, each trained on outputs of its own
    round's stage key; the moves join ``state.pairs``.
    """

    name: ClassVar[str] = "train"
    floor: int
    fraction: int
    rare_events: bool
    pair_search: bool
    rounds: int
    parents: int
    moves: int
    false_keep: float
    accept_z: float | None
    representation: bool = True

    @classmethod
    def of(cls, search: SearchConfig) -> Train:
        return cls(
            search.train_floor, search.train_fraction, search.rare_events, search.pair_search,
            search.pair_search_rounds, search.pair_search_parents, search.pair_search_moves,
            search.pair_search_false_keep, search.pair_search_accept_z, search.representation,
        )  # fmt: skip

    def train_samples(self, samples: int, given: int | None) -> int:
        """Outputs per input: ``given``, else ``min(samples, max(floor, samples // fraction))``."""
        return given or min(samples, max(self.floor, samples // self.fraction))

    def run(self, state: Shortlist, budget: Budget) -> Shortlist:
        cfg = budget.config
        n_train = self.train_samples(cfg.samples, cfg.train_samples)
        pairs = list(state.pairs or budget.pairs)  # the audit's own and the design's
        looks: list[RepresentationLook] = []
        combos, tables = self._train_pairs(budget, pairs, 0, n_train, StageKey.TRAIN, looks)
        if self.pair_search and cfg.use_patterns and searchable(budget.mechanism):
            combos, tables = self._search_pairs(budget, pairs, combos, tables, n_train, looks)
        # The families actually trained (``histogram`` only where the outputs were discrete).
        trained = tuple(f for f in budget.families if any(c.score.family == f for c in combos))
        return dataclasses.replace(
            state,
            pairs=tuple(pairs),
            families=trained or budget.families,
            combos=tuple(combos),
            tables=tuple(tables),
            compared=sum(t.size for t in tables),  # every candidate is compared on this sample
            samples={**state.samples, "training": n_train},
            representation=tuple(looks),
        )

    def _search_pairs(
        self,
        budget: Budget,
        pairs: list[InputPair],
        combos: list[Combo],
        tables: list[CandidateTable],
        n_train: int,
        looks: list[RepresentationLook],
    ) -> tuple[list[Combo], list[CandidateTable]]:
        """The pair search's rounds (:mod:`~dpaudit.auditors.blackbox.pair_search`).

        Each round proposes moves of the best pairs so far, trains them on outputs of
        the round's own stage key (appended to ``pairs``, which later stages index by
        position), and keeps a move only when its best set's log-ratio estimate beats
        its parent's by more than :func:`~dpaudit.auditors.blackbox.config.pair_search_z`
        standard errors (Bonferroni over the round's moves).  A kept move can be moved
        again.
        """
        rng = np.random.default_rng([budget.config.seed, StageKey.PAIR_SEARCH])
        best = _pair_bests(budget, combos, tables, len(pairs))
        for r in range(1, self.rounds + 1):
            parents = [b[0] for b in best]
            new = propose_pairs(budget.mechanism, pairs, parents, self.parents, self.moves, rng)
            if not new:
                break
            first = len(pairs)
            pairs.extend(p for _, p in new)
            more = self._train_pairs(budget, pairs, first, n_train, pair_search_round(r), looks)
            mine = _pair_bests(budget, *more, len(pairs))[first:]
            kept = set()
            z = pair_search_z(len(new), self.false_keep, self.accept_z)
            for k, (parent, _) in enumerate(new):
                (_, est, se), (_, p_est, p_se) = mine[k], best[parent]
                if est - p_est > z * math.hypot(se, p_se):
                    kept.add(first + k)
            dropped = (-math.inf, -math.inf, 0.0)  # never a parent
            best += [m if first + k in kept else dropped for k, m in enumerate(mine)]
            keep = [k for k, c in enumerate(more[0]) if c.pair_index in kept]
            combos = combos + [more[0][k] for k in keep]
            tables = tables + [more[1][k] for k in keep]
        return combos, tables

    def _train_pairs(
        self,
        budget: Budget,
        pairs: list[InputPair],
        first: int,
        n_train: int,
        stage: int,
        looks: list[RepresentationLook],
    ) -> tuple[list[Combo], list[CandidateTable]]:
        """Combinations and training tables of ``pairs[first:]`` on ``n_train`` outputs each.

        What each pair's float-representation check saw is appended to ``looks``.
        """
        mech, cfg = budget.mechanism, budget.config
        mine = pairs[first:]
        # Pair by pair, so only a batch of pairs' outputs is held at once.
        draws = budget.sampler.pair_outputs(
            [(p.x, p.x_prime) for p in mine], n_train, stage, "training"
        )
        combos: list[Combo] = []
        tables: list[CandidateTable] = []
        for i, (pair, (dx, dxp)) in enumerate(zip(mine, draws, strict=True), start=first):
            for family in budget.families:
                if family == "likelihood-ratio":
                    score: Score = LikelihoodRatioScore(mech, pair.x, pair.x_prime)
                elif family == "histogram":
                    # Chosen by ``auto`` for every mechanism; trained only on discrete outputs.
                    hist = train_histogram(dx, dxp, only_if_discrete=cfg.classifier == "auto")
                    if hist is None:
                        continue
                    score = hist
                else:
                    score = train_classifier(family, mech, dx, dxp, seed=cfg.seed)
                _add_score(combos, tables, i, score, dx, dxp)
            if self.rare_events and looks_for_rare_sets(mech.output_kind):
                add_rare(combos, tables, i, dx, dxp)
            if self.representation:
                bits, look = train_representation(dx, dxp)
                looks.append(look)
                if bits is not None:
                    _add_score(combos, tables, i, bits, dx, dxp)
        return combos, tables


def _pair_bests(
    budget: Budget, combos: list[Combo], tables: list[CandidateTable], n_pairs: int
) -> list[PairBest]:
    """Per pair: the best projection of any of its sets on training outputs (the screen's
    measure), that set's log-ratio estimate and its standard error."""
    cfg = budget.config
    compared = sum(t.size for t in tables)
    best = [(-math.inf, -math.inf, 0.0)] * n_pairs
    for c, t in zip(combos, tables, strict=True):
        proj = t.project(cfg.final_samples, budget.alpha_side, budget.delta, compared)
        j = int(np.argmax(proj)) if proj.size else 0
        if proj.size and proj[j] > best[c.pair_index][0]:
            k1, k2 = max(float(t.num[j]), 1.0), max(float(t.den[j]), 1.0)
            est = math.log(k1 / float(t.n_num[j])) - math.log(k2 / float(t.n_den[j]))
            best[c.pair_index] = (float(proj[j]), est, t.log_ratio_se(j))
    return best


def _add_score(
    combos: list[Combo],
    tables: list[CandidateTable],
    i: int,
    score: Score,
    dx: TrainingData,
    dxp: TrainingData,
) -> None:
    """Append pair ``i``'s ``score`` with its threshold grid and training table."""
    sx, sxp = score(dx.rows), score(dxp.rows)
    thr = candidate_thresholds([sx, sxp])
    # A likelihood-ratio score also weighs each side's outputs to estimate the other's.
    sign = 1 if isinstance(score, LikelihoodRatioScore) else 0
    tables.append(
        CandidateTable.of(
            thr,
            SideStats.of(sx, thr, dx.counts, sign),
            SideStats.of(sxp, thr, dxp.counts, -sign),
        )
    )
    combos.append(Combo(i, score, thr))
