"""The f-DP one-run test (Mahloujifar, Melis & Chaudhuri 2024) against exact laws.

* Randomised response is ε-DP and meets the (ε, 0) bound with equality, so the f-DP test of
  the ε-DP curve must never refute where RR's exact binomial tail is above α (validity), and
  should refute within a couple of guesses of where that tail falls below α (power).
* A release of every canary's bit plus N(0, 1) noise scaled by μ is exactly μ-GDP, so the
  certified μ_lcb may exceed μ at rate ≤ α over seeds (tolerance 3 binomial standard errors).
* The one-run auditor tests a curve claim whole: a μ-GDP claim below the truth is refuted
  where the (ε, δ) bound read at one δ cannot refute it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _cli import run_cli_quiet
from scipy import stats
from test_training_audit import ONE, _mech, gauss_train, own_module, rr_train  # noqa: F401

from dpaudit.analysis import one_run_fdp as fdp
from dpaudit.auditors.training import OneRunConfig, audit_one_run
from dpaudit.claims import GaussianDP, PureDP, RenyiDP
from dpaudit.errors import InvalidArgumentError
from dpaudit.verdicts import Verdict


def _rr_tail(g: int, v: int, epsilon: float) -> float:
    """P[Binomial(g, e^ε/(1 + e^ε)) ≥ v]: RR's chance of v or more correct guesses."""
    return float(stats.binom.sf(v - 1, g, 1.0 / (1.0 + math.exp(-epsilon))))


@pytest.mark.parametrize(
    ("m", "g", "epsilon"), [(1000, 100, 1.0), (1000, 400, 0.5), (200, 50, 2.0)]
)
def test_the_pure_curve_never_refutes_where_randomised_response_is_likely(m, g, epsilon):
    alpha = 0.05
    curve = fdp.approx_inverse_blowup([epsilon])
    refuted = [bool(fdp.refutes(curve, m, g, v, alpha)[0]) for v in range(g + 1)]
    exact = [_rr_tail(g, v, epsilon) <= alpha for v in range(g + 1)]
    assert all(e for r, e in zip(refuted, exact, strict=True) if r), "refuted a likely count"
    # Power: it starts refuting within two correct guesses of the exact threshold.
    assert refuted.index(True) - exact.index(True) <= 2


def test_refutation_is_monotone_in_mu() -> None:
    """A weaker curve (larger μ) is never refuted where a stronger one is not."""
    rng = np.random.default_rng(0)
    mus = np.linspace(0.0, 6.0, 121)
    for _ in range(30):
        m = int(rng.integers(50, 2000))
        g = int(rng.integers(1, m + 1))
        v = int(rng.integers(0, g + 1))
        hit = fdp.refutes(fdp.gaussian_inverse_blowup(mus), m, g, v, 0.05)
        assert not np.any(hit[1:] & ~hit[:-1]), (m, g, v)


def test_the_mu_bound_is_refuted_and_a_step_above_it_is_not() -> None:
    m, g, v, alpha = 1000, 200, 180, 0.01
    mu = fdp.gdp_lower_bound(m, g, v, alpha)
    step = 2 * fdp.MU_CAP / (fdp.GRID_POINTS - 1) ** 2
    assert fdp.refutes(fdp.gaussian_inverse_blowup([mu]), m, g, v, alpha)[0]
    assert not fdp.refutes(fdp.gaussian_inverse_blowup([mu + step]), m, g, v, alpha)[0]
    assert fdp.gdp_lower_bound(m, g, g // 2, alpha) == 0.0  # chance guessing certifies nothing


def test_the_profile_envelope_of_a_gdp_claim_tests_like_its_exact_curve() -> None:
    m, g, v, alpha = 1000, 50, 48, 0.05
    mu = fdp.gdp_lower_bound(m, g, v, alpha)
    for shift, expected in ((-0.02, True), (0.02, False)):
        claim = GaussianDP(mu + shift)
        assert fdp.refutes(fdp.profile_inverse_blowup(claim), m, g, v, alpha)[0] == expected


def _gdp_game(mu: float, m: int, rng: np.random.Generator) -> tuple[int, int]:
    """One μ-GDP game: bits + N(0,1)/μ-scaled scores, half of m/4 guesses in, half out."""
    inside = rng.random(m) < 0.5
    order = np.argsort(-(mu * inside + rng.standard_normal(m)))
    g = m // 4
    pos, neg = g // 2, g - g // 2
    return g, int(inside[order[:pos]].sum() + (~inside[order[m - neg :]]).sum())


@pytest.mark.parametrize("alpha", [0.5, 0.05])
def test_coverage_of_the_mu_bound_on_an_exactly_gdp_release(alpha: float) -> None:
    """Over 200 seeds μ_lcb > μ happens at rate ≤ α + 3 SE (exactly 1-GDP release)."""
    rng, runs, mu = np.random.default_rng(7), 200, 1.0
    bounds = [fdp.gdp_lower_bound(400, *_gdp_game(mu, 400, rng), alpha) for _ in range(runs)]
    over = sum(b > mu for b in bounds) / runs
    assert over <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / runs)
    assert np.median(bounds) > 0.4 * mu  # not vacuous


