"""The certification core (dpaudit.auditors.core.certify): closed forms and a coverage study.

Every auditor's final bound goes through this module, so it is tested on its own:
the Bonferroni split and the Clopper–Pearson bounds against their closed forms,
and the joint confidence by simulation — with K statements whose true
probabilities are known, the share of replications in which *any* certified
bound exceeds its true log-ratio must not exceed α.  The simulation's own error
is handled by an exact binomial test (see ``test_joint_coverage``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.auditors.core.certify import (
    Certificate,
    FinalCounts,
    best,
    certify,
    certify_one,
    split_error,
    verdict_for,
)
from dpaudit.auditors.core.statistics import clopper_pearson_lower, clopper_pearson_upper
from dpaudit.auditors.sanity.check import sanity_epsilon_lower_bound
from dpaudit.claims import Definition, InputDomain, PrivacyClaim
from dpaudit.errors import InvalidArgumentError
from dpaudit.verdicts import Verdict


def test_split_error_is_alpha_over_twice_the_statements() -> None:
    assert split_error(0.05, 1) == 0.025
    assert split_error(0.05, 4) == 0.05 / 8
    assert split_error(0.1, 7) == 0.1 / 14


@pytest.mark.parametrize(
    ("alpha", "statements"), [(0.0, 1), (1.0, 1), (0.05, 0), (0.05, 1.5), (0.05, True)]
)
def test_split_error_refuses_what_is_not_a_split(alpha: float, statements: object) -> None:
    with pytest.raises(InvalidArgumentError):
        split_error(alpha, statements)  # type: ignore[arg-type]


def test_certificate_is_the_clopper_pearson_log_ratio() -> None:
    err = split_error(0.05, 3)
    cert = certify_one(FinalCounts(600, 1000, 300, 1000), err, statements=3)
    lo = clopper_pearson_lower(600, 1000, err)
    hi = clopper_pearson_upper(300, 1000, err)
    assert cert.lower_bound == math.log(lo) - math.log(hi)
    assert (cert.p1.bound, cert.p2.bound) == (lo, hi)
    assert (cert.p1.bound_side, cert.p2.bound_side) == ("lower", "upper")
    assert cert.p1.bound_error == cert.p2.bound_error == err
    assert cert.statements == 3


def test_zero_hits_under_x_prime_gives_the_closed_form_limited_by_n() -> None:
    # k2 = 0: p2_upper = 1 − err^(1/n); k1 = n: p1_lower = err^(1/n) (exact closed forms).
    n, err = 10_000, 0.0125
    cert = certify_one(FinalCounts(n, n, 0, n), err)
    assert cert.p2.bound == pytest.approx(1 - err ** (1 / n), rel=1e-12)
    assert cert.p1.bound == pytest.approx(err ** (1 / n), rel=1e-12)
    assert cert.lower_bound == pytest.approx(
        math.log(err ** (1 / n)) - math.log(1 - err ** (1 / n)), rel=1e-9
    )


def test_delta_is_subtracted_from_the_numerator_and_can_leave_no_evidence() -> None:
    err = 0.025
    plain = certify_one(FinalCounts(500, 1000, 100, 1000), err)
    with_delta = certify_one(FinalCounts(500, 1000, 100, 1000), err, delta=0.1)
    assert with_delta.lower_bound == pytest.approx(
        math.log(plain.p1.bound - 0.1) - math.log(plain.p2.bound), rel=1e-12
    )
    assert with_delta.lower_bound < plain.lower_bound
    gone = certify_one(FinalCounts(50, 1000, 1, 1000), err, delta=0.2)
    assert gone.lower_bound == -math.inf


def test_certify_splits_the_error_over_all_statements() -> None:
    counts = [FinalCounts(700, 10_000, 400, 10_000), FinalCounts(600, 10_000, 300, 10_000)]
    certs = certify(counts, confidence=0.9)
    error = (1 - 0.9) / 4  # α = 1 − confidence, as the auditors compute it
    assert all(c.p1.bound_error == error for c in certs)
    assert [c.lower_bound for c in certs] == [
        certify_one(c, error, statements=2).lower_bound for c in counts
    ]
    assert best(certs) == int(np.argmax([c.lower_bound for c in certs]))


def test_certify_refuses_no_statements_and_impossible_counts() -> None:
    with pytest.raises(InvalidArgumentError, match="counts"):
        certify([], 0.95)
    with pytest.raises(InvalidArgumentError, match="hits_x"):
        FinalCounts(11, 10, 0, 10)
    with pytest.raises(InvalidArgumentError, match="hits_x_prime"):
        FinalCounts(1, 10, -1, 10)


def test_verdict_against_the_allowed_loss() -> None:
    assert verdict_for(1.2, 1.0) is Verdict.VIOLATION
    assert verdict_for(1.0, 1.0) is Verdict.NO_VIOLATION_FOUND  # strictly greater only
    assert verdict_for(5.0, math.inf) is Verdict.OUTSIDE_CLAIM
    assert verdict_for(1e-9, 0.0) is Verdict.VIOLATION  # d = 0 allows no loss at all


def test_the_sanity_check_is_certified_by_the_core() -> None:
    """The ACL 2022 table's four statements (guess × direction), certified jointly."""
    table = np.array([[7000, 3000], [4000, 6000]])  # rows: input a, columns: guess g
    bound, witness = sanity_epsilon_lower_bound(table, 10_000, 0.95)
    counts = [
        FinalCounts(int(table[a, g]), 10_000, int(table[b, g]), 10_000)
        for g in (0, 1)
        for a, b in ((0, 1), (1, 0))
    ]
    certs = certify(counts, 0.95)
    top: Certificate = certs[best(certs)]
    assert bound == top.lower_bound
    assert witness is not None and witness.p1 == top.p1 and witness.p2 == top.p2


