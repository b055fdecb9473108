"""The training audits against closed forms: one-run (Steinke et al. 2023) and multi-run.

"Training" here is a mechanism whose exact privacy is known, so every bound has a truth to
be checked against:

* randomised response on each canary's inclusion bit (``RR_EPSILON``-DP exactly, δ = 0): the
  one-run bound's guesses are RR's own, so ε_lcb > ε happens with probability ≤ α at most;
* a Gaussian release of each canary's inclusion (μ = 1/σ-GDP, ε(δ) from the GDP profile);
* a null trainer whose scores ignore the data (the jax_privacy #270 case): no bound at all.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from _cli import run_cli_quiet
from scipy import stats

from dpaudit.analysis import one_run
from dpaudit.api import audit, audit_training
from dpaudit.auditors.training import OneRunConfig, audit_one_run, draw_canaries
from dpaudit.auditors.training.multi_run import MultiRunConfig
from dpaudit.claims import ApproxDP, GaussianDP, PureDP
from dpaudit.engine.config import ExecutionConfig
from dpaudit.errors import InvalidArgumentError, MechanismError
from dpaudit.mechanisms.training import CallableTraining, GradientCanary, TextRecord
from dpaudit.verdicts import Verdict

ONE = ExecutionConfig(workers=1)
RR_EPSILON = 1.0
M = 1000


def _inside(dataset, m: int = M) -> np.ndarray:
    inside = np.zeros(m, dtype=bool)
    for c in dataset:
        inside[c.coordinate] = True
    return inside


def rr_train(dataset, rng):
    keep = rng.random(M) < math.exp(RR_EPSILON) / (1 + math.exp(RR_EPSILON))
    inside = _inside(dataset)
    return np.where(keep, inside, ~inside) + 0.01 * rng.random(M)


def gauss_train(dataset, rng, sigma: float = 0.5):
    return _inside(dataset) + rng.normal(0.0, sigma, M)


def null_train(dataset, rng):
    return rng.normal(0.0, 1.0, M)


def coordinate_score(model, records):
    return np.array([model[r.coordinate] for r in records])


def _mech(train, claim) -> CallableTraining:
    return CallableTraining(train, coordinate_score, (), claim, declared_access="white-box")


# ------------------------------------------------------------------ the bound itself
def test_pure_p_value_is_the_binomial_tail() -> None:
    q = 1 / (1 + math.exp(-0.7))
    assert one_run.p_value(50, 40, 30, 0.7) == pytest.approx(stats.binom.sf(29, 40, q), rel=1e-12)


def test_all_correct_ceiling_has_a_closed_form() -> None:
    """δ = 0, v = r: q^r = α, so ε = ln(q / (1 − q)) with q = α^(1/r)."""
    for r, alpha in ((10, 0.05), (100, 0.05), (1000, 0.001)):
        q = alpha ** (1 / r)
        assert one_run.epsilon_ceiling(r, r, alpha) == pytest.approx(
            math.log(q / (1 - q)), abs=1e-7
        )


def test_the_lower_bound_inverts_the_p_value() -> None:
    eps = one_run.epsilon_lower_bound(1000, 200, 170, 0.01, 1e-5)
    assert one_run.p_value(1000, 200, 170, eps, 1e-5) <= 0.01
    assert one_run.p_value(1000, 200, 170, eps + 1e-6, 1e-5) > 0.01


def test_delta_only_weakens_the_bound() -> None:
    pure = one_run.epsilon_lower_bound(1000, 100, 90, 0.05)
    approx = one_run.epsilon_lower_bound(1000, 100, 90, 0.05, 1e-4)
    assert 0 < approx < pure


def test_chance_guessing_certifies_nothing() -> None:
    assert one_run.epsilon_lower_bound(1000, 1000, 500, 0.05) == 0.0


@pytest.mark.parametrize("args", [(10, 11, 1), (10, 5, 6), (0, 0, 0), (10.5, 5, 1)])
def test_impossible_counts_are_refused(args) -> None:
    with pytest.raises(InvalidArgumentError):
        one_run.p_value(*args, 1.0)


# ---------------------------------------------------------------- the one-run audit
def test_randomised_response_flagged_only_above_its_epsilon() -> None:
    below = audit_one_run(_mech(rr_train, PureDP(0.5)), config=OneRunConfig(execution=ONE))
    exact = audit_one_run(_mech(rr_train, PureDP(RR_EPSILON)), config=OneRunConfig(execution=ONE))
    assert below.verdict is Verdict.VIOLATION and below.epsilon_lower_bound > 0.5
    assert exact.verdict is Verdict.NO_VIOLATION_FOUND
    assert 0.6 < exact.epsilon_lower_bound <= RR_EPSILON


@pytest.mark.slow
def test_coverage_of_the_one_run_bound_over_seeds() -> None:
    """RR is tight for the bound: over the seeds ε_lcb > ε must happen at rate ≤ α (+3 SE).

    α = 0.5 makes the check sharp (300 seeds): the Bonferroni split over the rules leaves the
    true rate well below α, and a wrong p-value (say, without the split) would exceed it.
    The nominal α = 0.05 is checked on 100 seeds.
    """
    mech = _mech(rr_train, PureDP(RR_EPSILON))
    for confidence, runs in ((0.5, 300), (0.95, 100)):
        alpha = 1 - confidence
        over = sum(
            audit_one_run(
                mech, config=OneRunConfig(confidence=confidence, seed=s, execution=ONE)
            ).epsilon_lower_bound
            > RR_EPSILON
            for s in range(runs)
        )
        assert over / runs <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / runs)


def test_gaussian_bound_stays_below_its_exact_epsilon() -> None:
    mu, delta = 2.0, 1e-5
    truth = _gdp_epsilon(mu, delta)
    result = audit_one_run(
        _mech(gauss_train, ApproxDP(1.0, delta)), config=OneRunConfig(canaries=M, execution=ONE)
    )
    assert result.verdict is Verdict.VIOLATION
    assert 1.0 < result.epsilon_lower_bound < truth


def _gdp_epsilon(mu: float, delta: float) -> float:
    claim = GaussianDP(mu)
    lo, hi = 0.0, 50.0
    while hi - lo > 1e-9:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if claim.profile(np.array([mid]))[0] > delta else (lo, mid)
    return hi


def test_a_curve_claim_is_read_at_the_given_delta() -> None:
    result = audit_one_run(
        _mech(gauss_train, GaussianDP(2.0)), config=OneRunConfig(delta=1e-5, execution=ONE)
    )
    assert result.detail.delta == 1e-5
    assert "at δ = 1e-05" in result.claim
    # 2-GDP at δ = 1e-5 is ε ≈ 8.3, beyond what 1000 canaries can certify (≈ 5.5).
    assert result.verdict is Verdict.INCONCLUSIVE
    assert result.detail.ceiling < _gdp_epsilon(2.0, 1e-5)


@pytest.mark.parametrize("seed", range(5))
def test_null_scores_certify_nothing(seed: int) -> None:
    """Scores that ignore the data (jax_privacy #270): never a bound above the noise."""
    result = audit_one_run(
        _mech(null_train, PureDP(0.1)), config=OneRunConfig(seed=seed, execution=ONE)
    )
    assert result.verdict is not Verdict.VIOLATION
    assert result.epsilon_lower_bound < 0.1


def test_too_few_canaries_is_inconclusive() -> None:
    result = audit_one_run(
        _mech(rr_train, PureDP(8.0)), config=OneRunConfig(canaries=20, execution=ONE)
    )
    assert result.verdict is Verdict.INCONCLUSIVE
    assert "more canaries or runs are needed" in result.verdict_text
    assert result.detail.ceiling < 8.0


def test_runs_pool_into_more_canaries() -> None:
    result = audit_one_run(
        _mech(rr_train, PureDP(RR_EPSILON)),
        config=OneRunConfig(canaries=M, runs=3, execution=ONE),
    )
    assert result.samples == {"canaries": 3 * M, "runs": 3}
    assert result.detail.runs == 3


def test_the_audit_is_reproducible_from_its_seed() -> None:
    mech = _mech(gauss_train, ApproxDP(1.0, 1e-5))
    a = audit_one_run(mech, config=OneRunConfig(seed=3, execution=ONE))
    b = audit_one_run(mech, config=OneRunConfig(seed=3, execution=ExecutionConfig(workers=2)))
    assert a.detail.rules == b.detail.rules


def test_the_result_round_trips_through_json() -> None:
    from dpaudit.results import AuditResult

    result = audit(_mech(rr_train, PureDP(0.5)), config=OneRunConfig(execution=ONE))
    again = AuditResult.from_json(result.to_json())
    assert again.detail == result.detail and again.verdict is result.verdict


FIXED = np.random.default_rng(42)


def test_a_fixed_seed_in_the_trainer_is_refused() -> None:
    """A trainer drawing from a module-level generator repeats one stream in every process."""

    def fixed(dataset, rng):
        return gauss_train(dataset, FIXED)

    with pytest.raises(MechanismError, match="fixed seed"):
        audit_one_run(_mech(fixed, PureDP(1.0)), config=OneRunConfig(execution=ONE))


def test_a_score_of_the_wrong_length_is_a_mechanism_error() -> None:
    mech = CallableTraining(
        gauss_train, lambda m, r: [0.0], (), PureDP(1.0), declared_access="white-box"
    )
    with pytest.raises(MechanismError, match="1 scores for 8 records"):
        audit_one_run(mech, config=OneRunConfig(execution=ONE))


def test_gradient_canaries_need_white_box_access() -> None:
    mech = CallableTraining(gauss_train, coordinate_score, (), PureDP(1.0))
    with pytest.raises(InvalidArgumentError, match="gradient canaries need a white-box"):
        audit_one_run(mech, config=OneRunConfig(canary_kind="gradient", execution=ONE))


# --------------------------------------------------------------------- canaries
def test_text_canaries_leave_the_base_data() -> None:
    base = tuple(TextRecord(f"sentence number {i}", i % 2) for i in range(100))
    rng = np.random.default_rng(0)
    flipped = draw_canaries("mislabelled", 10, base, rng)
    assert len(flipped.base) == 90 and not set(flipped.records) & set(base)
    texts = {r.text for r in flipped.records}
    assert not texts & {r.text for r in flipped.base}
    held = draw_canaries("held-out", 10, base, rng)
    assert set(held.records) <= set(base)
    tokens = draw_canaries("random-tokens", 5, base, rng)
    assert all(len(r.text.split()) == 8 for r in tokens.records) and tokens.base == base
    assert draw_canaries("gradient", 3, base, rng).records == tuple(
        GradientCanary(i) for i in range(3)
    )


# -------------------------------------------------------------------- multi-run
def test_multi_run_certifies_the_gaussian_profile() -> None:
    result = audit_training(
        _mech(
            lambda d, r: gauss_train(d, r)[:4] if False else gauss_train(d, r), ApproxDP(1.0, 1e-5)
        ),
        method="multi-run",
        config=MultiRunConfig(runs=900, execution=ONE),
    )
    assert result.verdict is Verdict.VIOLATION
    assert 1.0 < result.detail.mu_lower_bound < 2.0


def test_multi_run_needs_enough_runs() -> None:
    with pytest.raises(InvalidArgumentError, match="runs"):
        MultiRunConfig(runs=100)


# ------------------------------------------------------------------------- CLI
MODULE = """
import numpy as np

def train(dataset, rng):
    texts = {t for t, _ in dataset}
    return texts, rng.normal(0.0, 1.0)

def score(model, records):
    texts, noise = model
    return np.array([(t in texts) + noise for t, _ in records], dtype=float)

def bad_score(model, records):
    return [float("nan")] * len(records)
"""


@pytest.fixture
def own_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "own_training.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_cli_flags_a_trainer_that_memorises(own_module: Path, capsys) -> None:
    code, out, _ = run_cli_quiet(
        capsys,
        "audit-training",
        "own_training:train",
        "--score",
        "own_training:score",
        "--epsilon",
        "1",
        "--delta",
        "1e-5",
        "--canaries",
        "200",
        "--workers",
        "1",
    )
    assert code == 0 and out.startswith("violation: ε ≥")
    assert "best guess rule" in out and "assumes:" in out


def test_cli_writes_a_run_directory_and_json(own_module: Path, capsys) -> None:
    import json

    code, out, _ = run_cli_quiet(
        capsys,
        "audit-training",
        "own_training:train",
        "--score",
        "own_training:score",
        "--epsilon",
        "1",
        "--delta",
        "1e-5",
        "--canaries",
        "100",
        "--workers",
        "1",
        "--out",
        "run",
        "--json",
    )
    assert code == 0 and json.loads(out)["kind"] == "training"
    assert (own_module / "run" / "result.json").is_file()


@pytest.mark.parametrize(
    ("extra", "flag"),
    [
        (["--epsilon", "1"], "--epsilon"),
        (["--epsilon", "1", "--delta", "2"], "--delta"),
        (["--epsilon", "1", "--delta", "0", "--method", "multi-run", "--runs", "10"], "--runs"),
    ],
)
def test_cli_bad_flags_exit_2_and_write_nothing(own_module: Path, capsys, extra, flag) -> None:
    code, out, err = run_cli_quiet(
        capsys,
        "audit-training",
        "own_training:train",
        "--score",
        "own_training:score",
        *extra,
        "--out",
        "run",
    )
    assert code == 2 and flag in err and out == ""
    assert not (own_module / "run").exists()


def test_cli_a_nan_score_exits_2(own_module: Path, capsys) -> None:
    code, _, err = run_cli_quiet(
        capsys,
        "audit-training",
        "own_training:train",
        "--score",
        "own_training:bad_score",
        "--epsilon",
        "1",
        "--delta",
        "0",
        "--canaries",
        "50",
        "--workers",
        "1",
    )
    assert code == 2 and "non-finite" in err


def test_cli_needs_a_score_for_a_user_trainer(own_module: Path, capsys) -> None:
    code, _, err = run_cli_quiet(
        capsys, "audit-training", "own_training:train", "--epsilon", "1", "--delta", "0"
    )
    assert code == 2 and "--score" in err


def test_cli_canary_kinds_match_the_auditor() -> None:
    from dpaudit.auditors.training.canaries import CANARY_KINDS
    from dpaudit.cli import cmd_audit_training

    assert cmd_audit_training.CANARY_KINDS == CANARY_KINDS


def test_cli_resume_reuses_the_finished_runs(own_module: Path, capsys) -> None:
    """--resume in the same run directory gives the same result from the stored runs."""
    import json

    argv = [
        "audit-training", "own_training:train", "--score", "own_training:score",
        "--epsilon", "1", "--delta", "1e-5", "--canaries", "100", "--runs", "3",
        "--workers", "1", "--out", "run", "--json",
    ]  # fmt: skip
    code, first, _ = run_cli_quiet(capsys, *argv)
    stored = sorted(p.name for p in (own_module / "run" / "units").rglob("*") if p.is_file())
    code2, again, _ = run_cli_quiet(capsys, *argv, "--resume")
    assert code == code2 == 0 and stored
    a, b = json.loads(first), json.loads(again)
    assert a["detail"]["rules"] == b["detail"]["rules"]


def test_canaries_drawn_from_the_data_default_to_half_of_it() -> None:
    from dpaudit.auditors.training.one_run import default_canaries

    base = tuple(TextRecord(f"sentence {i}", i % 2) for i in range(60))
    mech = CallableTraining(lambda d, r: r.normal(), lambda m, rs: [m] * len(rs), base, PureDP(1))
    result = audit_one_run(mech, config=OneRunConfig(execution=ONE))
    assert result.detail.canaries == 30 == default_canaries("mislabelled", 60)
    assert default_canaries("gradient", 60) == 1000


def test_the_gap_split_finds_a_clean_boundary_whatever_the_share_in() -> None:
    from dpaudit.auditors.training.one_run import gap_split

    scores = np.r_[np.zeros(700), np.ones(300)] + np.linspace(0, 1e-3, 1000)
    assert gap_split(scores) == (300, 700)
    assert sum(gap_split(np.zeros(10))) == 10  # ties: still one guess per canary


def test_multi_run_offers_every_declared_trace_score_by_default() -> None:
    from dpaudit.auditors.training.multi_run import canary_game
    from dpaudit.mechanisms.training.dpsgd import DPSGD

    game, kind = canary_game(DPSGD(steps=5), 1.0, MultiRunConfig(runs=300))
    assert kind == "gradient" and game.score_name == "all"
    assert game.score_names == DPSGD.gradient_scores and game.output_shape == (4,)
    one, _ = canary_game(DPSGD(steps=5), 1.0, MultiRunConfig(runs=300, score="likelihood-ratio"))
    assert one.score_names == ("likelihood-ratio",)
    user, _ = canary_game(_mech(gauss_train, PureDP(1.0)), 1.0, MultiRunConfig(runs=300))
    assert user.score_name == ""  # a user's trainer declares no trace scores: its own score
    wrong, _ = canary_game(DPSGD(steps=5), 1.0, MultiRunConfig(runs=300, score="nope"))
    with pytest.raises(MechanismError, match="no score 'nope'"):
        wrong.sample((1,), 1, np.random.default_rng(0))
