"""The profile auditor: closed forms, joint coverage, no false alarms, and real violations found."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

import dpaudit.auditors.core.certify as certify_module
from dpaudit.analysis.privacy_conversions import gdp_profile, laplace_profile
from dpaudit.auditors.blackbox.scores import LikelihoodRatioScore
from dpaudit.auditors.core.counting import EventUnit, UnitGenerators, run_event_unit
from dpaudit.auditors.core.statistics import clopper_pearson_interval
from dpaudit.auditors.profile import ProfileAuditConfig, audit_profile
from dpaudit.auditors.profile.counting import ScoreAbove, ScoredDraw, split_samples
from dpaudit.claims import (
    ApproxDP,
    GaussianDP,
    PrivacyProfile,
    PureDP,
    RenyiDP,
    ZeroConcentratedDP,
)
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.errors import InvalidArgumentError, InvalidTypeError
from dpaudit.mechanisms.gaussian import GaussianMechanism
from dpaudit.mechanisms.laplace import LaplaceMechanism
from dpaudit.serialization import dumps
from dpaudit.verdicts import Verdict

ONE = ExecutionConfig(workers=1)


def minus_output(out: np.ndarray) -> np.ndarray:
    """``−y``: high where ``y`` is small, i.e. where the output looks like ``M(0)`` vs ``M(1)``."""
    return -out[:, 0]


def _config(sel: int, fin: int, seed: int = 0, **kw) -> ProfileAuditConfig:
    return ProfileAuditConfig(
        selection_samples=sel, final_samples=fin, seed=seed, execution=ONE, **kw
    )


# ------------------------------------------------------------------ closed forms
@pytest.mark.parametrize("kind", ["gaussian", "laplace"])
def test_counted_sets_follow_the_closed_form_tradeoff_curve(kind: str) -> None:
    # Reject M(1) when −y > t: FPR = Pr[M(1) ∈ S], FNR = 1 − Pr[M(0) ∈ S], both in closed form.
    if kind == "gaussian":
        mech = GaussianMechanism(epsilon=1.0, delta=1e-5)
        dist = stats.norm(scale=mech.sigma)
    else:
        mech = LaplaceMechanism(epsilon=1.0)
        dist = stats.laplace(scale=mech.scale)
    thr = np.linspace(-3, 2, 11)
    n = 200_000
    above = tuple(ScoreAbove(0, t, True) for t in thr)
    draw, seeds = ScoredDraw(mech, minus_output), UnitGenerators(7)
    g0 = run_event_unit(EventUnit(draw, (0.0,), above, n, (1, 0, 0), seeds, 1 << 15))
    g1 = run_event_unit(EventUnit(draw, (1.0,), above, n, (1, 1, 0), seeds, 1 << 15))
    truth0, truth1 = dist.cdf(-thr), dist.cdf(-thr - 1.0)  # Pr[y < −t] under x = 0, 1
    # Exact two-sided binomial intervals, Bonferroni over 22 counts at 1e-6 overall.
    for g, p in ((g0, truth0), (g1, truth1)):
        lo, hi = clopper_pearson_interval(g, n, 1 - 1e-6 / 22)
        assert np.all((lo <= p) & (p <= hi))


def test_gaussian_audit_is_sound_and_tight_against_the_exact_profile() -> None:
    mech = GaussianMechanism(epsilon=1.0, delta=1e-5)
    mu = 1.0 / mech.sigma
    r = audit_profile(mech, 0.0, 1.0, minus_output, GaussianDP(mu), _config(100_000, 1_000_000))
    eps = np.array([p.epsilon for p in r.detail.profile])
    lcb = np.array([p.delta_lower_bound for p in r.detail.profile])
    exact = gdp_profile(eps, mu)
    assert np.all(lcb <= exact)
    assert r.detail.mu_lower_bound <= mu
    # Power: at 10⁶ samples Φ⁻¹(p̂1) − Φ⁻¹(p̂2) has standard error ≈ √(π/n) ≈ 0.002, so
    # with the Bonferroni z ≈ 3.3 per side μ is pinned to ≈ 0.012; δ(ε) to a few 10⁻³.
    assert r.detail.mu_lower_bound >= mu - 0.02
    assert np.all(lcb[eps <= 2] >= exact[eps <= 2] - 0.01)
    assert r.verdict is not Verdict.VIOLATION


# --------------------------------------------------------------- joint coverage
def _coverage_failures(reps: int, alpha: float) -> tuple[int, int]:
    """Runs in which some certified bound is false: (any set bound, any profile/μ bound)."""
    mech = GaussianMechanism(epsilon=2.0, delta=1e-3)
    sigma = mech.sigma
    set_fail = claim_fail = 0
    for seed in range(reps):
        cfg = _config(
            2_000, 4_000, seed, confidence=1 - alpha, epsilons=tuple(np.linspace(0, 3, 13))
        )
        r = audit_profile(mech, 0.0, 1.0, minus_output, GaussianDP(1 / sigma), cfg)
        wrong = False
        for s in r.detail.certified:
            # {−y > t} = {y < −t}; its complement {y ≥ −t}; exact under N(0, σ²) and N(1, σ²).
            p0, p1 = stats.norm.cdf(-s.threshold, [0.0, 1.0], sigma)
            if not s.above:
                p0, p1 = 1 - p0, 1 - p1
            num, den = (p0, p1) if s.forward else (p1, p0)
            wrong |= s.p1_lower > num or s.p2_upper < den
        exact = gdp_profile(np.array([p.epsilon for p in r.detail.profile]), 1 / sigma)
        bad = any(p.delta_lower_bound > d for p, d in zip(r.detail.profile, exact, strict=True))
        bad |= r.detail.mu_lower_bound > 1 / sigma
        assert not bad or wrong  # a false profile bound needs a false set bound
        set_fail += wrong
        claim_fail += bad
    return set_fail, claim_fail


@pytest.mark.slow  # 300 audits; the study's power check below stays in the quick subset
def test_joint_coverage_of_all_bounds_holds_at_the_confidence() -> None:
    reps, alpha = 300, 0.2
    set_fail, claim_fail = _coverage_failures(reps, alpha)
    # Exact one-sided binomial test of "failure rate ≤ α" at level 1e-3.
    assert stats.binomtest(set_fail, reps, alpha, alternative="greater").pvalue > 1e-3
    assert claim_fail <= set_fail


def test_coverage_study_fails_without_the_bonferroni_split(monkeypatch) -> None:
    # Each bound at α/2 instead of α/(2K): the K statements are no longer jointly valid.
    monkeypatch.setattr(certify_module, "split_error", lambda alpha, statements: alpha / 2)
    reps, alpha = 300, 0.2
    set_fail, _ = _coverage_failures(reps, alpha)
    assert stats.binomtest(set_fail, reps, alpha, alternative="greater").pvalue < 1e-3


# ------------------------------------------------------------ no false alarms
@pytest.mark.parametrize("seed", range(4))
def test_correct_gaussian_is_not_flagged_under_any_form_of_its_claim(seed: int) -> None:
    mech = GaussianMechanism(epsilon=1.0, delta=1e-5)
    score = LikelihoodRatioScore(mech, (0.0,), (1.0,))
    mu = 1.0 / mech.sigma
    claims = [
        ApproxDP(1.0, 1e-5),
        GaussianDP(mu),
        ZeroConcentratedDP(mu * mu / 2),
        RenyiDP.from_function(lambda a: a * mu * mu / 2, (1.5, 2, 4, 8, 16)),
        PrivacyProfile(lambda e: mech.privacy_profile(e, 0.0, 1.0), "exact (Balle & Wang)"),
    ]
    for claim in claims:
        r = audit_profile(mech, 0.0, 1.0, score, claim, _config(50_000, 300_000, seed))
        assert r.verdict is not Verdict.VIOLATION, (claim.describe(), r.detail.findings)


@pytest.mark.parametrize("seed", range(4))
def test_correct_laplace_is_not_flagged(seed: int) -> None:
    mech = LaplaceMechanism(epsilon=1.0)
    score = LikelihoodRatioScore(mech, (0.0,), (1.0,))
    exact = PrivacyProfile(lambda e: laplace_profile(e, 1.0), "Laplace, exact")
    for claim in (PureDP(1.0), exact):
        r = audit_profile(mech, 0.0, 1.0, score, claim, _config(50_000, 300_000, seed))
        assert r.verdict is not Verdict.VIOLATION, r.detail.findings
        lcb = np.array([p.delta_lower_bound for p in r.detail.profile])
        assert np.all(lcb <= laplace_profile([p.epsilon for p in r.detail.profile], 1.0))


# ------------------------------------------------------------ real violations
@pytest.mark.parametrize("seed", range(3))
def test_classic_calibration_at_eps_10_is_flagged_where_delta_10_is_0041(seed: int) -> None:
    # σ = √(2 ln 125)/10: exact δ(10) = 0.0406 > 0.01.  The best set at ε = 10 has
    # Pr[M(1) ∈ S] ≈ 1e-6, multiplied by e^10 ≈ 22026 in the bound: 10⁶ selection and
    # 10⁷ final samples per input pin it well enough (δ_lcb(10) ≈ 0.014); 10⁶ final do not.
    classic = GaussianMechanism(epsilon=10.0, delta=0.01, calibration="classic")
    analytic = GaussianMechanism(epsilon=10.0, delta=0.01)
    grid = tuple(np.round(np.arange(9.5, 11.01, 0.1), 10))
    cfg = _config(1_000_000, 10_000_000, seed, epsilons=grid)
    r = audit_profile(classic, 0.0, 1.0, minus_output, ApproxDP(10.0, 0.01), cfg)
    assert r.verdict is Verdict.VIOLATION
    at10 = next(p for p in r.detail.profile if p.epsilon == 10.0)
    assert 0.01 < at10.delta_lower_bound <= 0.0406
    ok = audit_profile(analytic, 0.0, 1.0, minus_output, ApproxDP(10.0, 0.01), cfg)
    assert ok.verdict is not Verdict.VIOLATION


def test_a_profile_broken_only_for_small_eps_is_flagged_there() -> None:
    # Laplace with ε₀ = 1 claimed 0.8-GDP: its exact δ(ε) = 1 − e^{(ε−1)/2} exceeds the
    # 0.8-GDP profile by ≈ 0.08 for ε below ≈ 0.84 and is below it beyond.
    mech = LaplaceMechanism(epsilon=1.0)
    score = LikelihoodRatioScore(mech, (0.0,), (1.0,))
    grid = np.round(np.arange(0.0, 3.01, 0.1), 10)
    excess = laplace_profile(grid, 1.0) - gdp_profile(grid, 0.8)
    r = audit_profile(
        mech, 0.0, 1.0, score, GaussianDP(0.8), _config(100_000, 1_000_000, 3, epsilons=tuple(grid))
    )
    assert r.verdict is Verdict.VIOLATION
    flagged = np.array([p.verdict is Verdict.VIOLATION for p in r.detail.profile])
    assert flagged.any()
    assert np.all(excess[flagged] > 0)  # only where the truth really exceeds the claim
    assert flagged[grid <= 0.5].all()  # and all of the clear part of that range
    assert 0.0 <= r.detail.worst_epsilon <= 0.8


# ------------------------------------------------------------- results, inputs
def test_result_serialises_and_states_what_it_could_detect() -> None:
    mech = GaussianMechanism(epsilon=1.0, delta=1e-5)
    r = audit_profile(mech, 0.0, 1.0, minus_output, ZeroConcentratedDP(2.0), _config(5_000, 20_000))
    data = json.loads(dumps(r))
    assert data["verdict"] == r.verdict.value
    assert data["kind"] == "profile" and data["claim"] == r.claim
    assert data["detail"]["claim"] == {"kind": "zcdp", "rho": 2.0, "conversion": "cks"}
    assert len(data["detail"]["profile"]) == len(r.detail.profile) and data["detail"]["certified"]
    text = " ".join(r.detail.findings)
    assert "could not have been certified" in text and "never certify" in text
    # Beyond ε = ln n no set of n samples can show anything: those points are inconclusive.
    far = [p for p in r.detail.profile if p.epsilon > math.log(20_000)]
    assert far and all(p.verdict is Verdict.INCONCLUSIVE for p in far)
    assert r.detail.statements == len(r.detail.certified)
    assert r.detail.error_per_bound == pytest.approx(0.05 / (2 * r.detail.statements))


def test_split_of_samples_is_fixed_by_the_sample_count() -> None:
    assert split_samples(10) == [10]
    assert sum(split_samples(3_000_001)) == 3_000_001


@pytest.mark.parametrize(
    ("make", "error", "argument"),
    [
        (lambda: _config(10, 1000), InvalidArgumentError, "selection_samples"),
        (lambda: _config(1000, 1000, confidence=1.0), InvalidArgumentError, "confidence"),
        (lambda: _config(1000, 1000, epsilons=(-1.0,)), InvalidArgumentError, "epsilons"),
        (lambda: _config(1000, 1000, orders=(1.0,)), InvalidArgumentError, "orders"),
        (
            lambda: audit_profile(
                GaussianMechanism(epsilon=1.0, delta=1e-5), 0.0, 1.0, minus_output, 1.0
            ),
            InvalidTypeError,
            "claim",
        ),
        (
            lambda: audit_profile(
                GaussianMechanism(epsilon=1.0, delta=1e-5), 0.0, 2.0, minus_output, PureDP(1.0)
            ),
            InvalidArgumentError,
            "x_prime",
        ),
    ],
)
def test_bad_input_names_the_argument(make, error, argument: str) -> None:
    with pytest.raises(error, match=argument):
        make()


def test_result_is_identical_with_one_or_two_workers() -> None:
    # Units are seeded by (seed, stage, input, unit), so the split over processes is invisible.
    mech = GaussianMechanism(epsilon=1.0, delta=1e-5)
    score = LikelihoodRatioScore(mech, (0.0,), (1.0,))
    runs = [
        audit_profile(
            mech,
            0.0,
            1.0,
            score,
            GaussianDP(1 / mech.sigma),
            ProfileAuditConfig(
                selection_samples=1_000,
                final_samples=2_200_000,  # three work units per input
                execution=ExecutionConfig(workers=w),
            ),
        )
        for w in (1, 2)
    ]
    # Everything but the wall time is identical.
    assert dumps(replace(runs[0], timing={})) == dumps(replace(runs[1], timing={}))