@pytest.mark.parametrize(  # K = 4 checks the split over K in the quick subset; δ > 0 in the full
    ("K", "delta"), [(1, 0.0), (4, 0.0), pytest.param(3, 0.02, marks=pytest.mark.slow)]
)
def test_joint_coverage(K: int, delta: float) -> None:
    """All 2K one-sided probability bounds, hence all K ε bounds, hold together w.p. ≥ 1 − α.

    Statements sit exactly at their true loss: p1 = e^ε·p2 + δ with different
    ε, p2 and n per statement.  The core promises that with probability ≥ 1 − α
    every ``p1_lower ≤ p1`` and every ``p2_upper ≥ p2`` at once (Bonferroni over
    2K one-sided bounds), which implies every ε bound ≤ its true
    ``ln((p1 − δ)/p2)``.  Over R seeded replications the number of joint
    failures is Binomial(R, q) with q ≤ α if the core is right; the test fails
    when an exact one-sided binomial test rejects q ≤ α at level 10⁻³.  The
    joint failure rate of the probability bounds is close to α (Clopper–Pearson
    is nearly exact at these n), so a core that skipped the split over K
    (error α/2 per bound) would fail here at K ≥ 2; the ε bounds' own failure
    rate is far lower and could not show that.
    """
    alpha, R = 0.1, 3000
    rng = np.random.default_rng(20261124 + K)
    eps = rng.uniform(0.05, 1.5, K)
    p2 = rng.uniform(0.02, 0.2, K)
    p1 = np.minimum(np.exp(eps) * p2 + delta, 0.95)
    truth = np.log((p1 - delta) / p2)
    n = rng.integers(2_000, 20_000, K)
    k1 = rng.binomial(n, p1, size=(R, K))
    k2 = rng.binomial(n, p2, size=(R, K))
    certs = [
        certify(
            [
                FinalCounts(int(a), int(m), int(b), int(m))
                for a, b, m in zip(r1, r2, n, strict=True)
            ],
            0.9,
            delta,
        )
        for r1, r2 in zip(k1, k2, strict=True)
    ]
    lo = np.array([[c.p1.bound for c in row] for row in certs])
    hi = np.array([[c.p2.bound for c in row] for row in certs])
    bounds = np.array([[c.lower_bound for c in row] for row in certs])
    side_failures = np.any((lo > p1) | (hi < p2), axis=1)
    assert np.all(side_failures | ~np.any(bounds > truth, axis=1))  # ε failure ⇒ side failure
    failures = int(side_failures.sum())
    p_value = stats.binomtest(failures, R, alpha, alternative="greater").pvalue
    assert p_value > 1e-3, f"{failures}/{R} joint failures at α = {alpha}"


def test_every_claim_answers_the_allowed_loss_question() -> None:
    domain = InputDomain((1,), 0.0, 1.0)
    assert PrivacyClaim(Definition.PURE, 2.0, domain).allowed_loss(0.0, 1.0) == 2.0
    approx = PrivacyClaim(Definition.APPROXIMATE, 1.0, domain, delta=1e-5)
    assert approx.allowed_loss(0.0, 1.0) == 1.0 and approx.delta == 1e-5
    with pytest.raises(InvalidArgumentError, match="MetricClaim"):
        PrivacyClaim(Definition.METRIC, 1.0, domain)