def test_bad_counts_and_curves_are_refused() -> None:
    with pytest.raises(InvalidArgumentError, match="counts"):
        fdp.refutes(fdp.gaussian_inverse_blowup([1.0]), 10, 5, 6, 0.05)
    with pytest.raises(InvalidArgumentError, match="alpha"):
        fdp.gdp_lower_bound(10, 5, 5, 1.5)
    with pytest.raises(InvalidArgumentError, match="mu"):
        fdp.gaussian_inverse_blowup([-1.0])
    with pytest.raises(InvalidArgumentError, match="bound"):
        OneRunConfig(bound="best")


# ------------------------------------------------------------------ in the one-run audit
def test_a_gdp_claim_below_the_truth_is_refuted_as_a_curve_not_at_one_delta() -> None:
    """The trainer releases bits + N(0, 0.5²): 2-GDP.  A 0.8-GDP claim is ε ≈ 3.2 at 1e-5,
    above what the (ε, δ) bound certifies from 1000 canaries; its curve is refuted."""
    mech = _mech(gauss_train, GaussianDP(0.8))
    point = audit_one_run(mech, config=OneRunConfig(delta=1e-5, bound="eps-delta", execution=ONE))
    curve = audit_one_run(mech, config=OneRunConfig(delta=1e-5, execution=ONE))
    assert point.verdict is Verdict.NO_VIOLATION_FOUND
    assert curve.detail.bound == "f-dp" and curve.verdict is Verdict.VIOLATION
    assert 0.8 < curve.detail.mu_lower_bound < 2.0
    assert curve.verdict_text.startswith("violation: μ ≥ ")
    assert "Mahloujifar" in curve.confidence_statement


def test_a_true_gdp_claim_is_not_refuted_over_seeds() -> None:
    mech = _mech(gauss_train, GaussianDP(2.0))
    for seed in range(3):
        cfg = OneRunConfig(delta=1e-5, runs=2, seed=seed, execution=ONE)
        result = audit_one_run(mech, config=cfg)
        assert result.verdict is not Verdict.VIOLATION
        assert result.detail.mu_lower_bound < 2.0


def test_a_renyi_claim_is_tested_through_its_profile() -> None:
    """The Gaussian's RDP curve ε(α) = αμ²/2 at μ = 0.8: refuted on the 2-GDP trainer."""
    orders = (2.0, 4.0, 8.0, 16.0, 32.0)
    claim = RenyiDP(orders, tuple(a * 0.8**2 / 2 for a in orders))
    result = audit_one_run(
        _mech(gauss_train, claim), config=OneRunConfig(delta=1e-5, execution=ONE)
    )
    assert result.detail.bound == "f-dp" and result.detail.mu_lower_bound is None
    assert result.verdict is Verdict.VIOLATION
    assert any(r.refutes_curve for r in result.detail.rules)


# ---------------------------------------------------------------------------- the CLI
def test_cli_bounds_match_the_auditor() -> None:
    from dpaudit.auditors.training.one_run import BOUNDS
    from dpaudit.cli import cmd_audit_training

    assert cmd_audit_training.BOUNDS == BOUNDS


@pytest.mark.usefixtures("own_module")
def test_cli_tests_a_gdp_claim_as_a_curve(capsys) -> None:
    """The memorising trainer of test_training_audit refutes a 1-GDP claim with μ ≥ ..."""
    args = ("audit-training", "own_training:train", "--score", "own_training:score")
    code, out, _ = run_cli_quiet(
        capsys, *args, "--claim", "gdp:1", "--delta", "1e-5", "--canaries", "200", "--workers", "1"
    )
    assert code == 0 and out.startswith("violation: μ ≥ "), out
    assert "μ ≥ " in out.splitlines()[3] and "claimed curve refuted" in out


