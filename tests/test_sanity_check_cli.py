"""``dpaudit sanity-check``: one JSON object with the documented keys; bad input exits 2."""

from __future__ import annotations

import json

import pytest
from _cli import run_cli_quiet


def test_json_has_the_documented_keys(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli_quiet(
        capsys,
        "sanity-check",
        "laplace",
        "--epsilon",
        "1",
        "--dim",
        "8",
        "--runs",
        "20000",
        "--seed",
        "3",
        "--workers",
        "1",
        "--json",
    )
    assert code == 0
    data = json.loads(out)
    for key in ("epsilon_lower_bound", "confidence", "violation", "mechanism", "timing"):
        assert key in data
    for key in ("counts", "empirical_loss", "runs", "dim"):
        assert key in data["detail"]
    detail = data["detail"]
    assert data["kind"] == "sanity"
    assert detail["dim"] == 8 and data["mechanism"]["params"]["dim"] == 8
    assert detail["runs"] == 20000 and sum(detail["counts"][0]) == 20000
    assert data["violation"] is False and data["confidence"] == 0.95
    assert data["verdict"].startswith("no violation found")


def test_identity_is_flagged_and_fail_on_violation(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli_quiet(
        capsys,
        "sanity-check",
        "identity",
        "--epsilon",
        "1",
        "--dim",
        "2",
        "--runs",
        "1000",
        "--workers",
        "1",
        "--json",
        "--fail-on-violation",
    )
    data = json.loads(out)
    assert code == 1 and data["violation"] is True
    assert data["detail"]["empirical_loss"] == "inf"
    code, out, _ = run_cli_quiet(
        capsys,
        "sanity-check",
        "identity",
        "--epsilon",
        "1",
        "--runs",
        "1000",
        "--workers",
        "1",
    )
    assert code == 0 and "violation" in out


def test_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli_quiet(
        capsys,
        "sanity-check",
        "dptext",
        "--epsilon",
        "0.5",
        "--dim",
        "4",
        "--runs",
        "5000",
        "--workers",
        "1",
        "--tie-rule",
        "half-up",
    )
    assert code == 0
    assert "guess 0" in out and "violation: ε ≥" in out and "half-up" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["laplace", "--epsilon", "1", "--runs", "0"],
        ["laplace", "--epsilon", "1", "--confidence", "1.5"],
        ["laplace", "--epsilon", "1", "--confidence", "0"],
        ["no-such-mechanism", "--epsilon", "1"],
        ["laplace", "--epsilon", "1", "--dim", "3", "-p", "dim=4"],
        ["laplace", "--epsilon", "1", "--domain", "2,3"],
        ["laplace", "--epsilon", "-1"],
        ["random-bits", "--epsilon", "1", "--path", "fused"],
        ["laplace", "--epsilon", "1", "--tie-rule", "sideways"],
    ],
)
def test_bad_input_exits_2_with_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out, err = run_cli_quiet(capsys, "sanity-check", "--workers", "1", *argv)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1


def test_missed_known_flaw_points_to_the_stronger_audit(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # ADePT at n = 32, ε = 1 is known-flawed, yet 0^n vs 1^n with few runs finds nothing.
    code, out, _ = run_cli_quiet(
        capsys, "sanity-check", "adept", "--dim", "32", "--epsilon", "1", "--runs", "2000"
    )
    assert code == 0 and "no violation found" in out
    assert "known-flawed" in out
    assert "dpaudit audit adept --epsilon 1 --dim 32" in out
    # a mechanism not marked known-flawed gets no such hint
    code, out, _ = run_cli_quiet(
        capsys, "sanity-check", "laplace", "--dim", "4", "--epsilon", "1", "--runs", "2000"
    )
    assert code == 0 and "hint:" not in out


def _fake_pilot(monkeypatch, per_run: float, counts):
    """A pilot on a fake clock: ``per_run`` seconds a run, the given counts ``f[true][guess]``."""
    from dpaudit.auditors.sanity import sizing

    clock = [0.0]
    monkeypatch.setattr(sizing.time, "perf_counter", lambda: clock[0])

    def pilot(runs: int):
        clock[0] += 0.01 + per_run * runs
        return counts

    return sizing, pilot


def test_the_runs_follow_the_pilots_loss_against_the_claim(monkeypatch) -> None:
    """Counts of Laplace at ε = 1.6 (the vote event loses ln(2e^0.8 − 1) ≈ 1.242): against
    a claim of 1.0 the default 10⁶ runs certify it; against 1.24 more runs are needed, as
    many as the budget affords; a claim above the loss gets the default size."""
    counts = ((77_590, 22_410), (22_410, 77_590))
    sizing, pilot = _fake_pilot(monkeypatch, 1e-7, counts)
    easy = sizing.plan_sanity_runs(pilot, 1.0, 60.0, 0.95)
    assert easy.runs == sizing.DEFAULT_RUNS and easy.needed_runs < sizing.DEFAULT_RUNS
    hard = sizing.plan_sanity_runs(pilot, 1.24, 60.0, 0.95)
    assert hard.needed_runs > sizing.DEFAULT_RUNS
    assert hard.runs >= hard.needed_runs and hard.estimated_seconds <= 60.0
    short = sizing.plan_sanity_runs(pilot, 1.24, 0.5, 0.95)
    assert short.runs < short.needed_runs and "raise --time-budget" in short.describe()
    held = sizing.plan_sanity_runs(pilot, 2.0, 60.0, 0.95)
    assert held.runs == sizing.DEFAULT_RUNS and held.needed_runs is None


def test_a_check_without_runs_prints_its_size_and_refuses_a_budget_beside_runs(capsys) -> None:
    from dpaudit.cli.main import main

    assert main(["sanity-check", "laplace", "--epsilon", "1", "--time-budget", "5"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("sanity-check: sized to the 5 s budget (--runs ")
    code = main(["sanity-check", "laplace", "--epsilon", "1", "--runs", "1000",
                 "--time-budget", "5"])  # fmt: skip
    assert code == 2 and "--time-budget" in capsys.readouterr().err
