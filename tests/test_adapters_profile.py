"""Whole claims read from the libraries themselves, then audited.

OpenDP's privacy maps and diffprivlib's Gaussian calibrations.  A correct
library mechanism must not be flagged; a mis-calibrated wrapper (the same
claim, less noise) must be.

Sizes are modest (OpenDP's Gaussian draws ≈ 1.3·10⁴ outputs/s, diffprivlib's ≈ 1.5·10⁵/s).
OpenDP takes no seed, so its audits run at confidence 0.999: a false alarm there has
probability ≤ 10⁻³ by the auditor's joint guarantee, not a fixed seed.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from _cli import run_cli_quiet
from test_adapters import needs

from dpaudit.auditors.profile import ProfileAuditConfig, audit_profile
from dpaudit.auditors.profile.scores import ProjectionScore
from dpaudit.claims import (
    ApproxDP,
    GaussianDP,
    PrivacyProfile,
    PureDP,
    ZeroConcentratedDP,
)
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms import make_mechanism
from dpaudit.verdicts import Verdict

PAIR = ((0.0,), (1.0,))


def _audit(mech, claim, sel: int, fin: int, confidence: float = 0.95, seed: int = 0):
    cfg = ProfileAuditConfig(
        selection_samples=sel,
        final_samples=fin,
        confidence=confidence,
        seed=seed,
        execution=ExecutionConfig(workers=1),
    )
    return audit_profile(mech, *PAIR, ProjectionScore(*PAIR), claim, cfg)


# ------------------------------------------------------------------- OpenDP
def test_opendp_maps_become_claim_values_of_their_measure() -> None:
    needs("opendp")
    from dpaudit.adapters.opendp import (
        _opendp,
        approx_gaussian_measurement,
        claim_from_measurement,
        gaussian_measurement,
        laplace_measurement,
    )

    dp = _opendp()
    gauss = gaussian_measurement(2.0)
    rho = claim_from_measurement(gauss, 1.0)
    assert rho == ZeroConcentratedDP(float(gauss.map(1.0)))
    assert rho.rho == pytest.approx(1 / 8, rel=1e-9)  # ρ = (Δ/σ)²/2, Bun & Steinke Prop. 1.6
    assert claim_from_measurement(laplace_measurement(2.0), 1.0) == PureDP(0.5)
    fixed = claim_from_measurement(approx_gaussian_measurement(2.0, 1e-5), 1.0)
    assert isinstance(fixed, ApproxDP) and fixed.delta == 1e-5
    curve = claim_from_measurement(dp.c.make_zCDP_to_approxDP(gauss), 1.0)
    assert isinstance(curve, PrivacyProfile)
    # OpenDP's curve at ε is the δ its fixed-δ map inverts to.
    assert float(curve.profile([fixed.epsilon])[0]) == pytest.approx(1e-5, rel=1e-3)
    # ... and it is never below the exact profile of the noise (it is a sound conversion).
    eps = np.linspace(0, 3, 13)
    assert np.all(curve.profile(eps) >= GaussianDP(0.5).profile(eps) - 1e-12)


def test_opendp_gaussian_claims_come_from_its_maps() -> None:
    needs("opendp")
    mech = make_mechanism("opendp-gaussian", epsilon=1.0, delta=1e-5, dim=2)
    assert mech.claim.epsilon <= 1.0 and mech.claim.delta == 1e-5
    assert mech.claim.sensitivity == pytest.approx(math.sqrt(2))
    assert mech.profile_claim.rho == pytest.approx((mech.d_in / mech.scale) ** 2 / 2, rel=1e-9)
    assert "map(d_in" in mech.profile_claim_source


@pytest.mark.slow  # OpenDP's sampler is slow; the diffprivlib whole-claim audits below are quick
def test_opendp_gaussian_is_not_flagged_and_a_miscalibrated_one_is() -> None:
    needs("opendp")
    good = make_mechanism("opendp-gaussian", epsilon=1.0, delta=1e-5)
    ok = _audit(good, good.profile_claim, 2_000, 20_000, confidence=0.999)
    assert ok.verdict is not Verdict.VIOLATION, ok.detail.findings
    # Four times less noise, same claim: true μ ≈ 0.99 against the claimed ρ ≈ 0.031 (μ ≈ 0.25).
    bad = make_mechanism("opendp-gaussian", epsilon=1.0, delta=1e-5, noise_divisor=4.0)
    flagged = _audit(bad, bad.profile_claim, 1_000, 5_000, confidence=0.999)
    assert flagged.verdict is Verdict.VIOLATION
    assert flagged.detail.rho_lower_bound > bad.profile_claim.rho


def test_opendp_laplace_library_claim_is_pure_dp() -> None:
    needs("opendp")
    mech = make_mechanism("opendp-laplace", epsilon=1.0)
    assert mech.profile_claim == PureDP(float(mech.claim.epsilon))


# --------------------------------------------------------------- diffprivlib
@pytest.mark.parametrize(
    ("calibration", "epsilon"), [("analytic", 1.0), ("analytic", 10.0), ("classic", 0.5)]
)
def test_diffprivlib_calibration_is_the_libraries_own(calibration: str, epsilon: float) -> None:
    needs("diffprivlib")
    mech = make_mechanism(
        "diffprivlib-gaussian", epsilon=epsilon, delta=1e-5, calibration=calibration, dim=2
    )
    lib = mech.library_mechanism()
    assert (
        type(lib).__name__ == {"analytic": "GaussianAnalytic", "classic": "Gaussian"}[calibration]
    )
    # dpaudit's σ from the public ε, δ, Δ equals the library's (its bisection stops near 1e-10).
    assert mech.calibrated_sigma == pytest.approx(lib._scale, rel=1e-8)
    assert mech.profile_claim == GaussianDP(math.sqrt(2) / mech.calibrated_sigma)
    if calibration == "analytic":  # the analytic curve meets the stated (ε, δ) exactly
        assert float(mech.profile_claim.profile([epsilon])[0]) == pytest.approx(1e-5, rel=1e-6)


def test_diffprivlib_classic_refuses_epsilon_above_one_as_the_library_does() -> None:
    needs("diffprivlib")
    with pytest.raises(InvalidArgumentError, match="epsilon"):
        make_mechanism("diffprivlib-gaussian", epsilon=2.0, calibration="classic")


@pytest.mark.parametrize(
    "calibration", ["analytic", pytest.param("classic", marks=pytest.mark.slow)]
)  # the classic calibration's audit is the slower one: full suite only
def test_diffprivlib_gaussian_is_not_flagged_under_its_claims(calibration: str) -> None:
    needs("diffprivlib")
    mech = make_mechanism("diffprivlib-gaussian", epsilon=1.0, delta=1e-5, calibration=calibration)
    stated = ApproxDP(mech.claim.epsilon, mech.claim.delta)
    for claim in (mech.profile_claim, stated):
        r = _audit(mech, claim, 10_000, 100_000, seed=3)
        assert r.verdict is not Verdict.VIOLATION, (claim, r.detail.findings)
        assert r.detail.mu_lower_bound <= mech.profile_claim.mu


def test_diffprivlib_miscalibrated_gaussian_is_flagged() -> None:
    needs("diffprivlib")
    bad = make_mechanism("diffprivlib-gaussian", epsilon=1.0, delta=1e-5, noise_divisor=2.0)
    r = _audit(bad, bad.profile_claim, 10_000, 100_000, seed=3)
    assert r.verdict is Verdict.VIOLATION
    assert r.detail.mu_lower_bound > bad.profile_claim.mu  # true μ ≈ 0.54 against the claimed 0.27


def test_cli_audits_the_library_claim(capsys) -> None:
    needs("diffprivlib")
    code, out, err = run_cli_quiet(
        capsys,
        "audit",
        "diffprivlib-gaussian",
        "--epsilon",
        "1",
        "--claim",
        "library",
        "--samples",
        "5000",
        "--final-samples",
        "50000",
        "--workers",
        "1",
        "--json",
    )
    assert code == 0, err
    data = json.loads(out)
    detail = data["detail"]
    assert detail["claim"]["kind"] == "gdp"
    assert detail["claim_note"].startswith("diffprivlib GaussianAnalytic(epsilon=1")
    # Its σ is right, but value + noise in float64 leaks through the low bits (Mironov
    # 2012): the entry scores the bits, and the whole GDP curve falls.
    assert data["violation"] is True
    assert "lowest set bit" in detail["score"]
