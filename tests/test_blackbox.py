"""Black-box ε lower bound (dpaudit.auditors.blackbox.auditor and its building blocks).

Statistical assertions use fixed seeds; tolerances are stated beside each
(in standard errors of the estimate, or from the Clopper–Pearson bound itself).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pytest

from dpaudit import progress
from dpaudit.auditors.blackbox.auditor import AuditConfig, audit, projected_bound
from dpaudit.auditors.blackbox.config import SearchConfig
from dpaudit.auditors.blackbox.counting import CountUnit, run_count_unit
from dpaudit.auditors.blackbox.final import ThresholdSet, VectorDraw
from dpaudit.auditors.blackbox.pairs import InputPair
from dpaudit.auditors.blackbox.scores import (
    LikelihoodRatioScore,
    candidate_thresholds,
    compress_rows,
    count_at_thresholds,
    dpsniper_threshold,
    weighted_sums_at_thresholds,
)
from dpaudit.auditors.core.counting import EventUnit, UnitGenerators, run_event_unit
from dpaudit.auditors.core.statistics import clopper_pearson_lower, clopper_pearson_upper
from dpaudit.claims import Definition, InputDomain, PrivacyClaim
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.errors import InvalidArgumentError, MechanismError
from dpaudit.mechanisms import Mechanism, make_mechanism
from dpaudit.serialization import dumps, to_jsonable

ONE = ExecutionConfig(workers=1)
TWO = ExecutionConfig(workers=2)


@pytest.fixture(autouse=True)
def _quiet() -> Any:
    progress.ENABLED = False
    yield
    progress.ENABLED = True


def _without_timing(result: Any) -> dict[str, Any]:
    data = to_jsonable(result)
    data.pop("timing")
    return data


# ------------------------------------------------------------ building blocks
def test_count_at_thresholds_matches_brute_force_with_ties_inf_and_weights() -> None:
    rng = np.random.default_rng(0)
    s = np.round(rng.normal(size=5000), 1).astype(np.float32)
    s[:7], s[7:11] = np.inf, -np.inf
    t = np.unique(np.r_[np.round(rng.normal(size=40), 1), np.inf, -np.inf].astype(np.float32))
    g, e = count_at_thresholds(s, t)
    assert g.tolist() == [int((s > v).sum()) for v in t]
    assert e.tolist() == [int((s == v).sum()) for v in t]
    w = rng.integers(1, 9, size=len(s))
    g, e = count_at_thresholds(s, t, w)
    assert g.tolist() == [int(w[s > v].sum()) for v in t]
    assert e.tolist() == [int(w[s == v].sum()) for v in t]


def test_weighted_sums_match_brute_force_and_estimate_the_other_inputs_probability() -> None:
    rng = np.random.default_rng(4)
    s = np.round(rng.normal(size=3000), 2).astype(np.float32)
    t = np.unique(np.round(rng.normal(size=30), 2).astype(np.float32))
    wg, we, wt = weighted_sums_at_thresholds(s, t, +1)
    w = np.exp(-s.astype(np.float64))
    np.testing.assert_allclose(wg, [w[s > v].sum() for v in t], rtol=1e-12)
    np.testing.assert_allclose(we, [w[s == v].sum() for v in t], rtol=1e-12, atol=1e-12)
    assert wt == pytest.approx(w.sum(), rel=1e-12)
    # Change of measure: for y ~ M(0) and the LR score of (0, 1), E[e^{-s}·1{s ≥ t}] is
    # Pr[M(1) ∈ {s ≥ t}].  Laplace ε = 1: {s ≥ 1} = {y ≤ 0} has Pr[M(1) ≤ 0] = e^{-1}/2.
    mech = make_mechanism("laplace", epsilon=1.0)
    score = LikelihoodRatioScore(mech, (0.0,), (1.0,))
    sc = score(mech.sample(np.array([0.0]), 200_000, np.random.default_rng(5)))
    thr = np.array([1.0], dtype=np.float32)
    wg, we, _ = weighted_sums_at_thresholds(sc, thr, +1)
    estimate = (wg[0] + we[0]) / len(sc)
    # On {y ≤ 0} the weight is the constant e^{-1}: the estimate is e^{-1}·(hits/n), whose
    # standard error is e^{-1}·sqrt(1/4n); 5 standard errors.
    assert abs(estimate - 0.5 * math.exp(-1)) <= 5 * math.exp(-1) * math.sqrt(0.25 / len(sc))


def test_dpsniper_threshold_is_the_rank_floor_cn_value_with_exact_expected_mass() -> None:
    rng = np.random.default_rng(1)
    n, c = 20_000, 0.01
    scores = rng.integers(0, 1001, size=n).astype(np.float32)
    levels = np.arange(1001, dtype=np.float32)
    g, e = count_at_thresholds(scores, levels)
    j, q = dpsniper_threshold(g, e, n, c)
    assert levels[j] == np.sort(scores)[::-1][math.floor(c * n)]
    assert 0.0 <= q <= 1.0
    assert g[j] + q * e[j] == pytest.approx(c * n, abs=1e-9)


def test_candidate_thresholds_all_levels_when_discrete_else_tail_quantiles() -> None:
    few = [np.array([0, 1, 1, 2], np.float32), np.array([2, 3], np.float32)]
    assert candidate_thresholds(few).tolist() == [0, 1, 2, 3]
    rng = np.random.default_rng(2)
    many = [rng.normal(size=10_000).astype(np.float32) for _ in range(2)]
    thr = candidate_thresholds(many)
    assert np.all(np.diff(thr) > 0) and len(thr) <= 4 * 40 + 2
    assert thr[0] == min(m.min() for m in many) and thr[-1] == max(m.max() for m in many)


def test_compress_rows_equals_numpy_unique() -> None:
    rng = np.random.default_rng(3)
    rows = (rng.random((5000, 11)) < 0.2).astype(np.uint8)
    data = compress_rows(rows)
    uniq, counts = np.unique(rows, axis=0, return_counts=True)
    assert np.array_equal(data.rows, uniq) and np.array_equal(data.counts, counts)


def test_projected_bound_prefers_larger_counts_at_equal_ratio() -> None:
    # Same ratio e^1 at two masses: the larger mass is better estimated, so projects higher.
    k_num = np.array([2718, 27])
    k_den = np.array([1000, 10])
    n = np.array([100_000, 100_000])
    proj = projected_bound(k_num, n, k_den, n, 1_000_000, 0.025)
    assert proj[0] > proj[1]
    assert proj[0] < 1.0  # a projection of a bound never exceeds the true ratio here


def test_randomised_ties_are_drawn_from_the_unit_rng() -> None:
    mech = make_mechanism("randomized-response", epsilon=1.0)
    score = LikelihoodRatioScore(mech, (0.0,), (1.0,))
    draw = VectorDraw(mech)

    def hits(q: float, seed: int) -> int:
        # score = ±ε: the outputs of one value tie at the threshold 1.0
        event = ThresholdSet(score, np.float32(1.0), True, q)
        unit = EventUnit(draw, (0.0,), (event,), 100_000, (9, 0, 0), UnitGenerators(seed))
        return int(run_event_unit(unit)[0])

    above, at_or_above, kept = hits(0.0, 7), hits(1.0, 7), hits(0.3, 7) - hits(0.0, 7)
    assert hits(0.3, 7) - above == kept  # same seed, same coins
    ties = at_or_above - above
    assert ties > 50_000
    # Binomial(ties, 0.3): within 5 standard errors.
    assert abs(kept - 0.3 * ties) <= 5 * math.sqrt(ties * 0.21)
    assert hits(0.3, 8) - hits(0.0, 8) != kept


def test_sets_of_one_score_in_one_unit_count_the_same_outputs() -> None:
    # The final stage gives one score for several sets (the winner's ladder): every slot
    # must count the unit's one sample, exactly as a unit with that set alone would.
    mech = make_mechanism("laplace", epsilon=1.0)
    score = LikelihoodRatioScore(mech, (0.0,), (1.0,))
    thr = [np.array([t], dtype=np.float32) for t in (-0.5, 0.0, 0.5)]
    both = run_count_unit(CountUnit(mech, (0.0,), (score,) * 3, tuple(thr), 50_000, 3, (9, 0, 0)))
    for i, t in enumerate(thr):
        alone = run_count_unit(CountUnit(mech, (0.0,), (score,), (t,), 50_000, 3, (9, 0, 0)))
        assert (int(both.greater[i][0]), int(both.equal[i][0])) == (
            int(alone.greater[0][0]),
            int(alone.equal[0][0]),
        )
    assert both.greater[0][0] >= both.greater[1][0] >= both.greater[2][0]


# ---------------------------------------------------------- closed-form check
def _laplace_set_probability(
    center: float, a: float, tail: str, t: float, q: float, eps: float
) -> float:
    """Pr[M(center) ∈ S] for Laplace(scale 1/ε) on the pair {0, 1} and the LR score of (a, b).

    With (a, b) = (0, 1) the score is s(y) = ε·clip(1 − 2y, −1, 1): ε on y ≤ 0, −ε on
    y ≥ 1 (atoms of mass), linear in between; with (a, b) = (1, 0) it is −s.
    """

    def cdf(y: float) -> float:  # Laplace(center, 1/ε)
        z = (y - center) * eps
        return 0.5 * math.exp(z) if z < 0 else 1 - 0.5 * math.exp(-z)

    u = t if a == 0.0 else -t  # work with s01 = ε·clip(1 − 2y, −1, 1)
    at_top, at_bottom = math.isclose(u, eps, rel_tol=1e-6), math.isclose(u, -eps, rel_tol=1e-6)
    if at_top:  # s01 > ε: never; s01 = ε: y ≤ 0
        above, equal = 0.0, cdf(0.0)
    elif at_bottom:  # s01 > −ε: y < 1; s01 = −ε: y ≥ 1
        above, equal = cdf(1.0), 1 - cdf(1.0)
    else:
        above, equal = cdf((1 - u / eps) / 2), 0.0
    below = 1.0 - above - equal
    if a != 0.0:  # s = −s01: "s > t" is "s01 < −t"
        above, below = below, above
    return (above if tail == "upper" else below) + q * equal


def test_laplace_witness_matches_closed_form() -> None:
    eps = 0.5
    mech = make_mechanism("laplace", epsilon=eps)
    cfg = AuditConfig(
        samples=20_000,
        final_samples=400_000,
        pairs=(InputPair((0.0,), (1.0,), "given"),),
        use_patterns=False,
        seed=11,
    )
    r = audit(mech, cfg, ONE)
    w = r.witness
    assert w is not None and not r.violation
    att = w.attack
    for est, center in ((w.p1, w.x[0]), (w.p2, w.x_prime[0])):
        p = _laplace_set_probability(
            center, att.score_inputs[0][0], att.tail, att.threshold, att.tie_probability, eps
        )
        se = math.sqrt(p * (1 - p) / est.samples)
        assert abs(est.estimate - p) <= 5 * se  # 5 standard errors
    # The bound is exactly ln(CP lower) − ln(CP upper), each at error α/(2K) for the
    # K sets re-estimated on the final samples.
    half = (1 - cfg.confidence) / (2 * r.detail.certified_proposals)
    lo = clopper_pearson_lower(w.p1.hits, w.p1.samples, half)
    hi = clopper_pearson_upper(w.p2.hits, w.p2.samples, half)
    assert w.epsilon_lower_bound == pytest.approx(math.log(lo) - math.log(hi), rel=1e-12)
    assert r.epsilon_lower_bound == max(0.0, w.epsilon_lower_bound)
    # Tight: the best sets have p1 ≈ 1/2, so the bound is within about 2 × 1.96 relative
    # standard errors (≈ 0.01 each at 4·10^5 samples) of ε, plus a small threshold loss.
    assert eps - 0.04 < r.epsilon_lower_bound <= eps


def test_closed_form_helper_on_the_atoms() -> None:
    eps = 0.5
    # {s ≥ ε} for (a, b) = (0, 1) is {y ≤ 0}: 1/2 under M(0), e^{−ε}/2 under M(1).
    assert _laplace_set_probability(0.0, 0.0, "upper", eps, 1.0, eps) == pytest.approx(0.5)
    assert _laplace_set_probability(1.0, 0.0, "upper", eps, 1.0, eps) == pytest.approx(
        0.5 * math.exp(-eps)
    )
    # The same set seen from (a, b) = (1, 0): {s ≤ −ε}.
    assert _laplace_set_probability(0.0, 1.0, "lower", -eps, 1.0, eps) == pytest.approx(0.5)


# ---------------------------------------------------------- reproducibility
@pytest.mark.parametrize(  # two full audits each; OME's stays in the quick subset
    ("name", "params"),
    [pytest.param("laplace", {"dim": 2}, marks=pytest.mark.slow), ("ome", {"lambda": 10.0})],
)
def test_bit_identical_for_one_and_two_workers(name: str, params: dict[str, Any]) -> None:
    mech = make_mechanism(name, epsilon=1.0, **params)
    cfg = AuditConfig(samples=30_000, final_samples=60_000, seed=5)
    a, b = audit(mech, cfg, ONE), audit(mech, cfg, TWO)
    assert _without_timing(a) == _without_timing(b)


def test_different_seeds_give_different_samples() -> None:
    mech = make_mechanism("laplace", epsilon=1.0)
    r1 = audit(mech, AuditConfig(samples=5_000, final_samples=20_000, seed=1), ONE)
    r2 = audit(mech, AuditConfig(samples=5_000, final_samples=20_000, seed=2), ONE)
    assert r1.witness is not None and r2.witness is not None
    assert r1.witness.p1.hits != r2.witness.p1.hits


# ------------------------------------------------------------- false alarms
CORRECT = [
    ("laplace", {}),
    ("gaussian", {}),
    ("randomized-response", {}),
    ("sue", {}),
    ("oue", {}),
    ("adept-l1", {}),
    ("adept-fixed-scale", {}),
]


#: Confidence of the CI false-alarm check.  For a correct mechanism whose best set is tight
#: (ratio exactly e^ε, as for Laplace, RR, SUE/OUE), a false alarm needs both Clopper–Pearson
#: bounds to miss together: about 3·10⁻⁴ per audit at 0.99 (≈ 4·10⁻³ at 0.95), so the 56 audits
#: below (7 mechanisms × 8 seeds) at 0.99 raise none with probability ≈ 98%.  The
#: false-alarm *rate* at α = 0.05 is measured by benchmarks/audit_false_alarms.py (200 audits
#: per mechanism).
FALSE_ALARM_CONFIDENCE = 0.99


@pytest.mark.slow
@pytest.mark.parametrize(("name", "params"), CORRECT)
def test_correct_mechanisms_are_not_flagged_across_8_seeds(
    name: str, params: dict[str, Any]
) -> None:
    mech = make_mechanism(name, epsilon=1.0, **params)
    bounds = []
    for seed in range(8):
        cfg = AuditConfig(
            samples=4_000, final_samples=20_000, confidence=FALSE_ALARM_CONFIDENCE, seed=seed
        )
        r = audit(mech, cfg, ONE)
        assert not r.violation, (seed, r.verdict)
        assert r.verdict_text.startswith("no violation found")
        bounds.append(r.epsilon_lower_bound)
    # Not vacuous: the audit finds most of the true ε (1 for the pure mechanisms).
    if name != "gaussian":
        assert np.median(bounds) > 0.6


# --------------------------------------------------------------------- power
@pytest.mark.parametrize(
    ("name", "params", "classifier", "at_least"),
    [
        pytest.param(  # true ε = √8 ≈ 2.83 (EMNLP 2021, App. B); 8-dim outputs: slow
            "adept", {"dim": 8}, "auto", 1.5, marks=pytest.mark.slow
        ),
        ("identity", {}, "auto", 8.0),  # p2 = 0: limited only by the sample size
        ("dptext", {}, "logistic", 8.0),  # support difference: outputs ≥ x
        ("dptext", {"nan_policy": "keep"}, "logistic", 5.0),  # NaN outputs: indicator columns
        ("ome", {"lambda": 10.0}, "auto", 5.0),
        ("ome", {"lambda": 100.0}, "auto", 8.0),  # beyond DP-Sniper's ln(1/0.01) = 4.6
    ],
)
def test_flawed_mechanisms_are_flagged(
    name: str, params: dict[str, Any], classifier: str, at_least: float
) -> None:
    mech = make_mechanism(name, epsilon=1.0, **params)
    cfg = AuditConfig(samples=50_000, final_samples=500_000, classifier=classifier, seed=3)
    r = audit(mech, cfg, ONE)
    assert r.violation, r.verdict
    assert r.verdict_text.startswith("violation: ε ≥")
    assert r.epsilon_lower_bound >= at_least
    truth = mech.truth()
    if truth is not None:  # a valid lower bound never exceeds the exact ε
        assert r.epsilon_lower_bound <= truth.true_epsilon + 1e-9


def test_zero_hits_bound_is_limited_only_by_the_sample_size() -> None:
    mech = make_mechanism("identity", epsilon=1.0)
    n = 200_000
    cfg = AuditConfig(samples=10_000, final_samples=n, seed=0)
    r = audit(mech, cfg, ONE)
    w = r.witness
    assert w is not None and w.p2.hits == 0 and w.p1.hits == n
    half = (1 - cfg.confidence) / 2
    # k = 0: p2_upper = 1 − (α/2)^(1/n); k = n: p1_lower = (α/2)^(1/n).
    assert w.p2.bound == pytest.approx(1 - half ** (1 / n), rel=1e-9)
    expected = math.log(half ** (1 / n)) - math.log(1 - half ** (1 / n))
    assert r.epsilon_lower_bound == pytest.approx(expected, rel=1e-9)
    assert math.isinf(w.epsilon_estimate)
    assert any("sample size" in note for note in r.notes)


def test_delta_enters_the_bound_for_approximate_claims() -> None:
    mech = make_mechanism("gaussian", epsilon=1.0)
    assert mech.claim.definition is Definition.APPROXIMATE
    r = audit(mech, AuditConfig(samples=20_000, final_samples=100_000, seed=4), ONE)
    w = r.witness
    assert w is not None
    delta = mech.claim.delta
    assert w.epsilon_lower_bound == pytest.approx(
        math.log(w.p1.bound - delta) - math.log(w.p2.bound), rel=1e-12
    )


def test_bonferroni_over_final_candidates() -> None:
    mech = make_mechanism("laplace", epsilon=1.0)
    cfg = AuditConfig(samples=10_000, final_samples=20_000, best_candidates=3, seed=0)
    r = audit(mech, cfg, ONE)
    # The 3 best candidates (the request), plus any runners-up of the playoff (at most
    # playoff_groups − 1), the hedge and rungs of the winner's ladder: the result's K.
    search = SearchConfig()
    most = 3 + search.playoff_groups - 1 + int(search.playoff_hedge) + search.ladder_rungs
    assert 3 <= r.detail.certified_proposals <= most
    assert r.witness is not None
    assert r.witness.p1.bound_error == pytest.approx(
        (1 - cfg.confidence) / (2 * r.detail.certified_proposals)
    )
    assert "Bonferroni" in r.confidence_statement


# ------------------------------------------------------------- DP-Sniper mode
@pytest.mark.parametrize(("lam", "low", "high"), [(10.0, 2.6, 3.0), (100.0, 4.45, 4.63)])
def test_dpsniper_mode_reproduces_hoho_numbers(lam: float, low: float, high: float) -> None:
    # HoHo (Salem & Zanella-Béguelin 2021) report DP-Sniper at 2.8 (λ = 10) and 4.6 (λ = 100)
    # for ε = 1 on [-10, 10].  With 10^6 final samples the bound sits about 0.03 (3 relative
    # standard errors of p2 ≈ c) below the estimate; the ceiling is ln(1/c) = 4.605.
    mech = make_mechanism("ome", epsilon=1.0, **{"lambda": lam})
    cfg = AuditConfig(
        samples=200_000, final_samples=1_000_000, mode="dpsniper", confidence=0.9, seed=0
    )
    r = audit(mech, cfg, ONE)
    assert low <= r.epsilon_lower_bound <= high, r.verdict
    w = r.witness
    assert w is not None and w.attack.family == "logistic" and w.attack.target_mass == 0.01
    # Randomised ties make Pr[M(x') ∈ S] = c on the threshold sample; on fresh samples the
    # estimate is within 5 standard errors of c.
    se = math.sqrt(0.01 * 0.99 / w.p2.samples)
    assert abs(w.p2.estimate - 0.01) <= 5 * se + 0.002  # + the threshold sample's own error


def test_dpaudit_mode_has_no_dpsniper_ceiling_on_ome() -> None:
    mech = make_mechanism("ome", epsilon=1.0, **{"lambda": 100.0})
    r = audit(mech, AuditConfig(samples=50_000, final_samples=500_000, seed=0), ONE)
    assert r.epsilon_lower_bound > math.log(1 / 0.01) + 3


# ---------------------------------------------------------------- bad input
@dataclass(frozen=True)
class FaultyMechanism(Mechanism):
    """Laplace-like mechanism that misbehaves in a chosen way (not registered)."""

    name: ClassVar[str] = "faulty"
    fault: str = "nan"

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim(Definition.PURE, self.epsilon, InputDomain((1,), 0.0, 1.0))

    @property
    def output_shape(self) -> tuple[int, ...]:
        return (1,)

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        out = x + rng.laplace(size=(n, 1))
        if self.fault == "raise":
            raise RuntimeError("boom")
        if self.fault == "nan":
            out[n // 2] = np.nan
        if self.fault == "inf":
            out[0] = np.inf
        if self.fault == "dtype":
            return out.astype(str)
        if self.fault == "shape":
            return out[:, 0]
        return out


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ("raise", "raised RuntimeError"),
        ("nan", "NaN"),
        ("inf", "inf"),
        ("dtype", "dtype"),
        ("shape", "shape"),
    ],
)
def test_misbehaving_mechanism_stops_the_audit(fault: str, message: str) -> None:
    mech = FaultyMechanism(epsilon=1.0, fault=fault)
    with pytest.raises(MechanismError) as info:
        audit(mech, AuditConfig(samples=1000, final_samples=1000), ONE)
    text = str(info.value)
    assert "faulty" in text and message in text
    assert "input" in text


def test_likelihood_ratio_needs_a_log_density() -> None:
    mech = make_mechanism("dptext", epsilon=1.0)
    with pytest.raises(InvalidArgumentError, match="classifier"):
        audit(mech, AuditConfig(classifier="likelihood-ratio"), ONE)
    with pytest.raises(InvalidArgumentError, match="dpsniper"):
        audit(
            make_mechanism("laplace", epsilon=1.0),
            AuditConfig(classifier="likelihood-ratio", mode="dpsniper"),
            ONE,
        )


@pytest.mark.parametrize(
    "kwargs",
    [
        {"samples": 0},
        {"final_samples": -1},
        {"confidence": 1.0},
        {"confidence": 0.0},
        {"mode": "fast"},
        {"classifier": "svm"},
        {"target_mass": 1.5},
        {"best_candidates": 0},
        {"search": {"screen_pairs": 4}},
        {"use_patterns": False},
    ],
)
def test_config_rejects_bad_values(kwargs: dict[str, Any]) -> None:
    with pytest.raises(InvalidArgumentError):
        AuditConfig(**kwargs)


def test_result_serialises_to_strict_json() -> None:
    r = audit(
        make_mechanism("identity", epsilon=1.0),
        AuditConfig(samples=2_000, final_samples=5_000, seed=0),
        ONE,
    )
    data = json.loads(dumps(r))
    for key in ("claimed_epsilon", "epsilon_lower_bound", "confidence", "violation", "witness"):
        assert key in data
    assert data["witness"]["attack"]["set"]
    assert data["witness"]["p2"]["hits"] == 0
