"""`dpaudit audit`: JSON keys, exit codes, one-line errors."""

from __future__ import annotations

import json

import pytest
from _cli import run_cli_quiet

FAST = ["--samples", "5000", "--final-samples", "20000", "--workers", "1", "--json"]


def test_audit_json_has_the_documented_keys(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli_quiet(capsys, "audit", "laplace", "--epsilon", "1", *FAST)
    assert code == 0
    data = json.loads(out)
    for key in (
        "claimed_epsilon",
        "epsilon_lower_bound",
        "confidence",
        "violation",
        "witness",
        "samples",
        "timing",
    ):
        assert key in data
    assert data["kind"] == "blackbox" and data["detail"]["mode"] == "dpaudit"
    assert data["claimed_epsilon"] == 1.0 and data["confidence"] == 0.95
    assert data["violation"] is False
    w = data["witness"]
    assert {"x", "x_prime", "attack", "p1", "p2"} <= set(w)
    assert w["p1"]["samples"] == 20000


def test_fail_on_violation_exits_1_and_still_prints(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli_quiet(
        capsys, "audit", "identity", "--epsilon", "1", "--fail-on-violation", *FAST
    )
    assert code == 1
    data = json.loads(out)
    assert data["violation"] is True and data["epsilon_lower_bound"] > 1


def test_no_violation_exits_0_with_fail_on_violation(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = run_cli_quiet(
        capsys, "audit", "laplace", "--epsilon", "1", "--fail-on-violation", *FAST
    )
    assert code == 0


def test_dpsniper_mode_and_pairs_from_the_command_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run_cli_quiet(
        capsys,
        "audit",
        "ome",
        "-p",
        "lambda=10",
        "--epsilon",
        "1",
        "--mode",
        "dpsniper",
        "--pair",
        "1;0",
        "--no-patterns",
        *FAST,
    )
    assert code == 0
    data = json.loads(out)
    assert data["detail"]["mode"] == "dpsniper" and data["detail"]["pairs_tried"] == 1
    assert sorted([data["witness"]["x"], data["witness"]["x_prime"]]) == [[0.0], [1.0]]


def test_text_output_states_the_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli_quiet(
        capsys,
        "audit",
        "identity",
        "--epsilon",
        "1",
        "--samples",
        "2000",
        "--final-samples",
        "5000",
        "--workers",
        "1",
    )
    assert code == 0
    assert out.startswith("violation: ε ≥")
    lines = out.splitlines()
    assert "one-sided lower bound" in lines[1]  # the bound is defined where it is printed
    assert "witness: x = " in out and "Pr[M(x′) ∈ S]" in out
    assert " a = " not in out and "confidence_statement" not in out  # one vocabulary, no JSON
    verbose = run_cli_quiet(
        capsys,
        "audit",
        "identity",
        "--epsilon",
        "1",
        "--samples",
        "2000",
        "--final-samples",
        "5000",
        "--workers",
        "1",
        "-v",
    )[1]
    assert "where a = x" in verbose and "Bonferroni" in verbose


def test_time_budget_plans_the_sizes_and_says_how_to_repeat_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli_quiet(
        capsys, "audit", "laplace", "--epsilon", "1", "--time-budget", "5", "--workers", "1"
    )
    assert code == 0 and "no violation found" in out
    assert "for a budget of 5 s" in err and "to repeat exactly: --samples" in err
    code, _, err = run_cli_quiet(
        capsys, "audit", "laplace", "--epsilon", "1", "--samples", "100", "--time-budget", "5"
    )
    assert code == 2 and "--time-budget" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["laplace", "--epsilon", "1", "--confidence", "0"],
        ["laplace", "--epsilon", "1", "--confidence", "1"],
        ["laplace", "--epsilon", "1", "--confidence", "1.5"],
        ["laplace", "--epsilon", "1", "--samples", "0"],
        ["laplace", "--epsilon", "1", "--final-samples", "0"],
        ["no-such-mechanism", "--epsilon", "1"],
        ["laplace", "--epsilon", "1", "--pair", "0;3"],
        ["laplace", "--epsilon", "1", "--pair", "0"],
        ["laplace", "--epsilon", "1", "--no-patterns"],
        ["laplace", "--epsilon", "-1"],
        ["dptext", "--epsilon", "1", "--classifier", "likelihood-ratio"],
    ],
)
def test_bad_input_exits_2_with_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out, err = run_cli_quiet(capsys, "audit", *argv, "--workers", "1", "--json")
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err
