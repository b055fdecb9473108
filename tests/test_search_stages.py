"""The dpaudit-mode search as named stages (`audit.blackbox.stages`) and its `SearchConfig`.

Small sizes and fixed seeds: these check the stages' contract (each returns a
smaller shortlist), the switches, the draw tally the ablation benchmark reads
and that the final bound is the core's certification of the proposed sets.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest

from dpaudit.auditors.blackbox import stages as stages_module
from dpaudit.auditors.blackbox.auditor import AuditConfig, audit
from dpaudit.auditors.blackbox.config import SearchConfig
from dpaudit.auditors.blackbox.sampler import Sampler, Timer
from dpaudit.auditors.blackbox.selection import CandidateTable
from dpaudit.auditors.blackbox.shortlist import Budget, Combo, Shortlist, rank_sets
from dpaudit.auditors.blackbox.stages import STAGES, stages_for
from dpaudit.auditors.core.certify import FinalCounts, certify_one
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms import make_mechanism

ONE = ExecutionConfig(workers=1)
SMALL = AuditConfig(samples=20_000, final_samples=40_000, train_samples=10_000, seed=3)


def test_stage_list_follows_the_switches() -> None:
    assert [s.name for s in stages_for(SearchConfig())] == list(STAGES)
    assert list(STAGES) == ["design", "train", "screen", "rare-scan", "rank", "playoff", "ladder"]
    off = SearchConfig(playoff_groups=0, ladder_rungs=0, rare_scan_pairs=0, input_design=False)
    assert [s.name for s in stages_for(off)] == ["train", "screen", "rank"]
    no_rare = SearchConfig(rare_events=False)
    assert "rare-scan" not in [s.name for s in stages_for(no_rare)]
    # Each stage carries its own settings, read from the SearchConfig it was built of.
    screen = stages_for(SearchConfig(screen_pairs=5))[2]
    assert screen.name == "screen" and screen.keep == 5
    with pytest.raises(dataclasses.FrozenInstanceError):
        screen.keep = 6  # type: ignore[misc]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("train_floor", 0),
        ("screen_pairs", 0),
        ("screen_min", 0),
        ("screen_spare", -1),
        ("rank_top", 0),
        ("rank_extra", 1.5),
        ("playoff_groups", -1),
        ("rare_scan_pairs", -1),
        ("rare_scan_values", 0),
        ("playoff_samples", 0),
        ("playoff_tie_z", math.nan),
        ("ladder_rungs", -1),
        ("ladder_step", 1.0),
        ("ladder_bar", "margin"),
        ("ladder_auto_ratio", 0.0),
        ("ladder_auto_ratio", math.inf),
    ],
)
def test_search_config_rejects_bad_values_by_name(field: str, value: object) -> None:
    with pytest.raises(InvalidArgumentError, match=field):
        SearchConfig(**{field: value})


def _budget(cfg: AuditConfig) -> Budget:
    mech = make_mechanism("laplace", epsilon=1.0)
    from dpaudit.auditors.blackbox.pairs import generate_pairs

    pairs = generate_pairs(mech, mode="dpaudit", user_pairs=(), use_patterns=True)
    return Budget(
        mech,
        cfg,
        pairs,
        ("likelihood-ratio", "logistic"),
        Sampler(mech, cfg.seed, ONE, None),
        0.025,
        0.0,
    )


def test_every_stage_returns_a_smaller_shortlist() -> None:
    budget = _budget(SMALL)
    state = Shortlist()
    sizes = []
    for stage in stages_for(SMALL.search):
        state = stage.run(state, budget)
        if stage.name == "design":  # adds pairs, no candidates: nothing to shrink yet
            assert state.combos == () and state.pairs[: len(budget.pairs)] == tuple(budget.pairs)
            continue
        pool = len(state.pool) if state.pool is not None else sum(t.size for t in state.tables)
        sizes.append((stage.name, len(state.combos), pool))
    assert sizes[0][1] == 2 * len(state.pairs)  # train: every (pair, family)
    # The rare scan may only add rare-event scores (none on a correct Laplace): skip it.
    assert [n for n, *_ in sizes][2] == "rare-scan" and sizes[2][1:] == sizes[1][1:]
    shrinking = [s for s in sizes if s[0] != "rare-scan"]
    for (_, c0, p0), (name, c1, p1) in itertools.pairwise(shrinking):
        assert c1 <= c0 and p1 <= p0, name
    ranked = dict((n, p) for n, _, p in sizes)["rank"]
    assert 0 < len(state.ranked) <= ranked
    # rank keeps the ``rank_top`` leaders under the margin for every candidate and
    # ``rank_top · rank_extra`` under the margin for those alone, no more.
    top = max(SMALL.search.rank_top, SMALL.best_candidates)
    assert ranked <= top + int(top * SMALL.search.rank_extra)


def test_timer_tallies_the_outputs_each_stage_draws() -> None:
    mech = make_mechanism("laplace", epsilon=1.0)
    timer = Timer()
    r = audit(mech, SMALL, ONE, timer=timer)
    pairs = r.detail.pairs_tried
    assert timer.drawn["train"] == 2 * pairs * 10_000
    assert timer.drawn["screen"] == 0
    # rank counts every input of the screened combinations on all of ``samples``.
    assert timer.drawn["rank"] > 0 and timer.drawn["rank"] % SMALL.samples == 0
    assert timer.drawn["final"] % 40_000 == 0 and timer.drawn["final"] >= 2 * 40_000
    assert set(timer.cpu) >= {"train", "screen", "rank", "final"}


@pytest.mark.parametrize(
    "search",
    [
        SearchConfig(playoff_groups=0),
        SearchConfig(ladder_rungs=0),
        SearchConfig(rank_extra=0.0),
        SearchConfig(screen_pairs=1),
    ],
)
def test_switched_off_stages_still_certify_with_the_core(search: SearchConfig) -> None:
    mech = make_mechanism("laplace", epsilon=1.0)
    r = audit(mech, dataclasses.replace(SMALL, search=search), ONE)
    w = r.witness
    assert w is not None and not r.violation
    # The bound is the core's certificate of the witness's counts at error α/(2K).
    error = (1 - SMALL.confidence) / (2 * r.detail.certified_proposals)
    counts = FinalCounts(w.p1.hits, w.p1.samples, w.p2.hits, w.p2.samples)
    assert w.epsilon_lower_bound == certify_one(counts, error).lower_bound
    if search.playoff_groups == 0:
        assert r.samples["playoff"] == 0
    if search.ladder_rungs == 0:
        assert "0 smaller set(s)" in r.confidence_statement


def test_without_the_ladder_the_winner_is_counted_on_the_same_final_outputs() -> None:
    # Every stage draws from its own keys and the rungs share the winner's final jobs:
    # switching the ladder off removes sets from K, never changes another set's counts.
    mech = make_mechanism("laplace", epsilon=1.0)
    cfg = dataclasses.replace(SMALL, pairs=(), seed=5)
    a = audit(mech, cfg, ONE)
    b = audit(mech, dataclasses.replace(cfg, search=SearchConfig(ladder_rungs=0)), ONE)
    assert a.witness is not None and b.witness is not None
    assert b.detail.certified_proposals <= a.detail.certified_proposals
    assert f"α/(2·{b.detail.certified_proposals})" in b.confidence_statement
    if a.witness.event == b.witness.event:
        assert (a.witness.p1.hits, a.witness.p2.hits) == (b.witness.p1.hits, b.witness.p2.hits)


def test_the_lower_ladder_bar_only_adds_sets_to_the_final_stage() -> None:
    # Everything before the ladder is the same search; the projected bar is below the
    # winner's face value, so it keeps every rung the face bar keeps and here two more
    # (the Gaussian's ratio grows into the tail), and more sets in K change no set's
    # final counts (the rungs share the winner's jobs).
    mech = make_mechanism("gaussian", epsilon=1.0, delta=1e-5)
    cfg = dataclasses.replace(SMALL, pairs=(), seed=2)
    face = audit(mech, dataclasses.replace(cfg, search=SearchConfig(ladder_bar="face")), ONE)
    low = audit(mech, dataclasses.replace(cfg, search=SearchConfig(ladder_bar="projected")), ONE)
    assert face.witness is not None and low.witness is not None
    assert low.detail.certified_proposals > face.detail.certified_proposals
    assert f"α/(2·{low.detail.certified_proposals})" in low.confidence_statement
    if low.witness.event == face.witness.event:
        assert (low.witness.p1.hits, low.witness.p2.hits) == (
            face.witness.p1.hits,
            face.witness.p2.hits,
        )


def test_the_record_of_certified_sets_gives_back_the_face_bar() -> None:
    # The projected run records all K sets; dropping the rungs the face bar drops
    # (face projection not above the winner's) and re-splitting α gives exactly the
    # face run's bound, and the face run's record is the same sets with the same
    # counts: a set's final counts do not depend on which other sets were certified.
    mech = make_mechanism("gaussian", epsilon=1.0, delta=1e-5)
    cfg = dataclasses.replace(SMALL, pairs=(), seed=2)
    face = audit(mech, dataclasses.replace(cfg, search=SearchConfig(ladder_bar="face")), ONE)
    low = audit(mech, dataclasses.replace(cfg, search=SearchConfig(ladder_bar="projected")), ONE)
    record = low.detail.certified
    assert len(record) == low.detail.certified_proposals and record[0].role == "best"
    assert low.witness is not None and low.epsilon_lower_bound == max(
        c.epsilon_lower_bound for c in record
    )
    face_rule = low.detail.kept_by_face_bar
    assert any(not face_rule(c) for c in record)  # the projected bar kept more
    kept = [(c.event, c.p1_hits, c.p2_hits) for c in record if face_rule(c)]
    assert kept == [(c.event, c.p1_hits, c.p2_hits) for c in face.detail.certified]
    derived = low.detail.recertified(face_rule, cfg.confidence, low.claimed_delta)
    assert derived == face.epsilon_lower_bound
    assert low.detail.recertified(lambda c: True, cfg.confidence, low.claimed_delta) == (
        low.epsilon_lower_bound
    )
    assert low.detail.recertified(lambda c: False, cfg.confidence) == 0.0


def test_the_auto_ladder_bar_takes_the_lower_bar_only_for_a_large_final_sample() -> None:
    # "auto" (the default) is "face" below final = 10 × selection samples, "projected"
    # from there on; the explicit bars are kept whatever the sizes.
    auto = SearchConfig()
    assert auto.ladder_bar == "auto" and auto.ladder_auto_ratio == 10.0
    assert auto.effective_ladder_bar(20_000, 40_000) == "face"
    assert auto.effective_ladder_bar(20_000, 199_999) == "face"
    assert auto.effective_ladder_bar(20_000, 200_000) == "projected"
    assert auto.effective_ladder_bar(10_700_000, 200_000_000) == "projected"
    for bar in ("face", "projected"):
        assert SearchConfig(ladder_bar=bar).effective_ladder_bar(1, 10**9) == bar
        assert SearchConfig(ladder_bar=bar).effective_ladder_bar(10**9, 1) == bar
    assert SearchConfig(ladder_auto_ratio=2.0).effective_ladder_bar(20_000, 40_000) == "projected"
    # The audit follows it: at ratio 2 the default run is the face run, at ratio 10 the
    # projected run, set for set (seed 2: the two bars certify different sets at both).
    mech = make_mechanism("gaussian", epsilon=1.0, delta=1e-5)
    for final, bar in ((8_000, "face"), (40_000, "projected")):
        cfg = AuditConfig(samples=4_000, final_samples=final, train_samples=4_000, seed=2)
        default = audit(mech, cfg, ONE)
        runs = {
            b: audit(mech, dataclasses.replace(cfg, search=SearchConfig(ladder_bar=b)), ONE)
            for b in ("face", "projected")
        }
        assert runs["face"].detail.certified != runs["projected"].detail.certified
        assert default.detail.certified == runs[bar].detail.certified
        assert default.epsilon_lower_bound == runs[bar].epsilon_lower_bound


def _table(num: int, den: int, n: int = 1_000_000) -> CandidateTable:
    # Two thresholds × the 8 set kinds; only entry 0 (upper tail, x on top) is hit.
    size = 16
    hits_num, hits_den = np.zeros(size), np.zeros(size)
    hits_num[0], hits_den[0] = num, den
    full = np.full(size, float(n))
    return CandidateTable(2, hits_num, full, hits_den, full, np.full(size, np.nan))


def test_screen_keeps_the_best_pair_that_only_its_own_margin_lets_project() -> None:
    final = 20_000_000  # 1/10 of DP-Sniper's final size
    budget = _budget(dataclasses.replace(SMALL, final_samples=final))
    thr = np.array([0.0, 1.0])
    compared = 5_616  # SVT2's training candidates at 1/10 of DP-Sniper's sizes
    large = _table(300_000, 250_000)  # ratio 1.2 on 30 %: projects under any margin
    small = _table(2_000, 1_760)  # ratio 1.14 on 0.2 %: only under its own margin
    flat = _table(2_000, 2_000)  # no signal
    a, s = budget.alpha_side, budget.delta
    assert np.max(small.project(final, a, s, compared)) <= 0.0
    assert np.max(small.project(final, a, s, small.size)) > 0.0
    # Nine useful combinations of pair 0 (more than screen_min), then pairs 1 and 2.
    combos = (
        *(Combo(0, None, thr) for _ in range(9)),  # type: ignore[arg-type]
        Combo(2, None, thr),  # type: ignore[arg-type]
        Combo(1, None, thr),  # type: ignore[arg-type]
    )
    tables = (large,) * 9 + (flat, small)
    state = Shortlist(combos=combos, tables=tables, compared=compared)
    out = STAGES["screen"].of(budget.config.search).run(state, budget)
    assert [c.pair_index for c in out.combos] == [0] * 9 + [1]
    # Switched off (screen_spare=0): pair 1 is dropped, as before the rule.
    off = dataclasses.replace(budget.config, search=SearchConfig(screen_spare=0))
    out = STAGES["screen"].of(off.search).run(state, dataclasses.replace(budget, config=off))
    assert [c.pair_index for c in out.combos] == [0] * 9


def _sparse_table(m: int, hits: dict[int, tuple[int, int]], n: int) -> CandidateTable:
    # ``8·m`` sets on ``n`` outputs per input; only the entries in ``hits`` are hit.
    num, den = np.zeros(8 * m), np.zeros(8 * m)
    for j, (a, b) in hits.items():
        num[j], den[j] = a, b
    full = np.full(8 * m, float(n))
    return CandidateTable(m, num, full, den, full, np.full(8 * m, np.nan))


def _ranked(
    budget: Budget,
    combos: tuple[Combo, ...],
    tables: tuple[CandidateTable, ...],
    keys: list[tuple[int, int]],
    n: int,
) -> Shortlist:
    # The state the rank stage leaves: ``keys`` pooled and ordered under their own margin.
    return Shortlist(
        combos=combos,
        tables=tables,
        pool=tuple(keys),
        ranked=rank_sets(budget, combos, tables, keys),
        samples={"training": 0, "selection": n},
    )


@pytest.mark.parametrize("hedge", [False, True])
def test_playoff_hedge_certifies_the_groups_best_set_under_the_rankings_margin(
    monkeypatch: pytest.MonkeyPatch, hedge: bool
) -> None:
    # one_time_rappor, seed 0, at 1/100 of DP-Sniper's sizes (measured 2026-11-28):
    # a 0.006 % set counted 25 vs 2 on the ranking outputs, chosen from thousands of
    # candidates, and 16 vs 1 on the playoff's; a 1.8 % set of the same group counted
    # 1 918 vs 1 056 on both.  Pooled under the margin for the three sets re-ranked the
    # lucky set leads; under the ranking's margin for its 2 × 8·320 candidates the large
    # one does, and the hedge sends it to the final stage beside the leader.
    n, m, final = 107_000, 320, 2_000_000
    search = SearchConfig(playoff_hedge=hedge)
    cfg = dataclasses.replace(SMALL, samples=n, final_samples=final, search=search)
    budget = _budget(cfg)
    thr = np.linspace(0.0, 1.0, m)
    combos = (Combo(0, None, thr), Combo(1, None, thr))  # type: ignore[arg-type]
    large, lucky, other = 0, 1, 2  # upper tail, x on top: one (pair, orientation) group
    ranking = (
        _sparse_table(m, {large: (1_918, 1_056), lucky: (25, 2)}, n),
        _sparse_table(m, {other: (3_000, 2_100)}, n),  # a weaker pair: a second group
    )
    fresh = {
        0: _sparse_table(m, {large: (1_918, 1_056), lucky: (16, 1)}, n),
        1: _sparse_table(m, {other: (3_000, 2_100)}, n),
    }
    monkeypatch.setattr(stages_module, "count_combos", lambda *args: fresh)
    state = _ranked(budget, combos, ranking, [(0, large), (0, lucky), (1, other)], n)
    out = STAGES["playoff"].of(search).run(state, budget)
    assert out.ranked[0].key == (0, lucky)  # the hedge changes no order
    assert [e.key for e in out.hedges] == ([(0, large)] if hedge else [])
    leaders, _, hedges, _ = out.proposals(1)
    assert [e.key for e in leaders + hedges] == [(0, lucky)] + ([(0, large)] if hedge else [])
    # Were the margins equal, the two orders would agree and nothing would be added.
    same = rank_sets(budget, combos, out.tables, [(0, large), (0, lucky)], 2)
    assert same[0].key == (0, lucky)


@pytest.mark.parametrize("hedge", [False, True])
def test_a_single_group_is_hedged_on_the_ranking_counts_alone(
    monkeypatch: pytest.MonkeyPatch, hedge: bool
) -> None:
    # LaplaceParallel with DP-Sniper's pair given, seed 1 at DP-Sniper's full sizes
    # (measured 2026-11-28): every ranked set was of one (pair, orientation)
    # group, so no playoff ran; under the margin for the pool's few sets a 0.0013 %
    # set counted 138 vs 84 led a 1.2 % set counted 130 306 vs 122 068, and certified
    # 0 on the final outputs (its fresh counts: 13 vs 23 of 2M).
    n, m, final = 10_700_000, 320, 200_000_000
    search = SearchConfig(playoff_hedge=hedge)
    cfg = dataclasses.replace(SMALL, samples=n, final_samples=final, search=search)
    budget = _budget(cfg)
    combos = (Combo(0, None, np.linspace(0.0, 1.0, m)),)  # type: ignore[arg-type]
    large, lucky = 0, 1  # upper tail, x on top: one group
    ranking = (_sparse_table(m, {large: (130_306, 122_068), lucky: (138, 84)}, n),)

    def no_playoff(*args: object) -> None:
        raise AssertionError("a single group draws no playoff outputs")

    monkeypatch.setattr(stages_module, "count_combos", no_playoff)
    state = _ranked(budget, combos, ranking, [(0, large), (0, lucky)], n)
    assert state.ranked[0].key == (0, lucky)  # under the margin for the pool's two sets
    out = STAGES["playoff"].of(search).run(state, budget)
    assert out.samples["playoff"] == 0 and out.ranked == state.ranked
    assert [e.key for e in out.hedges] == ([(0, large)] if hedge else [])


def test_the_hedge_adds_one_set_and_changes_no_other_sets_counts() -> None:
    # The hedge only adds a set of the leader's pair, whose final jobs are drawn anyway:
    # every other set keeps its final counts, so the audit with the hedge certifies at
    # least what the one without it certified, at the error of one more set in K.
    mech = make_mechanism("laplace", epsilon=1.0)
    cfg = dataclasses.replace(SMALL, pairs=(), seed=5)  # a seed whose two orders disagree
    on = audit(mech, cfg, ONE)
    off = audit(mech, dataclasses.replace(cfg, search=SearchConfig(playoff_hedge=False)), ONE)
    assert on.witness is not None and off.witness is not None
    assert on.detail.certified_proposals == off.detail.certified_proposals + 1
    assert "1 leading set(s) under the ranking's own margin" in on.confidence_statement
    assert "leading set(s)" not in off.confidence_statement
    w = off.witness
    counts = FinalCounts(w.p1.hits, w.p1.samples, w.p2.hits, w.p2.samples)
    error = (1 - cfg.confidence) / (2 * on.detail.certified_proposals)
    assert on.witness.epsilon_lower_bound >= certify_one(counts, error).lower_bound


def test_training_outputs_drawn_in_batches_are_those_of_one_call(monkeypatch) -> None:
    """Pair by pair in small batches: the same outputs, and no batch over its budget."""
    from dpaudit.auditors.blackbox import sampler as sampler_module

    budget = _budget(SMALL)
    pairs = [(p.x, p.x_prime) for p in budget.pairs]
    assert len(pairs) >= 3
    n = 5_000
    one = Sampler(budget.mechanism, 7, ONE, None)
    whole = one.outputs([x for x, _ in pairs] + [xp for _, xp in pairs], n, 4, "training")
    held: list[int] = []
    batched = Sampler(budget.mechanism, 7, ONE, None)
    real_outputs = batched.outputs

    def spy(inputs, n_, stage, desc, streams=None):  # type: ignore[no-untyped-def]
        held.append(len(inputs) * n_)
        return real_outputs(inputs, n_, stage, desc, streams)

    object.__setattr__(batched, "outputs", spy)
    # Room for two pairs' values per batch (output size 1), and units small enough
    # that the workers' floor does not raise it.
    monkeypatch.setattr(sampler_module, "TRAINING_BATCH_ELEMENTS", 4 * n)
    monkeypatch.setattr(sampler_module, "UNIT_ELEMENTS", 1)
    got = list(batched.pair_outputs(pairs, n, 4, "training"))
    assert len(got) == len(pairs)
    assert max(held) <= 4 * n and len(held) == math.ceil(len(pairs) / 2)
    for k, (dx, dxp) in enumerate(got):
        np.testing.assert_array_equal(dx.rows, whole[k].rows)
        np.testing.assert_array_equal(dxp.rows, whole[len(pairs) + k].rows)
    assert batched.tally.drawn == one.tally.drawn == 2 * len(pairs) * n
