"""The one Claim contract: every kind round-trips, is a Claim, and has its closed-form profile."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.analysis.privacy_conversions import gaussian_tradeoff, gdp_profile
from dpaudit.analysis.word_metrics import CallableMetric
from dpaudit.claims import (
    CLAIM_TYPES,
    ApproxDP,
    Claim,
    Definition,
    GaussianDP,
    InputDomain,
    MetricClaim,
    Neighbours,
    PrivacyClaim,
    PrivacyProfile,
    PureDP,
    RenyiDP,
    TextClaim,
    TradeoffDP,
    Unit,
    ZeroConcentratedDP,
    claim_from_dict,
)
from dpaudit.domains import Boolean, Dataset, IntRange, RealBox, Vector, Words
from dpaudit.errors import InvalidArgumentError, MissingArgumentError
from dpaudit.serialization import dumps

EPS = np.array([0.0, 0.5, 1.0, 2.0, 4.0])
METRIC = CallableMetric(lambda a, b: 0.0 if a == b else (2.0 if {a, b} == {"a", "b"} else math.inf))
KINDS = ("pure", "approximate", "profile", "gdp", "renyi", "zcdp", "tradeoff", "metric", "text")


def _kop(eps: np.ndarray, eps0: float, delta: float = 0.0) -> np.ndarray:
    """Kairouz–Oh–Viswanath by hand: δ + (1 − δ)(e^ε0 − e^ε)₊/(1 + e^ε0)."""
    return delta + (1 - delta) * np.maximum(math.exp(eps0) - np.exp(eps), 0) / (1 + math.exp(eps0))


#: One serialisable claim of each kind (and PrivacyClaims over each domain type).
SERIALISABLE = [
    PureDP(1.0),
    PureDP(0.5, neighbouring="two users' databases, one record apart"),
    ApproxDP(1.0, 1e-5),
    GaussianDP(0.7),
    RenyiDP((2.0, 8.0), (0.25, 1.0), conversion="mironov"),
    ZeroConcentratedDP(0.125, "bun-steinke"),
    TextClaim(10.0, Unit.WORD, 0.0, Neighbours.EQUAL_LENGTH, "paper, §3"),
    TextClaim(2.0, Unit.DOCUMENT, 1e-6),
    PrivacyClaim(Definition.PURE, 1.0, InputDomain((8,), 0.0, 1.0), sensitivity=8.0,
                 sensitivity_norm="L1"),
    PrivacyClaim(Definition.APPROXIMATE, 2.0, InputDomain((1,), -math.inf, math.inf), 1e-6),
    PrivacyClaim(Definition.PURE, 1.0, InputDomain((3,), 0, 4, integer=True)),
    PrivacyClaim(Definition.PURE, 1.0, RealBox(0.0, 2.0, 3)),
    PrivacyClaim(Definition.PURE, 1.0, Vector(Boolean(), 4)),
    PrivacyClaim(Definition.APPROXIMATE, 1.0, Dataset(IntRange(0, 9), 5, "replace-one"), 1e-3),
    PrivacyClaim(Definition.PURE, 1.0, Words(["yes", "no"])),
]  # fmt: skip
UNSERIALISABLE = [
    PrivacyProfile(lambda e: np.exp(-np.asarray(e)), "e^-ε"),
    TradeoffDP(lambda a: gaussian_tradeoff(a, 1.0), "G_1"),
]


def test_every_kind_is_covered_once() -> None:
    assert tuple(CLAIM_TYPES) == KINDS
    claims = [*SERIALISABLE, *UNSERIALISABLE, MetricClaim(1.0, METRIC)]
    assert {c.kind for c in claims} == set(KINDS)


@pytest.mark.parametrize("claim", SERIALISABLE, ids=lambda c: c.describe())
def test_serialisable_claims_round_trip_through_json(claim: Claim) -> None:
    data = claim.to_dict()
    assert data["kind"] == claim.kind
    text = json.dumps(data, allow_nan=False)  # strict JSON: infinities are written as "inf"
    assert type(claim).from_dict(json.loads(text)) == claim
    assert claim_from_dict(json.loads(text)) == claim
    assert json.loads(dumps(claim)) == json.loads(text)  # what results store is the same form


def test_a_metric_claim_round_trips_given_its_metric() -> None:
    claim = MetricClaim(1.5, METRIC, "two words of a toy vocabulary")
    data = json.loads(json.dumps(claim.to_dict()))
    assert data["metric"] == "user metric"
    assert MetricClaim.from_dict(data, metric=METRIC) == claim
    assert claim_from_dict(data, metric=METRIC) == claim
    with pytest.raises(MissingArgumentError, match="metric"):
        MetricClaim.from_dict(data)


@pytest.mark.parametrize("claim", UNSERIALISABLE, ids=lambda c: c.kind)
def test_a_claim_holding_a_function_says_why_it_cannot_be_read_back(claim: Claim) -> None:
    data = json.loads(json.dumps(claim.to_dict()))
    assert data["kind"] == claim.kind and "description" in data
    with pytest.raises(InvalidArgumentError, match="Python function"):
        type(claim).from_dict(data)
    with pytest.raises(InvalidArgumentError, match="Python function"):
        claim_from_dict(data)


def test_from_dict_refuses_another_kind_and_unknown_kinds() -> None:
    with pytest.raises(InvalidArgumentError, match="kind"):
        GaussianDP.from_dict(PureDP(1.0).to_dict())
    with pytest.raises(InvalidArgumentError, match="one of pure"):
        claim_from_dict({"kind": "bayesian"})
    with pytest.raises(MissingArgumentError, match="kind"):
        claim_from_dict({"epsilon": 1.0})
    # A pure dict without a domain is the bare curve; with one, the point claim.
    assert claim_from_dict({"kind": "pure", "epsilon": 1.0}) == PureDP(1.0)


@pytest.mark.parametrize(
    "claim",
    [*SERIALISABLE, *UNSERIALISABLE, MetricClaim(1.0, METRIC)],
    ids=lambda c: f"{type(c).__name__}-{c.kind}",
)
def test_every_claim_is_a_claim(claim: object) -> None:
    assert isinstance(claim, Claim)
    assert isinstance(claim.neighbouring, str) and claim.neighbouring  # type: ignore[attr-defined]
    assert isinstance(claim.describe(), str)  # type: ignore[attr-defined]


def test_a_result_or_a_number_is_not_a_claim() -> None:
    assert not isinstance(1.0, Claim)
    assert not isinstance(InputDomain((1,), 0, 1), Claim)


# ----------------------------------------------------------------- profiles, closed forms
def test_point_claims_delegate_to_their_curve() -> None:
    domain = InputDomain((1,), 0.0, 1.0)
    pure = PrivacyClaim(Definition.PURE, 1.5, domain)
    approx = PrivacyClaim(Definition.APPROXIMATE, 1.5, domain, 1e-3)
    assert pure.curve == PureDP(1.5, neighbouring=pure.neighbouring)
    assert approx.curve == ApproxDP(1.5, 1e-3, neighbouring=approx.neighbouring)
    np.testing.assert_allclose(pure.profile(EPS), _kop(EPS, 1.5), rtol=1e-12)
    np.testing.assert_allclose(approx.profile(EPS, 0.0, 1.0), _kop(EPS, 1.5, 1e-3), rtol=1e-12)
    np.testing.assert_allclose(PureDP(1.5).profile(EPS), _kop(EPS, 1.5), rtol=1e-12)
    np.testing.assert_allclose(ApproxDP(1.5, 1e-3).profile(EPS), _kop(EPS, 1.5, 1e-3), rtol=1e-12)


def test_curve_profiles_against_closed_forms() -> None:
    mu = 1.2
    by_hand = stats.norm.cdf(-EPS / mu + mu / 2) - np.exp(EPS) * stats.norm.cdf(-EPS / mu - mu / 2)
    np.testing.assert_allclose(GaussianDP(mu).profile(EPS), by_hand, rtol=1e-9, atol=1e-15)
    # Mironov (CSF 2017, Prop. 3) at one order: e^{(α−1)(τ − ε)}, capped at 1.
    rdp = RenyiDP((4.0,), (0.5,), conversion="mironov")
    np.testing.assert_allclose(rdp.profile(EPS), np.minimum(np.exp(3 * (0.5 - EPS)), 1.0))
    # Bun & Steinke (TCC 2016, Prop. 1.3): e^{−(ε − ρ)²/(4ρ)} for ε ≥ ρ, else 1.
    z = ZeroConcentratedDP(0.5, "bun-steinke")
    expected = np.where(EPS >= 0.5, np.exp(-((EPS - 0.5) ** 2) / 2.0), 1.0)
    np.testing.assert_allclose(z.profile(EPS), expected)
    profile = PrivacyProfile(lambda e: np.exp(-np.asarray(e)) / 2, "e^-ε/2")
    np.testing.assert_allclose(profile.profile(EPS), np.exp(-EPS) / 2)


@pytest.mark.parametrize("mu", [0.5, 1.0, 2.0, 5.0])
def test_tradeoff_claim_of_the_gaussian_curve_is_gdp(mu: float) -> None:
    """f = G_μ gives the GDP profile (DRS 2022, Prop. 2.12 and Cor. 2.13).

    Tolerance: :meth:`TradeoffDP.profile` returns a sound upper bound whose excess is at
    most ~2e-12 (its golden-section bracket is 1e-12 wide in ln α), beside the ~1e-15
    rounding of ndtr/ndtri in G_μ and of the exact GDP profile; 1e-11 leaves room for both.
    """
    claim = TradeoffDP(lambda a: gaussian_tradeoff(a, mu), f"G_{mu:g}")
    eps = np.array([0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0])
    got, exact = claim.profile(eps), gdp_profile(eps, mu)
    np.testing.assert_allclose(got, exact, rtol=0, atol=1e-11)
    assert np.all(got >= exact - 1e-15)  # an upper bound: sound to refute against
    np.testing.assert_allclose(claim.tradeoff([0.1, 0.5]), GaussianDP(mu).tradeoff([0.1, 0.5]))


def test_tradeoff_claim_of_pure_dp_is_pure_dp() -> None:
    """ε-DP's trade-off max(0, 1 − e^ε α, e^{−ε}(1 − α)) (DRS 2022, Eq. (5)) has KOV's profile."""
    e0 = 1.0

    def f(a: np.ndarray) -> np.ndarray:
        return np.maximum.reduce([np.zeros_like(a), 1 - math.exp(e0) * a, math.exp(-e0) * (1 - a)])

    np.testing.assert_allclose(TradeoffDP(f, "1-DP").profile(EPS), _kop(EPS, e0), atol=1e-11)
    scalar = TradeoffDP(lambda a: float(f(np.asarray([a]))[0]), "1-DP one α at a time")
    np.testing.assert_allclose(scalar.profile(EPS[:2]), _kop(EPS[:2], e0), atol=1e-11)


def test_metric_claim_profile_is_the_pure_profile_at_eps_times_d() -> None:
    claim = MetricClaim(0.75, METRIC)
    np.testing.assert_allclose(claim.profile(EPS, "a", "b"), _kop(EPS, 1.5), rtol=1e-12)
    np.testing.assert_array_equal(claim.profile(EPS, "a", "a"), np.zeros_like(EPS))
    np.testing.assert_array_equal(claim.profile(EPS, "a", "z"), np.ones_like(EPS))  # unbounded
    assert claim.allowed_loss("a", "b") == 1.5
    with pytest.raises(MissingArgumentError, match="x, x_prime"):
        claim.profile(EPS)


def test_text_claim_profile_is_that_of_the_per_document_loss() -> None:
    per_token = TextClaim(0.5, Unit.TOKEN, 1e-4, Neighbours.EQUAL_LENGTH)
    # n = 4 tokens released: (2, 4e-4) by basic composition.
    np.testing.assert_allclose(per_token.profile(EPS, units=4), _kop(EPS, 2.0, 4e-4), rtol=1e-12)
    assert per_token.allowed_loss(units=4) == 2.0
    assert per_token.allowed_loss("a b", "c d", units=4) == 2.0
    assert per_token.allowed_loss("a b", "c", units=4) == math.inf  # lengths differ: not covered
    np.testing.assert_array_equal(per_token.profile(EPS, "a b", "c", units=4), np.ones_like(EPS))
    with pytest.raises(MissingArgumentError, match="units"):
        per_token.profile(EPS)
    document = TextClaim(3.0, Unit.DOCUMENT, 1e-6)
    np.testing.assert_allclose(document.profile(EPS), _kop(EPS, 3.0, 1e-6), rtol=1e-12)
    assert document.allowed_loss() == 3.0 == document.allowed_loss(units=50)


def test_allowed_loss_has_one_signature() -> None:
    domain = InputDomain((1,), 0.0, 1.0)
    claims = [
        PrivacyClaim(Definition.PURE, 2.0, domain),
        PureDP(2.0),
        ApproxDP(2.0, 1e-5),
        TextClaim(2.0, Unit.DOCUMENT),
    ]
    pairs = [(0.0, 1.0)] * 3 + [("a b", "c")]
    for claim, (x, x_prime) in zip(claims, pairs, strict=True):
        assert claim.allowed_loss() == 2.0
        assert claim.allowed_loss(x, x_prime, units=3) == 2.0
