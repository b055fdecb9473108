"""``dpaudit.audit``: one entry that picks the auditors supporting a claim, one error budget."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpaudit
from dpaudit.auditors.blackbox.auditor import audit as audit_blackbox
from dpaudit.auditors.core.protocol import Auditor, error_shares
from dpaudit.auditors.profile import ProfileAuditConfig
from dpaudit.claims import Definition, GaussianDP, InputDomain, PrivacyClaim
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms import make_mechanism
from dpaudit.mechanisms.output_grid import round_to_grid
from dpaudit.results import AuditorKind

#: σ of the classic Gaussian calibration sqrt(2 ln(1.25/δ))·Δ/ε at ε = 10, δ = 0.01, Δ = 1:
#: outside the range (ε < 1) where the formula holds; its exact δ(10) is 0.0406.
CLASSIC_SIGMA = math.sqrt(2 * math.log(1.25 / 0.01)) / 10.0


def classic_gaussian(x, n, rng):
    return round_to_grid(x + rng.normal(0.0, CLASSIC_SIGMA, size=(n, x.size)), CLASSIC_SIGMA)


def analytic_gaussian(x, n, rng):  # σ for (1, 1e-5)-DP at Δ = 1 (Balle & Wang 2018): 3.73
    return round_to_grid(x + rng.normal(0.0, 3.73, size=(n, x.size)), 3.73)


def _claim(epsilon: float, delta: float) -> PrivacyClaim:
    return PrivacyClaim(Definition.APPROXIMATE, epsilon, InputDomain((1,), 0.0, 1.0), delta=delta)


def test_the_classic_gaussian_outside_its_range_is_refuted_at_the_default_sizes() -> None:
    """The black box alone certifies ε_lcb ≈ 9.6 < 10 here; the profile certifier, asked the
    claim's own question (δ at ε = 10), certifies δ(10) ≥ 0.03 > 0.01 with 3·10⁷ outputs."""
    result = dpaudit.audit(classic_gaussian, _claim(10.0, 0.01))
    assert result.violation
    assert result.kind is AuditorKind.PROFILE
    assert result.confidence == 0.95
    assert "each at α/2 = 0.025" in result.confidence_statement
    point = result.detail.profile[0]
    assert point.epsilon == 10.0 and point.delta_lower_bound > 0.01
    assert any(n.startswith("black-box search: no violation found") for n in result.notes)


def test_a_correct_gaussian_is_not_flagged_by_either_certifier() -> None:
    for seed in range(3):
        cfg = dpaudit.AuditConfig(samples=20_000, final_samples=100_000, seed=seed)
        result = dpaudit.audit(analytic_gaussian, _claim(1.0, 1e-5), config=cfg)
        assert not result.violation
        assert result.kind is AuditorKind.BLACKBOX
        assert any(n.startswith("profile certifier on") for n in result.notes)


def test_a_pure_claim_is_the_black_box_audit_bit_for_bit() -> None:
    """Behaviour not meant to change does not: a pure claim runs the search alone, as before."""
    lap = make_mechanism("laplace", epsilon=0.5)
    config = dpaudit.AuditConfig(samples=20_000, final_samples=40_000)
    via_entry = dpaudit.audit(lap, config=config).to_dict()
    direct = audit_blackbox(lap, config).to_dict()
    via_entry.pop("timing"), direct.pop("timing")
    assert via_entry == direct


def test_method_names_the_auditor_or_is_refused() -> None:
    lap = make_mechanism("laplace", epsilon=1.0)
    with pytest.raises(InvalidArgumentError, match="method"):
        dpaudit.audit(lap, method="sniper")
    with pytest.raises(InvalidArgumentError, match="metric only for a word mechanism"):
        dpaudit.audit(lap, method="metric")
    gauss = make_mechanism("gaussian", epsilon=1.0, delta=1e-5)
    with pytest.raises(InvalidArgumentError, match="auto or profile"):
        dpaudit.audit(gauss, GaussianDP(0.5), method="blackbox")


def test_a_curve_claim_goes_to_the_profile_auditor() -> None:
    gauss = make_mechanism("gaussian", epsilon=1.0, delta=1e-5)
    config = ProfileAuditConfig(selection_samples=10_000, final_samples=100_000)
    result = dpaudit.audit(gauss, GaussianDP(0.01), config=config)  # far below its true μ
    assert result.kind is AuditorKind.PROFILE and result.violation


def test_error_shares_split_the_budget_once() -> None:
    shares = error_shares(0.05, ("a", "b"))
    assert shares == {"a": 0.025, "b": 0.025}
    assert math.isclose(sum(shares.values()), 0.05)
    with pytest.raises(InvalidArgumentError, match="certifiers"):
        error_shares(0.05, ("a", "a"))
    with pytest.raises(InvalidArgumentError, match="alpha"):
        error_shares(1.5, ("a",))


def test_every_auditor_class_is_an_auditor_and_says_what_it_supports() -> None:
    from dpaudit.auditors.blackbox.auditor import BlackBoxAuditor
    from dpaudit.auditors.metric.auditor import MetricAuditor
    from dpaudit.auditors.profile import ProfileAuditor
    from dpaudit.auditors.rewriter import RewriterAuditor, TextAuditor
    from dpaudit.auditors.sanity.check import SanityAuditor

    lap = make_mechanism("laplace", epsilon=1.0)
    auditors = [
        BlackBoxAuditor(),
        MetricAuditor(),
        ProfileAuditor((0.0,), (1.0,), np.negative),
        SanityAuditor(10),
        RewriterAuditor(()),
        TextAuditor((), 1),
    ]
    assert all(isinstance(a, Auditor) for a in auditors)
    answers = {type(a).__name__: a.supports(lap, lap.claim) for a in auditors}
    assert answers == {
        "BlackBoxAuditor": True,
        "MetricAuditor": False,
        "ProfileAuditor": True,  # a pure or (ε, δ) claim states a curve too
        "SanityAuditor": True,
        "RewriterAuditor": False,
        "TextAuditor": False,
    }
