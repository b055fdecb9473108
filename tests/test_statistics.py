"""Clopper–Pearson bounds: closed forms at the edges, agreement with scipy's binomtest."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.auditors.core.statistics import (
    bonferroni,
    clopper_pearson_interval,
    clopper_pearson_lower,
    clopper_pearson_upper,
    log_ratio_lower_bound,
)
from dpaudit.errors import InvalidArgumentError


@pytest.mark.parametrize("n", [1, 7, 1000, 10**7])
def test_edges_are_exact(n: int) -> None:
    alpha = 0.05
    assert clopper_pearson_lower(0, n, alpha) == 0.0
    assert clopper_pearson_upper(n, n, alpha) == 1.0
    # Closed forms: Beta(1, n) and Beta(n, 1) quantiles.
    assert clopper_pearson_upper(0, n, alpha) == pytest.approx(1 - alpha ** (1 / n), rel=1e-12)
    assert clopper_pearson_lower(n, n, alpha) == pytest.approx(alpha ** (1 / n), rel=1e-12)


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (17, 1000), (500, 1000)])
def test_interval_matches_binomtest(k: int, n: int) -> None:
    lo, hi = clopper_pearson_interval(k, n, 0.9)
    ref = stats.binomtest(k, n).proportion_ci(confidence_level=0.9, method="exact")
    assert lo == pytest.approx(ref.low, abs=1e-12)
    assert hi == pytest.approx(ref.high, abs=1e-12)


def test_one_sided_matches_binomtest_alternatives() -> None:
    k, n = 42, 5000
    less = stats.binomtest(k, n, alternative="less").proportion_ci(0.99, method="exact")
    greater = stats.binomtest(k, n, alternative="greater").proportion_ci(0.99, method="exact")
    assert clopper_pearson_upper(k, n, 0.01) == pytest.approx(less.high, rel=1e-10)
    assert clopper_pearson_lower(k, n, 0.01) == pytest.approx(greater.low, rel=1e-10)


def test_vectorised_and_broadcast() -> None:
    k = np.array([0, 1, 5, 10])
    lo = clopper_pearson_lower(k, 10, 0.05)
    hi = clopper_pearson_upper(k, 10, 0.05)
    assert lo.shape == hi.shape == (4,)
    assert np.all(np.diff(lo) > 0) and np.all(np.diff(hi) > 0)
    assert np.all(lo <= k / 10) and np.all(hi >= k / 10)
    for i, ki in enumerate(k):
        assert lo[i] == clopper_pearson_lower(int(ki), 10, 0.05)
    grid = clopper_pearson_upper(np.array([[0], [3]]), np.array([10, 100]), 0.05)
    assert grid.shape == (2, 2)


def test_coverage_of_one_sided_bound() -> None:
    # Empirical coverage over 20,000 seeded binomial draws: the miss rate must stay
    # below alpha (0.05) plus 5 standard errors of a rate estimated from 20,000 draws.
    rng = np.random.default_rng(7)
    p, n, reps, alpha = 0.03, 200, 20_000, 0.05
    k = rng.binomial(n, p, size=reps)
    misses = np.mean(clopper_pearson_upper(k, n, alpha) < p)
    assert misses <= alpha + 5 * math.sqrt(alpha * (1 - alpha) / reps)


def test_log_ratio_bound() -> None:
    # Zero hits in the denominator: finite, limited by n2, and growing like ln(n2).
    b1 = log_ratio_lower_bound(10**6, 10**6, 0, 10**6, 0.05)
    b2 = log_ratio_lower_bound(10**7, 10**7, 0, 10**7, 0.05)
    assert math.isfinite(b1) and math.isfinite(b2)
    assert b2 - b1 == pytest.approx(math.log(10), abs=0.01)
    # With alpha split equally over the two estimates.
    expected = math.log(clopper_pearson_lower(600, 1000, 0.025)) - math.log(
        clopper_pearson_upper(300, 1000, 0.025)
    )
    assert log_ratio_lower_bound(600, 1000, 300, 1000, 0.05) == pytest.approx(expected)
    assert log_ratio_lower_bound(0, 1000, 3, 1000, 0.05) == -math.inf


@pytest.mark.parametrize(
    ("k", "n", "alpha"),
    [(-1, 10, 0.05), (11, 10, 0.05), (1, 0, 0.05), (1.5, 10, 0.05), (1, 10, 0.0), (1, 10, 1.0)],
)
def test_rejects_bad_input(k: float, n: int, alpha: float) -> None:
    with pytest.raises(InvalidArgumentError):
        clopper_pearson_upper(k, n, alpha)


def test_bonferroni() -> None:
    assert bonferroni(0.05, 4) == 0.0125
    with pytest.raises(InvalidArgumentError):
        bonferroni(0.05, 0)
