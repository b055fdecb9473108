"""Candidate selection of the black-box audit (`audit.blackbox.selection`) and its power.

The closed form used throughout: Laplace with scale b = 10 (ε = 0.1) on inputs 0
and 1.  Every upper set ``{y > t}`` with ``t ≥ 1`` has ``p1 = ½e^{−(t−1)/b}``
and ``p2 = ½e^{−t/b}``, ratio exactly ``e^{0.1}``; only the set's mass differs,
and with it the width of the final Clopper–Pearson interval — so the best set
is the largest one (mass ½), and a small set can only win by a lucky count.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pytest

from dpaudit.auditors.blackbox.auditor import AuditConfig, audit
from dpaudit.auditors.blackbox.config import SearchConfig
from dpaudit.auditors.blackbox.pairs import InputPair
from dpaudit.auditors.blackbox.selection import (
    CandidateTable,
    SideStats,
    point_projection,
    projected_bound,
)
from dpaudit.auditors.core.statistics import clopper_pearson_lower, clopper_pearson_upper
from dpaudit.auditors.core.streams import StageKey
from dpaudit.claims import Definition, InputDomain, PrivacyClaim
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms import make_mechanism
from dpaudit.mechanisms.output_grid import round_to_grid
from dpaudit.testing import as_mechanism

ONE = ExecutionConfig(workers=1)
LADDER_RUNGS = SearchConfig().ladder_rungs
LADDER_STEP = SearchConfig().ladder_step


def _laplace_tail_sets(sets: int) -> tuple[np.ndarray, np.ndarray]:
    mass = np.geomspace(0.5, 1e-6, sets)  # Pr[M(1) > t] for t = 1 + b·ln(½/mass)
    t = 1 + 10 * np.log(0.5 / mass)
    return 0.5 * np.exp(-(t - 1) / 10), 0.5 * np.exp(-t / 10)


def test_margin_for_the_number_compared_keeps_lucky_small_sets_from_winning() -> None:
    # DP-Sniper's sizes: 5.35M per input on the ranking half, 200M final, confidence 0.9.
    sets, n, n_final, alpha_side = 400, 5_350_000, 200_000_000, 0.05
    p1, p2 = _laplace_tail_sets(sets)
    # The bound each set really reaches on the final sample (its exact expected counts).
    truth = np.log(clopper_pearson_lower(np.floor(p1 * n_final), n_final, alpha_side)) - np.log(
        clopper_pearson_upper(np.ceil(p2 * n_final), n_final, alpha_side)
    )
    best = float(truth.max())
    assert truth.argmax() == 0 and best > 0.0997  # the mass-½ set, 2.4e-4 below ε
    rng = np.random.default_rng(0)
    size = np.full(sets, n)
    chosen, naive = [], []
    for _ in range(20):
        k1, k2 = rng.binomial(n, p1), rng.binomial(n, p2)
        chosen.append(truth[np.argmax(projected_bound(k1, size, k2, size, n_final, alpha_side,
                                                      compared=8 * sets))])  # fmt: skip
        naive.append(truth[np.argmax(projected_bound(k1, size, k2, size, n_final, alpha_side))])
    # With the margin for 3200 candidates every draw picks a set within 0.0005 of the best
    # (the large sets differ by less than that); without it (one candidate's margin, about
    # the old one-standard-error shrink) lucky small sets win and lose a large part of ε.
    assert min(chosen) >= best - 5e-4
    assert np.median(naive) < best - 0.02


def test_projected_bound_is_monotone_in_the_number_compared() -> None:
    k1, k2, n = np.array([500_000, 2_000]), np.array([452_000, 1_500]), np.full(2, 10**6)
    values = [projected_bound(k1, n, k2, n, 10**7, 0.025, compared=m) for m in (1, 100, 10**4)]
    assert np.all(np.diff(np.stack(values), axis=0) < 0)  # a wider margin for more candidates
    # The margin costs a large set little and a small set much.
    assert values[0][0] - values[-1][0] < 0.01 < values[0][1] - values[-1][1]


def test_margin_is_one_for_the_ratio_not_one_per_count() -> None:
    # Large counts and a final sample so large that its own interval is negligible: the
    # projection is the log-ratio estimate less z(SELECTION_ERROR/M) standard errors of
    # it (delta method), the two counts' deviations added in quadrature.
    from scipy import stats

    from dpaudit.auditors.core.projection import SELECTION_ERROR, log_ratio_se

    k1, k2, n, compared = 400_000, 360_000, 4_000_000, 1000
    proj = projected_bound(np.array([k1]), np.array([n]), np.array([k2]), np.array([n]),
                           10**15, 0.05, compared=compared)[0]  # fmt: skip
    z = stats.norm.isf(SELECTION_ERROR / compared)
    expected = math.log(k1 / k2) - z * log_ratio_se(k1, n, k2, n)
    # Clopper–Pearson's log-scale deviations differ from z·sd by O(z²/k) ≈ 1e-4 relative.
    assert proj == pytest.approx(expected, abs=2e-4)
    # Added whole (equal counts: √2 times the quadrature sum) they would cost 0.0032 more.
    assert proj - (math.log(k1 / k2) - z * math.sqrt(2) * log_ratio_se(k1, n, k2, n)) > 0.003


def test_a_smaller_set_of_a_stronger_pair_outranks_a_larger_weaker_one() -> None:
    # SparseVectorTechnique1 at 1/10 of DP-Sniper's sizes (measured 2026-11-27): a 2.2 % set
    # with true loss 0.085 (final bound 0.080) against an 8.8 % set with loss 0.058 (final
    # bound 0.056), ranked among 5 000 candidates on 1.07M outputs.
    n, n_final, alpha_side, draws = 1_070_000, 20_000_000, 0.05, 200
    p_num = np.array([0.022 * math.exp(0.085), 0.088 * math.exp(0.058)])
    p_den = np.array([0.022, 0.088])
    rng = np.random.default_rng(1)
    wins = 0
    for _ in range(draws):
        k1, k2 = rng.binomial(n, p_num), rng.binomial(n, p_den)
        proj = projected_bound(k1, np.full(2, n), k2, np.full(2, n), n_final, alpha_side,
                               compared=5000)  # fmt: skip
        wins += proj[0] > proj[1]
    # The stronger set wins ≈ 76 % of draws (the per-count margin of earlier versions:
    # ≈ 41 %); binomial sd over 200 draws ≈ 0.03, so 0.65 is > 3.5 sd below the one and
    # > 6 sd above the other.
    assert wins / draws > 0.65


def _laplace_eps01(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    return round_to_grid(x + rng.laplace(0.0, 10.0, size=(n, x.size)), 10.0)


def test_density_free_laplace_reaches_near_the_exact_ceiling() -> None:
    # Black-box (a plain function, no density), pair 0 vs 1: 100k selection / 1M final per
    # input at confidence 0.9.  Ceiling: the mass-½ set's bound from its exact
    # probabilities, ≈ 0.0966.  The final estimate's own noise is ≈ 2.2e-3 in ε (one
    # standard error of ln p1 − ln p2 at ~500k hits each), so 0.0966 − 4 SE ≈ 0.088
    # leaves room for a set a little below the best one.
    claim = PrivacyClaim(Definition.PURE, 0.1, InputDomain((1,), 0.0, 1.0))
    mech = as_mechanism(_laplace_eps01, claim)
    pair = InputPair((0.0,), (1.0,), "given")
    cfg = AuditConfig(100_000, 1_000_000, confidence=0.9, pairs=(pair,), use_patterns=False)
    r = audit(mech, cfg, ONE)
    assert r.detail.attack_families == ("logistic", "mlp")
    assert not r.violation
    assert 0.088 <= r.epsilon_lower_bound <= 0.1
    w = r.witness
    assert w is not None and w.p2.hits > 0.2 * w.p2.samples  # a large-mass set, not a tail


def test_auto_runs_a_black_box_family_beside_the_likelihood_ratio() -> None:
    mech = make_mechanism("laplace", epsilon=1.0)
    r = audit(mech, AuditConfig(samples=4_000, final_samples=8_000, seed=0), ONE)
    assert r.detail.attack_families == ("likelihood-ratio", "logistic")
    assert math.isfinite(r.epsilon_lower_bound) and not r.violation


def _laplace_parallel8(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    noise = rng.laplace(0.0, 20.0, size=(n, x.size))  # ε_i = 0.05 per coordinate
    return round_to_grid(x + noise, 20.0)


def test_split_family_learns_the_clipped_log_ratio_of_parallel_laplace() -> None:
    # 8 coordinates x_i + Lap(20), inputs 0^8 vs 1^8.  The exact log-ratio is
    # Σ (|y_i − 1| − |y_i|)/20, a clipped step at 0..1 in every coordinate: the split
    # family's cuts must sit in [0, 1] up to sampling error and every coordinate's weight
    # must favour x = 0 below the cut.  Pooled median of the two inputs is ½; its standard
    # error is 1/(2·f(½)·√n) ≈ 1/(2·0.025·√200000) ≈ 0.045, so [0.5 ± 0.3] is > 6 SE.
    # Per coordinate the indicator means differ by ≈ 0.025 against a noise of
    # √(2·¼/100000) ≈ 0.0022 (11 SE), so all 8 weights have the right sign.
    from dpaudit.auditors.blackbox.scores import TrainingData, features, train_classifier

    claim = PrivacyClaim(Definition.PURE, 0.4, InputDomain((8,), 0.0, 1.0))
    mech = as_mechanism(_laplace_parallel8, claim)
    rng = np.random.default_rng(3)
    n = 100_000
    dx = TrainingData(_laplace_parallel8(np.zeros(8), n, rng), np.ones(n, dtype=np.int64))
    dxp = TrainingData(_laplace_parallel8(np.ones(8), n, rng), np.ones(n, dtype=np.int64))
    score = train_classifier("split", mech, dx, dxp, seed=0)
    assert score.cuts is not None
    assert np.all(np.abs(score.cuts - 0.5) < 0.3)
    # The frozen score is the logistic model on the indicators, high where x = 0 is likely.
    y = dx.rows[:1000]
    h = (features(y) > score.cuts).astype(np.float32)
    manual = -(((h - score.mean) * score.inv_std) @ score.weights[0]).ravel() - score.biases[0][0]
    np.testing.assert_allclose(score(y), manual, rtol=1e-5, atol=1e-5)
    direction = (score.weights[0].ravel() * score.inv_std).astype(np.float64)
    assert np.all(direction > 0)  # y_i above its cut points to x' = 1^8 on every coordinate


def test_auto_adds_split_only_for_several_numeric_coordinates() -> None:
    claim = PrivacyClaim(Definition.PURE, 0.4, InputDomain((8,), 0.0, 1.0))
    mech = as_mechanism(_laplace_parallel8, claim)
    pair = InputPair((0.0,) * 8, (1.0,) * 8, "given")
    cfg = AuditConfig(20_000, 40_000, pairs=(pair,), use_patterns=False)
    r = audit(mech, cfg, ONE)
    assert r.detail.attack_families == ("logistic", "mlp", "split")
    assert not r.violation  # a correct mechanism
    with pytest.raises(InvalidArgumentError):
        audit(mech, dataclasses.replace(cfg, mode="dpsniper", classifier="split"), ONE)


def _gaussian_shift_table(n: int) -> tuple[CandidateTable, np.ndarray, np.ndarray]:
    # Upper sets {y > t} of N(0.1, 1) (numerator) against N(0, 1): the ratio
    # Φ̄(t − 0.1)/Φ̄(t) keeps growing into the tail, so the best set at a large final
    # size is smaller than the one a selection margin on a small sample can certify.
    # Expected counts (no noise) on n outputs per input: a closed-form table.
    from scipy import stats

    t = np.linspace(-1.0, 5.0, 121).astype(np.float32)
    p1, p2 = stats.norm.sf(t - 0.1), stats.norm.sf(t)
    e = np.zeros(len(t))
    sx = SideStats(np.rint(p1 * n), e, n)
    sxp = SideStats(np.rint(p2 * n), e, n)
    return CandidateTable.of(t, sx, sxp), p1, p2


def _final_truth(p1: np.ndarray, p2: np.ndarray, n_final: int, alpha_side: float) -> np.ndarray:
    return np.log(clopper_pearson_lower(np.floor(p1 * n_final), n_final, alpha_side)) - np.log(
        clopper_pearson_upper(np.ceil(p2 * n_final), n_final, alpha_side)
    )


def test_ladder_offers_smaller_sets_of_the_winners_kind() -> None:
    n, n_final, alpha_side = 5_350_000, 200_000_000, 0.05
    table, p1, p2 = _gaussian_shift_table(n)
    m = table.m
    # The set the margin for 3000 candidates picks (block 0: upper sets, x on top).
    proj = table.project(n_final, alpha_side, 0.0, compared=3000)
    idx = int(np.argmax(proj))
    assert idx < m  # an upper set with x as numerator, as the closed form says
    rungs = table.ladder(idx, n_final, alpha_side, 0.0, LADDER_RUNGS, LADDER_STEP)
    assert 1 <= len(rungs) <= LADDER_RUNGS
    base = p2[idx]
    for j, r in enumerate(rungs, start=1):
        assert r < m and r > idx  # same kind, a higher threshold: a smaller set
        # Nearest grid point to base/√10^j: the grid steps 0.05 in t, so a rate within a
        # factor 1.2 of the target (exact counts: no sampling error here).
        assert base / LADDER_STEP**j / 1.2 < p2[r] < base / LADDER_STEP**j * 1.2
    # What the ladder is for: on the final sample, with the Bonferroni correction over
    # every set re-estimated, the best rung beats the margin's choice.
    k = 1 + len(rungs)
    truth = _final_truth(p1, p2, n_final, alpha_side / k)
    assert max(truth[r] for r in rungs) > truth[idx] + 0.005


def _laplace_tail_table(n_final: int, alpha_side: float) -> tuple[CandidateTable, np.ndarray]:
    # 60 Laplace tail sets counted exactly on 5.35 M outputs per input, and their
    # projections under the margin for all 8·60 entries.
    sets, n = 60, 5_350_000
    p1, p2 = _laplace_tail_sets(sets)
    t = np.arange(sets, dtype=np.float32)  # any increasing grid: sets ordered by mass
    e = np.zeros(sets)
    table = CandidateTable.of(t, SideStats(np.rint(p1 * n), e, n), SideStats(np.rint(p2 * n), e, n))
    return table, table.project(n_final, alpha_side, 0.0, compared=8 * sets)


def test_ladder_is_empty_when_smaller_sets_have_the_same_ratio() -> None:
    # Laplace ε = 0.1 (module docstring): every upper set above 1 has ratio e^0.1, so at
    # face value a smaller set only has a wider final interval — no rung is re-estimated,
    # and the 1-D Laplace keeps its mass-½ set with no Bonferroni cost.
    n_final, alpha_side = 200_000_000, 0.05
    table, proj = _laplace_tail_table(n_final, alpha_side)
    idx = int(np.argmax(proj))
    assert idx == 0
    assert table.ladder(idx, n_final, alpha_side, 0.0, LADDER_RUNGS, LADDER_STEP) == []


def test_ladder_bar_sets_what_a_rung_must_beat() -> None:
    # The Laplace tails above: every rung's face value sits just under the winner's
    # (a wider final interval, the same ratio), so the default bar drops them all.
    # The winner's projection under the ranking's margin lies below every rung, so
    # with that bar all of them are kept; the bar at the winner's face value is the
    # default rule itself.
    n_final, alpha_side = 200_000_000, 0.05
    table, proj = _laplace_tail_table(n_final, alpha_side)
    idx = int(np.argmax(proj))
    picks = table.ladder_picks(idx, LADDER_RUNGS, LADDER_STEP)
    face = table.face_projection([idx, *picks], n_final, alpha_side, 0.0)
    assert len(picks) == LADDER_RUNGS and max(face[1:]) < face[0]
    args = (idx, n_final, alpha_side, 0.0, LADDER_RUNGS, LADDER_STEP)
    assert table.ladder(*args, bar=float(face[0])) == table.ladder(*args) == []
    assert proj[idx] < min(face[1:])
    assert table.ladder(*args, bar=float(proj[idx])) == picks


def test_point_projection_is_the_final_bound_of_the_scaled_counts() -> None:
    # Closed form: Clopper–Pearson bounds of the counts scaled to the final size.
    got = point_projection(np.array([0.05]), np.array([0.04]), 10**7, 0.05)
    want = math.log(clopper_pearson_lower(500_000, 10**7, 0.05)) - math.log(
        clopper_pearson_upper(400_000, 10**7, 0.05)
    )
    assert got[0] == pytest.approx(want, rel=1e-12)


@pytest.mark.slow
def test_final_sets_of_one_pair_share_samples_and_split_the_error() -> None:
    # 8 coordinates of Lap(20), 0^8 vs 1^8: the margin's winner and its ladder are
    # re-estimated on the same final samples (one job per input), every set at error
    # α/(2K) for the K sets re-estimated.
    claim = PrivacyClaim(Definition.PURE, 0.4, InputDomain((8,), 0.0, 1.0))
    mech = as_mechanism(_laplace_parallel8, claim)
    pair = InputPair((0.0,) * 8, (1.0,) * 8, "given")
    cfg = AuditConfig(40_000, 400_000, pairs=(pair,), use_patterns=False, seed=0)
    r = audit(mech, cfg, ONE)
    w = r.witness
    assert w is not None and not r.violation
    k = r.detail.certified_proposals
    assert k >= 2  # seed 0: the winner and 2 more sets of the one pair
    assert w.p1.bound_error == pytest.approx((1 - cfg.confidence) / (2 * k))
    assert w.seeds is not None
    # One job per input of the pair: x's outputs at index 0, x''s at 1, whichever is p1's.
    num = 0 if w.x == pair.x else 1
    assert (w.seeds.p1_unit_key_prefix, w.seeds.p2_unit_key_prefix) == (
        (StageKey.FINAL, num),
        (StageKey.FINAL, 1 - num),
    )
    assert f"α/(2·{r.detail.certified_proposals})" in r.confidence_statement


def test_merged_table_adds_the_counts_of_independent_samples() -> None:
    thr = np.array([0.0, 1.0], dtype=np.float32)
    a = CandidateTable.of(
        thr,
        SideStats(np.array([5, 2]), np.array([1, 0]), 10),
        SideStats(np.array([3, 1]), np.array([0, 1]), 10),
    )
    b = CandidateTable.of(
        thr,
        SideStats(np.array([9, 4]), np.array([0, 2]), 20),
        SideStats(np.array([6, 2]), np.array([1, 0]), 20),
    )
    m = a.merged(b)
    assert np.array_equal(m.num, a.num + b.num) and np.array_equal(m.den, a.den + b.den)
    assert np.all(m.n_num == 30) and np.all(m.n_den == 30)
    # The same table as counting both samples at once.
    both = CandidateTable.of(
        thr,
        SideStats(np.array([14, 6]), np.array([1, 2]), 30),
        SideStats(np.array([9, 3]), np.array([1, 1]), 30),
    )
    assert np.array_equal(m.num, both.num) and np.array_equal(m.den, both.den)


def _two_coins(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Pr[1] = 0.2 + x/10: pair (1, 0) has ratio 1.5, pair (1.1, 0) ratio 1.55."""
    return (rng.random((n, 1)) < 0.2 + x[0] / 10).astype(np.int64)


