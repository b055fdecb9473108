"""A crafted background shows shuffled batches accounted as Poisson; the correct trainer passes.

The multi-run audit with ``background="opposing"`` (:mod:`dpaudit.auditors.training.multi_run`)
trains on as many gradient records as the base holds, each opposite the Dirac canary on its
coordinate, and fits a linear score to the canary's trace on pilot runs.  Setting (measured
2026-12-02): ``DPSGD(noise_multiplier=1.4, steps=250, canary_coordinates=1)``, whose
accountant claims (2.00, 10⁻⁵)-DP, confidence 0.95.  With fixed-size batches the
background's sum is constant and the epoch's last, short batch differs by the displaced
record, a shift of 1 per epoch with no sampling noise to hide it; with Poisson batches it is
hidden as the accountant assumes.  At 900 runs per world seeds 0–5 were all flagged (at 600:
3 of seeds 0–3); the correct trainer at 300 runs was not, on seeds 0 and 1.  The spread over
seeds at the docs' setting (σ = 2, 500 steps) is in
``benchmarks/results/crafted_background.json``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from _cli import run_cli_quiet

from dpaudit.api import audit
from dpaudit.auditors.training.multi_run import MultiRunConfig, fit_trace_weights
from dpaudit.engine.config import ExecutionConfig
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.training.contract import GradientCanary
from dpaudit.mechanisms.training.dpsgd import DPSGD
from dpaudit.mechanisms.training.game import FITTED_TRACE, CanaryGame
from dpaudit.verdicts import Verdict

ONE = ExecutionConfig(workers=1)
BASE = DPSGD(noise_multiplier=1.4, steps=250, canary_coordinates=1)


def _audit(flaw: str, seed: int, runs: int):
    mech = dataclasses.replace(BASE, flaw=flaw)
    config = MultiRunConfig(runs=runs, background="opposing", seed=seed, execution=ONE)
    return audit(mech, method="multi-run", config=config)


def test_a_base_of_gradient_records_writes_only_its_coordinate() -> None:
    """Each step's trace is minus the batch's background count, plus the canary, plus noise:
    with σ → 0 and full batches exactly ``−N + 1`` per step."""
    mech = DPSGD(
        records=(GradientCanary(0, -1.0),) * 50,
        noise_multiplier=1e-9,
        sampling_rate=1.0,
        steps=3,
        canary_coordinates=1,
    )
    canary = GradientCanary(0, 1.0)
    model = mech.train(mech.combine(mech.base, [canary]), np.random.default_rng(0))
    trace = mech.trace(model, [canary])
    assert trace.shape == (3, 1)
    np.testing.assert_allclose(trace[:, 0], -49.0, atol=1e-6)
    # the text weights and bias move by the (σ = 10⁻⁹) noise only: no text record is in the data
    np.testing.assert_allclose(model.parameters[: mech.dimensions + 1], 0.0, atol=1e-8)


def test_the_fitted_weights_find_each_epochs_short_batch() -> None:
    """1000 records in batches of 32: every 32nd step is the epoch's short batch (8 out, 9
    in), the only steps whose mean differs by a whole record; the fitted weights put their
    largest magnitudes there, with the sign of the shift (in − out = −1)."""
    mech = dataclasses.replace(BASE, flaw="shuffle-as-poisson")
    canary = GradientCanary(0, 1.0)
    background = mech.with_base((GradientCanary(0, -1.0),) * len(mech.base))
    game = CanaryGame(epsilon=1.0, training=background, canary=canary)
    weights = fit_trace_weights(game, 150, seed=0)
    short = np.arange(31, 250, 32)
    top = np.argsort(-np.abs(weights))[: short.size]
    assert set(top.tolist()) == set(short.tolist())
    assert np.all(weights[short] < 0)


def test_shuffled_batches_accounted_as_poisson_are_flagged() -> None:
    result = _audit("shuffle-as-poisson", 0, runs=900)
    assert result.verdict is Verdict.VIOLATION, result.verdict_text
    assert FITTED_TRACE in result.detail.score
    assert "opposing gradient records" in result.detail.pair_origin


def test_the_correct_trainer_on_the_crafted_background_is_not_flagged() -> None:
    result = _audit("none", 0, runs=300)
    assert result.verdict is Verdict.NO_VIOLATION_FOUND, result.verdict_text
    assert FITTED_TRACE in result.detail.score


def test_an_opposing_background_needs_gradient_canaries() -> None:
    config = MultiRunConfig(runs=300, background="opposing", canary_kind="mislabelled")
    with pytest.raises(InvalidArgumentError, match="background"):
        audit(BASE, method="multi-run", config=config)


@pytest.mark.parametrize(
    ("field", "value"), [("background", "worst"), ("pilot_runs", 1), ("pilot_runs", -3)]
)
def test_bad_multi_run_settings_are_refused(field: str, value: object) -> None:
    with pytest.raises(InvalidArgumentError, match=field):
        MultiRunConfig(**{field: value})


def test_cli_runs_the_crafted_background_and_says_so(capsys) -> None:
    code, out, _ = run_cli_quiet(
        capsys,
        "audit-training", "dpsgd", "-p", "noise_multiplier=1.4", "-p", "steps=250",
        "-p", "canary_coordinates=1", "--method", "multi-run", "--background", "opposing",
        "--runs", "300", "--workers", "1",
    )  # fmt: skip
    assert code == 0 and out.startswith("no violation found")
    assert "1000 opposing gradient records" in out and "100 pilot runs" in out


@pytest.mark.parametrize(
    ("extra", "flag"),
    [
        (["--background", "opposing"], "--background"),  # one-run
        (["--pilot-runs", "5"], "--pilot-runs"),
        (["--method", "multi-run", "--pilot-runs", "1"], "--pilot-runs"),
        (["--method", "multi-run", "--background", "opposing", "--canary-kind", "held-out"],
         "background"),
    ],
)  # fmt: skip
def test_cli_bad_background_flags_exit_2_and_write_nothing(
    tmp_path, monkeypatch, capsys, extra, flag
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli_quiet(capsys, "audit-training", "dpsgd", *extra, "--out", "run")
    assert code == 2 and flag in err and out == ""
    assert not (tmp_path / "run").exists()
