"""The dpaudit-mode search as a list of named stages, and its certification.

Every stage has one contract: it takes a
:class:`~dpaudit.auditors.blackbox.shortlist.Shortlist` (the (pair, score)
combinations and sets still in, with their counts) and a
:class:`~dpaudit.auditors.blackbox.shortlist.Budget` (what it may sample) and
returns a smaller shortlist.  :func:`search` runs :func:`stages_for` in order —
``train``, ``screen``, the optional ``rare-scan``
(:mod:`~dpaudit.auditors.blackbox.rare_scan`), ``rank``, then the optional
``playoff`` and ``ladder`` (switched by
:class:`~dpaudit.auditors.blackbox.config.SearchConfig`) — and
:mod:`~dpaudit.auditors.blackbox.final` proposes the sets the last stage left to the
core, which certifies them on fresh final samples.  What each
stage does and why: :mod:`dpaudit.auditors.blackbox.auditor`'s docstring.  Every
stage draws from its own key range (its stage code), so switching one off
leaves the others' samples unchanged.  Imports nothing above ``auditors/``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol

import numpy as np

from dpaudit.auditors.blackbox.config import AuditConfig, SearchConfig, ladder_bar_for
from dpaudit.auditors.blackbox.design import Design
from dpaudit.auditors.blackbox.final import nothing_to_certify, search_proposals
from dpaudit.auditors.blackbox.rare import RARE_MIN_HITS, RareSetScore
from dpaudit.auditors.blackbox.rare_scan import RareScan
from dpaudit.auditors.blackbox.representation import representation_note
from dpaudit.auditors.blackbox.sampler import Timer
from dpaudit.auditors.blackbox.selection import CandidateTable
from dpaudit.auditors.blackbox.shortlist import (
    Budget,
    Combo,
    Entry,
    Shortlist,
    count_combos,
    leading_group_under_ranking_margin,
    rank_sets,
)
from dpaudit.auditors.blackbox.training import Train
from dpaudit.auditors.core.procedure import Proposals
from dpaudit.auditors.core.streams import StageKey


class Stage(Protocol):
    """One step of the search: a name, its own frozen settings, and ``run``.

    ``run`` takes the shortlist and what it may spend and returns the next
    shortlist: ``train`` creates the candidates, every later stage keeps or drops
    them (``rare-scan`` may add ``rare`` combinations on pairs already in), and none
    draws from the final certification's stream (:attr:`StageKey.FINAL`).  Its
    settings are fields of the stage, built by ``of`` from a
    :class:`~dpaudit.auditors.blackbox.config.SearchConfig`.
    """

    name: ClassVar[str]

    def run(self, state: Shortlist, budget: Budget) -> Shortlist: ...


# ================================================================== stages
@dataclass(frozen=True)
class Screen:
    """Keep the ``screen_pairs`` combinations whose best set projects highest on training.

    Combinations whose best set projects no bound at all (≤ 0) on the training
    outputs go on only to fill the screen up to ``screen_min``: each one kept
    widens the ranking's multiplicity margin (it counts every candidate ranked),
    which costs small sets more than large ones.  With the box patterns placed
    inside the box, SparseVectorTechnique4 at 1/100 of DP-Sniper's sizes (seed 0)
    had 5 of its 30 pairs (14 patterns, 16 moves) project a bound and 13 of the 32
    screen places go to pairs that projected none; its ranking then preferred a
    large set of 0.097 over the X pattern's smaller ones (≈ 0.13 given alone).

    The margin for every candidate of every combination hides small sets, though:
    at 1/10 of DP-Sniper's sizes SVT2's X pattern projected nothing on training
    (its best set, 3 % of the outputs, 0.015 under its own combination's margin)
    while 11 combinations of large sets did, so it never reached the ranking, where
    its sets certify 0.06 against the large sets' 0.038.  So the combinations that
    project nothing are ordered by their projection under their own candidates'
    margin, and the best combination of each of the ``screen_spare`` best pairs
    with none kept goes on too (both fields of
    :class:`~dpaudit.auditors.blackbox.config.SearchConfig`).
    """

    name: ClassVar[str] = "screen"
    keep: int
    min: int
    spare: int

    @classmethod
    def of(cls, search: SearchConfig) -> Screen:
        return cls(search.screen_pairs, search.screen_min, search.screen_spare)

    def run(self, state: Shortlist, budget: Budget) -> Shortlist:
        cfg = budget.config

        def best(compared: int | None, t: CandidateTable) -> float:
            n = t.size if compared is None else compared
            proj = t.project(cfg.final_samples, budget.alpha_side, budget.delta, n)
            return float(np.max(proj, initial=-np.inf))

        screened = [best(state.compared, t) for t in state.tables]
        order = sorted(range(len(state.combos)), key=lambda k: -screened[k])
        useful = sum(screened[k] > 0.0 for k in order)
        n_keep = min(self.keep, max(useful, self.min))
        head = order[: min(useful, n_keep)]
        # The rest is ordered by the projection under each combination's own margin among
        # ties (no bound on training), so the fill is the most promising of them, not the
        # first made, and the spare pairs are the most promising left out.  Computed only
        # for the rest: a projection costs beta quantiles per candidate.
        own = {k: best(None, state.tables[k]) for k in order[len(head) :]}
        rest = sorted(order[len(head) :], key=lambda k: (-screened[k], -own[k]))
        keep = head + rest[: n_keep - len(head)]
        held = {state.combos[k].pair_index for k in keep}
        spare: list[int] = []
        for k in sorted(rest[n_keep - len(head) :], key=lambda k: -own[k]):
            pair = state.combos[k].pair_index
            if len(spare) >= self.spare or own[k] <= 0.0:
                break
            if pair not in held:
                held.add(pair)
                spare.append(k)
        keep = keep + spare
        return dataclasses.replace(
            state,
            combos=tuple(state.combos[k] for k in keep),
            tables=tuple(state.tables[k] for k in keep),
        )


@dataclass(frozen=True)
class Rank:
    """Count every set of the kept combinations on fresh outputs and keep the leaders.

    Leaders, on ``samples`` fresh outputs per input: the ``rank_top`` best under the
    margin for every candidate ranked and, so that an effect that margin hides at
    small sample sizes still gets its chance, the ``rank_top · rank_extra`` best
    under the margin for those leaders alone (``SearchConfig.rank_extra``).
    """

    name: ClassVar[str] = "rank"
    top: int
    extra: float

    @classmethod
    def of(cls, search: SearchConfig) -> Rank:
        return cls(search.rank_top, search.rank_extra)

    def run(self, state: Shortlist, budget: Budget) -> Shortlist:
        cfg = budget.config
        everything = list(range(len(state.combos)))
        counted = count_combos(budget, state, everything, cfg.samples, StageKey.SELECT, "ranking")
        tables = tuple(counted[k] for k in everything)
        top = max(self.top, cfg.best_candidates)
        passes = [(sum(t.size for t in tables), top)]
        if int(top * self.extra) > 0:
            passes.append((top, int(top * self.extra)))
        chosen: set[tuple[int, int]] = set()
        for compared, count in passes:
            scored: list[tuple[float, int, int]] = []
            for k, t in enumerate(tables):
                proj = t.project(cfg.final_samples, budget.alpha_side, budget.delta, compared)
                scored += [(float(proj[j]), k, j) for j in t.leaders(proj, count)]
            scored.sort(key=lambda v: -v[0])
            chosen.update((k, j) for _, k, j in scored[:count])
        pool = tuple(sorted(chosen))
        return dataclasses.replace(
            state,
            tables=tables,
            pool=pool,
            ranked=rank_sets(budget, state.combos, tables, pool),
            rare=_rare_entries(state.combos, tables, budget.delta),
            samples={**state.samples, "selection": cfg.samples},
        )


def _rare_entries(
    combos: tuple[Combo, ...], tables: tuple[CandidateTable, ...], delta: float
) -> tuple[Entry, ...]:
    """The rare-event sets the ranking counts confirm, one per rare score, for certification.

    A rare set is chosen on training outputs; it goes to the final stage as an extra
    set (one more in K) when the ranking counts hit it ≥ :data:`RARE_MIN_HITS` times
    under one input and at most a quarter as often under the other.  Ranking by the
    projection would drop it at small sizes: its few hits never clear the margin for
    the thousands of candidates compared.
    """
    out: list[Entry] = []
    for k, (c, t) in enumerate(zip(combos, tables, strict=True)):
        if not isinstance(c.score, RareSetScore):
            continue
        gain = np.where(4 * t.den <= t.num, t.num, -1)
        j = int(np.argmax(gain))
        if gain[j] >= RARE_MIN_HITS:
            out.append(
                Entry(k, j, t.candidate(c.pair_index, c.score, c.thresholds, j, -1.0, delta))
            )
    return tuple(out)


@dataclass(frozen=True)
class Playoff:
    """Decide between near-equal pairs on more data before the final stage spends its samples.

    The ranking counts order the leaders with the noise of ``samples`` outputs per
    input, which can exceed the true difference between two pairs (DP-Sniper's
    ReportNoisyMax1: ratios 0.0946 and 0.0927 at mass 0.2, noise ≈ 0.0012 each on
    5.35M outputs).
    The best candidate of each of the ``playoff_groups`` best (pair, orientation)
    groups has its score's candidates counted on more fresh outputs.  The groups are
    ordered by their best candidate on the playoff counts alone: the ranking
    counts chose these groups, so the leader's are biased upward (winner's curse).
    Within a group the sets are ranked on ranking + playoff counts, and the
    winner's ladder is read off the same pooled counts.  A group within
    ``playoff_tie_z`` standard errors of the leader is too close to call: its best
    set goes to the final stage too (a runner-up).  With ``playoff_hedge``, the
    leading group's best set under the ranking's own margin goes there too when it
    is not the leader (a hedge against a tiny set whose lead rests on a few lucky
    ranking hits).  With a single group there is nothing to decide and no playoff
    outputs are drawn, but the hedge still applies, on the ranking counts alone (a
    single ``--pair`` whose ranking pool, compared under the margin for its few
    sets, led with a 0.0012 % set: LaplaceParallel at DP-Sniper's full sizes,
    measured 2026-11-28, ``docs/tuning.md``).  What
    runners-up earn (``benchmarks/README.md``, "Search ablation", second run): not
    the median bound, but the seeds where the playoff called the wrong group —
    without them 6 of 45 seed-runs lost 0.021–0.042 (ReportNoisyMax2's worst seed
    0.0943 → 0.0719, SVT4's 0.1171 → 0.0846), while the gain of certifying fewer
    sets was 0.0004–0.0027.
    """

    name: ClassVar[str] = "playoff"
    groups: int
    samples: int | None
    tie_z: float
    hedge: bool

    @classmethod
    def of(cls, search: SearchConfig) -> Playoff:
        return cls(
            search.playoff_groups,
            search.playoff_samples,
            search.playoff_tie_z,
            search.playoff_hedge,
        )

    def run(self, state: Shortlist, budget: Budget) -> Shortlist:
        groups: dict[tuple[int, bool], int] = {}
        for e in state.ranked:
            if len(groups) >= self.groups:
                break
            groups.setdefault(e.group, e.combo)
        if len(groups) < 2:
            return dataclasses.replace(
                state,
                hedges=self._hedge(state, budget, state.tables, state.ranked),
                samples={**state.samples, "playoff": 0},
            )
        n = self.samples or budget.config.samples
        ks = sorted(set(groups.values()))
        extra = count_combos(budget, state, ks, n, StageKey.PLAYOFF, "playoff")
        merged = tuple(t.merged(extra[k]) if k in extra else t for k, t in enumerate(state.tables))
        keys = [e.key for e in state.ranked if e.combo in extra]
        pooled = list(rank_sets(budget, state.combos, merged, keys))
        samples = {**state.samples, "playoff": n}
        if not pooled:
            return dataclasses.replace(state, samples=samples)
        # Each group's standing: its best projection on the fresh playoff counts only,
        # with that set's log-ratio estimate and standard error there.
        standing: dict[tuple[int, bool], tuple[float, float, float]] = {}
        for e in rank_sets(budget, state.combos, extra, keys):
            if e.group not in standing:
                c = e.candidate
                se = extra[e.combo].log_ratio_se(e.index)
                standing[e.group] = (c.projected, c.selection_estimate, se)
        # ``sort`` is stable: within a group the pooled order stays.
        pooled.sort(key=lambda e: -standing.get(e.group, (-math.inf,))[0])
        leader = standing.get(pooled[0].group)
        too_close: list[Entry] = []
        if leader is not None:
            seen = {pooled[0].group}
            for e in pooled:
                if e.group in seen or e.group not in groups or e.group not in standing:
                    continue
                seen.add(e.group)
                _, est, se = standing[e.group]
                if leader[1] - est <= self.tie_z * math.hypot(leader[2], se):
                    too_close.append(e)
        return dataclasses.replace(
            state,
            tables=merged,
            ranked=tuple(pooled),
            runners_up=tuple(too_close),
            hedges=self._hedge(state, budget, merged, pooled),
            samples=samples,
        )

    def _hedge(
        self,
        state: Shortlist,
        budget: Budget,
        tables: Sequence[CandidateTable],
        ranked: Sequence[Entry],
    ) -> tuple[Entry, ...]:
        """The leading group's best set under the ranking's own margin, when not the leader.

        The counts in ``tables`` are, in whole or half, the ranking's, which chose these
        sets among every candidate it ranked; under that margin a set whose lead rests
        on a few lucky hits falls back.  Certified beside the leader, not instead of it.
        """
        if not self.hedge or not ranked:
            return ()
        careful = leading_group_under_ranking_margin(state, budget, tables, ranked)
        return careful[:1] if careful and careful[0].key != ranked[0].key else ()


@dataclass(frozen=True)
class Ladder:
    """Smaller sets of the winner's kind the selection margin could not certify.

    Decided between on the (much larger) final sample; see
    :meth:`~dpaudit.auditors.blackbox.selection.CandidateTable.ladder`.
    """

    name: ClassVar[str] = "ladder"
    rungs: int
    step: float
    bar: str
    auto_ratio: float

    @classmethod
    def of(cls, search: SearchConfig) -> Ladder:
        return cls(
            search.ladder_rungs, search.ladder_step, search.ladder_bar, search.ladder_auto_ratio
        )

    def run(self, state: Shortlist, budget: Budget) -> Shortlist:
        if not state.ranked:
            return state
        leaders, runners, hedges, _ = state.proposals(budget.config.best_candidates)
        taken = {e.key for e in leaders + runners + hedges}
        win = state.ranked[0]
        t, c = state.tables[win.combo], state.combos[win.combo]
        cfg = budget.config
        picks = t.ladder(
            win.index,
            cfg.final_samples,
            budget.alpha_side,
            budget.delta,
            self.rungs,
            self.step,
            bar=self.rung_bar(cfg, win),
        )
        rungs = tuple(
            Entry(
                win.combo,
                j,
                t.candidate(c.pair_index, c.score, c.thresholds, j, -math.inf, budget.delta),
            )
            for j in picks
            if (win.combo, j) not in taken
        )
        return dataclasses.replace(state, rungs=rungs)

    def rung_bar(self, config: AuditConfig, winner: Entry) -> float | None:
        """What a rung must project above at face value (``None``: the winner's face value)."""
        bar = ladder_bar_for(self.bar, self.auto_ratio, config.samples, config.final_samples)
        return winner.candidate.projected if bar == "projected" else None


#: Every stage by name, in the order the search runs them: each is built from a SearchConfig.
STAGES: dict[str, type[Design | Train | Screen | RareScan | Rank | Playoff | Ladder]] = {
    s.name: s for s in (Design, Train, Screen, RareScan, Rank, Playoff, Ladder)
}


def stages_for(search: SearchConfig) -> list[Stage]:
    """The stages ``search`` switches on, in order (train, screen and rank always)."""
    off = {
        "rare-scan": not search.rare_events or search.rare_scan_pairs == 0,
        "playoff": search.playoff_groups < 2,
        "ladder": search.ladder_rungs == 0,
        "design": not search.input_design,
    }
    return [stage.of(search) for name, stage in STAGES.items() if not off.get(name, False)]


# ================================================================== driver
def search(budget: Budget, timer: Timer) -> Proposals:
    """Run the stages in order; the sets the last one left are proposed to the core.

    Each stage's cost, the outputs it drew, is read from the sampler's tally around
    its own run.  The core then counts the proposals on fresh final samples and
    certifies them together (:mod:`dpaudit.auditors.blackbox.final`).
    """
    state = Shortlist(
        pairs=tuple(budget.pairs), samples={"training": 0, "selection": 0, "playoff": 0}
    )
    stages = stages_for(budget.config.search)
    tally = budget.sampler.tally
    for k, stage in enumerate(stages, start=1):
        tally.label = f"stage {k} of {len(stages) + 1} ({stage.name}): "  # + certification
        before = tally.drawn
        state = stage.run(state, budget)
        timer.mark(stage.name, tally.since(before))
    tally.label = f"stage {len(stages) + 1} of {len(stages) + 1} (certify): "
    note = _representation_note(state, budget)
    if not state.ranked and not state.rare:
        return nothing_to_certify(state, budget, timer, note)
    leaders, runners, hedges, rungs = state.proposals(budget.config.best_candidates)
    proposed = leaders + runners + hedges + rungs
    rare = [e for e in state.rare if e.key not in {f.key for f in proposed}]
    roles = ["best"] * len(leaders) + ["runner-up"] * len(runners) + ["hedge"] * len(hedges)
    roles += ["rung"] * len(rungs) + ["rare"] * len(rare)
    sets = (len(proposed) + len(rare), len(runners), len(hedges), len(rungs), len(rare))
    return search_proposals(state, proposed + rare, roles, sets, budget, timer, note)


def _representation_note(state: Shortlist, budget: Budget) -> str:
    """What the float-representation check saw (``""`` in DP-Sniper mode, where it never runs)."""
    if budget.config.mode != "dpaudit":
        return ""
    return representation_note(state.representation, budget.config.search.representation)
