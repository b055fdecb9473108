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