def test_playoff_runs_between_pairs_and_is_reported() -> None:
    claim = PrivacyClaim(Definition.PURE, 1.0, InputDomain((1,), 0.0, 1.1))
    mech = as_mechanism(_two_coins, claim)
    pairs = (InputPair((1.0,), (0.0,), "given"), InputPair((1.1,), (0.0,), "given"))
    cfg = AuditConfig(20_000, 100_000, confidence=0.9, pairs=pairs, use_patterns=False)
    r = audit(mech, cfg, ONE)
    assert r.samples["playoff"] == 20_000
    assert "playoff" in r.confidence_statement
    assert not r.violation and r.epsilon_lower_bound <= math.log(1.55)
    # One pair whose two orientations are the only groups still has a playoff between them.
    one = dataclasses.replace(cfg, pairs=pairs[:1])
    assert audit(mech, one, ONE).samples["playoff"] in (0, 20_000)


def test_playoff_orders_groups_on_its_own_counts_not_the_biased_validation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The validation counts chose the groups, so the leader's are biased up (winner's curse).

    Pair 0 led on validation by a lucky count (ratio 2.5) and still leads on the pooled
    counts (1200/600 = 2.0 against 1140/600 = 1.9); on the fresh playoff counts alone pair 1
    is ahead (1.9 against 1.75), and the playoff must pick pair 1.
    """
    from dpaudit.auditors.blackbox import stages
    from dpaudit.auditors.blackbox.shortlist import Budget, Combo, Shortlist, rank_sets

    thr = np.array([0.5], dtype=np.float32)

    def table(num: int, den: int, n: int) -> CandidateTable:
        none = np.array([0])
        return CandidateTable.of(
            thr, SideStats(np.array([num]), none, n), SideStats(np.array([den]), none, n)
        )

    no_score: Any = None  # never called: the counts are given
    combos = (Combo(0, no_score, thr), Combo(1, no_score, thr))
    validation = (table(500, 200, 1000), table(380, 200, 1000))
    playoff = {0: table(700, 400, 2000), 1: table(760, 400, 2000)}
    monkeypatch.setattr(stages, "count_combos", lambda *args: playoff)
    cfg = AuditConfig(2000, 100_000, confidence=0.9)
    no_sampler: Any = None  # the playoff's counts are the patched ones above
    budget = Budget(make_mechanism("laplace", epsilon=1.0), cfg, [], (), no_sampler, 0.05, 0.0)
    keys = ((0, 0), (1, 0))  # entry 0: the upper set over x
    ranked = rank_sets(budget, combos, validation, keys)
    assert [e.combo for e in ranked] == [0, 1]
    state = Shortlist(combos=combos, tables=validation, pool=keys, ranked=ranked)
    out = stages.Playoff.of(cfg.search).run(state, budget)
    assert out.samples["playoff"] == 2000 and [e.combo for e in out.ranked] == [1, 0]
    # Pooled counts: what the winner's ladder is read from.
    assert int(out.tables[0].num[0]) == 1200 and int(out.tables[1].num[0]) == 1140
    # On pooled counts alone pair 0 would still lead: the order is the playoff's.
    assert out.ranked[1].candidate.projected > out.ranked[0].candidate.projected
    # ln(760/400) − ln(700/400) = 0.082 is 1.08 standard errors (0.076): a call made.
    assert out.runners_up == ()
    # At 740 against 760 (0.027 apart) the playoff cannot tell: pair 0 goes on too.
    playoff[0] = table(740, 400, 2000)
    out = stages.Playoff.of(cfg.search).run(state, budget)
    assert [e.combo for e in out.ranked] == [1, 0]
    assert [e.combo for e in out.runners_up] == [0]
    # With the tie rule off (playoff_tie_z = −inf) no group is ever too close to call.
    off = dataclasses.replace(cfg, search=SearchConfig(playoff_tie_z=-math.inf))
    assert stages.Playoff.of(off.search).run(state, budget).runners_up == ()
