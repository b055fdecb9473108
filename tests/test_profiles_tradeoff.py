"""The trade-off band: exact against closed forms, covering at its confidence, deciding claims."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpaudit.analysis.privacy_conversions import gaussian_tradeoff
from dpaudit.auditors.blackbox.scores import LikelihoodRatioScore
from dpaudit.auditors.core.dkw import band_from_scores, dkw_width
from dpaudit.auditors.profile.tradeoff import tradeoff_band
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.gaussian import GaussianMechanism


def _outside(band, mu: float) -> bool:
    """Whether some threshold's true (α, β) lies outside the band (scores y ~ N(μ,1) vs N(0,1))."""
    t = np.asarray(band.thresholds)
    alpha, beta = stats.norm.sf(t), stats.norm.cdf(t - mu)  # x' ↦ N(0, 1), x ↦ N(μ, 1)
    w = band.width
    return bool(
        np.any(np.abs(alpha - band.type_one) > w) or np.any(np.abs(beta - band.type_two) > w)
    )


def test_dkw_width_is_massarts() -> None:
    assert dkw_width(1000, 0.05) == pytest.approx(np.sqrt(np.log(40.0) / 2000.0))
    with pytest.raises(InvalidArgumentError, match="error"):
        dkw_width(10, 1.0)


def test_band_covers_every_threshold_at_its_confidence() -> None:
    # 300 bands of n = 400 at confidence 0.8: "some threshold outside" must happen in at most
    # 20 % of runs (exact one-sided binomial test at level 1e-3).  DKW–Massart is
    # conservative, so far fewer runs fail in practice.
    rng = np.random.default_rng(0)
    mu, reps = 1.0, 300
    fails = 0
    for _ in range(reps):
        band = band_from_scores(rng.normal(mu, 1, 400), rng.normal(0, 1, 400), 0.8, points=256)
        fails += _outside(band, mu)
    assert stats.binomtest(fails, reps, 0.2, alternative="greater").pvalue > 1e-3


def test_band_is_too_narrow_without_the_union_bound_and_dkw() -> None:
    # The same study with a pointwise normal half-width (no uniformity over thresholds)
    # fails far more often than 20 %: the test above can fail.
    rng = np.random.default_rng(1)
    mu, reps, n = 1.0, 200, 400
    fails = 0
    for _ in range(reps):
        band = band_from_scores(rng.normal(mu, 1, n), rng.normal(0, 1, n), 0.8, points=256)
        narrow = type(band)(*[getattr(band, f) for f in ("thresholds", "type_one", "type_two")],
                            1.2816 * 0.5 / np.sqrt(n), band.confidence, n)  # fmt: skip
        fails += _outside(narrow, mu)
    assert stats.binomtest(fails, reps, 0.2, alternative="greater").pvalue < 1e-3


def test_certified_curve_of_a_gaussian_lies_above_its_true_tradeoff() -> None:
    mech = GaussianMechanism(epsilon=1.0, delta=1e-5)
    mu = 1.0 / mech.sigma
    score = LikelihoodRatioScore(mech, (0.0,), (1.0,))
    band = tradeoff_band(
        mech, (0.0,), (1.0,), score, 200_000, seed=4, execution=ExecutionConfig(workers=1)
    )
    a, b = band.certified()
    assert np.all(b >= gaussian_tradeoff(a, mu) - 1e-12)  # the truth is never refuted
    assert band.claim_gap(lambda al: gaussian_tradeoff(al, mu)) <= 0
    # ... and a claim of half the μ is refuted (T_{μ/2} − T_μ ≈ 0.05 ≫ 2w ≈ 0.009).
    assert band.claim_gap(lambda al: gaussian_tradeoff(al, mu / 2)) > 0
    assert band.width == pytest.approx(dkw_width(200_000, 0.025))


def test_unequal_score_counts_are_refused() -> None:
    with pytest.raises(InvalidArgumentError, match="scores_x_prime"):
        band_from_scores(np.zeros(10), np.zeros(9), 0.9)


def test_whole_claims_figure_refutes_the_broken_gaussian_only() -> None:
    from dpaudit.reproduce import whole_claims
    from dpaudit.reproduce.common import SHOWS, FigureRun

    run = FigureRun(
        whole_claims.NAME, whole_claims.TITLE, whole_claims.PAPER, "tiny", 0,
        execution=ExecutionConfig(workers=1),
    )  # fmt: skip
    result = whole_claims.compute(run)
    good, bad = result.rows
    assert good["claim_gap"] <= 0 < bad["claim_gap"]
    assert good["mu_lower_bound"] <= good["true_mu"] and bad["mu_lower_bound"] > bad["claimed_mu"]
    assert bad["true_mu"] == pytest.approx(2 * bad["claimed_mu"])
    assert [f.status for f in result.findings] == [SHOWS, SHOWS]