@pytest.mark.parametrize(
    ("extra", "flag"),
    [
        (("--claim", "gdp:1"), "--delta"),  # a curve needs the δ to read ε at
        (("--claim", "gdp:1", "--delta", "1e-5", "--epsilon", "1"), "--claim"),
        (("--claim", "approx:1,1e-5", "--delta", "1e-5"), "--delta"),
        (("--claim", "accountant-rdp", "--delta", "1e-5"), "--claim"),  # no accountant here
        (("--claim", "gdp:-1", "--delta", "1e-5"), "--claim"),
        (("--claim", "gdp:1", "--delta", "1e-5", "--multi-run-score", "all"), "--multi-run-score"),
        (
            ("--claim", "gdp:1", "--delta", "1e-5", "--method", "multi-run", "--bound", "f-dp"),
            "--bound",
        ),
    ],
)
@pytest.mark.usefixtures("own_module")
def test_cli_bad_claims_name_their_flag(capsys, extra, flag) -> None:
    args = ("audit-training", "own_training:train", "--score", "own_training:score")
    code, _, err = run_cli_quiet(capsys, *args, *extra, "--canaries", "50", "--workers", "1")
    assert code == 2 and flag in err, err


def test_cli_takes_the_dpsgd_accountants_rdp_curve(capsys) -> None:
    argv = "audit-training dpsgd --claim accountant-rdp --delta 1e-5 --canaries 40 --workers 1"
    code, out, _ = run_cli_quiet(capsys, *argv.split())
    assert code == 0, out
    assert out.splitlines()[1].startswith("claim: Rényi DP: ε(2)="), out
    assert "claimed curve" in out


# ------------------------------------------------------------ DP-SGD with its RDP curve
def _dpsgd(flaw: str):
    from dpaudit.mechanisms.training.dpsgd import DPSGD

    return DPSGD(noise_multiplier=2.0, steps=500, flaw=flaw)


def test_the_wrong_rate_is_flagged_through_its_rdp_curve_where_the_point_misses() -> None:
    """Seed 3 of the wrong-rate trainer: ε_lcb 0.176 < the claimed 0.187 at δ = 1e-5, but the
    accountant's whole RDP curve (at q/10) is refuted by the same canaries."""
    trainer = _dpsgd("wrong-rate")
    config = OneRunConfig(seed=3, execution=ONE)
    point = audit_one_run(trainer, config=config)
    curve = audit_one_run(
        trainer, trainer.accountant.renyi_claim(), OneRunConfig(seed=3, delta=1e-5, execution=ONE)
    )
    assert point.verdict is Verdict.NO_VIOLATION_FOUND
    assert curve.verdict is Verdict.VIOLATION
    assert "refuted as a whole" in curve.verdict_text


@pytest.mark.parametrize("seed", range(3))
def test_the_correct_dpsgd_is_not_flagged_through_its_rdp_curve(seed: int) -> None:
    trainer = _dpsgd("none")
    config = OneRunConfig(seed=seed, delta=1e-5, execution=ONE)
    result = audit_one_run(trainer, trainer.accountant.renyi_claim(), config)
    assert result.verdict is Verdict.NO_VIOLATION_FOUND
    assert not any(r.refutes_curve for r in result.detail.rules)


def test_a_point_claim_under_the_f_dp_test_keeps_its_epsilon_bound() -> None:
    """RR at ε = 1: a 0.5-DP claim is refuted by both tests, a 1-DP claim by neither."""
    config = OneRunConfig(bound="f-dp", execution=ONE)
    low = audit_one_run(_mech(rr_train, PureDP(0.5)), config=config)
    exact = audit_one_run(_mech(rr_train, PureDP(1.0)), config=config)
    assert low.verdict is Verdict.VIOLATION
    assert low.verdict_text.startswith("violation: ε ≥ ")
    assert "the claimed curve is refuted too" in low.verdict_text
    assert exact.verdict is Verdict.NO_VIOLATION_FOUND
    assert not any(r.refutes_curve for r in exact.detail.rules)
