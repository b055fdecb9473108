"""`dpaudit analyze` and `dpaudit sensitivity`: acceptance checks and bad input."""

from __future__ import annotations

import json
import math

import pytest
from _cli import run_cli


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    code, out, err = run_cli(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


# ---------------------------------------------------------------- sensitivity
def test_sensitivity_acceptance(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(
        capsys, "sensitivity", "--clip-norm", "2", "--norm", "1", "--dim", "128", "--bound", "1"
    )
    assert abs(data["sensitivity"] - 2 * math.sqrt(128)) <= 1e-9
    w = data["witness"]
    assert len(w["r1"]) == 128 and len(w["r2"]) == 128
    assert w["distance"] == pytest.approx(data["sensitivity"], rel=1e-12)


@pytest.mark.parametrize(
    ("p", "q", "expected"), [("inf", "1", 2 * 10 * 5.0), ("1", "inf", 2 * 5.0), ("inf", "2", None)]
)
def test_sensitivity_other_norms(
    capsys: pytest.CaptureFixture[str], p: str, q: str, expected: float | None
) -> None:
    data = run_json(
        capsys, "sensitivity", "--clip-norm", p, "--norm", q, "--dim", "10", "--bound", "5"
    )
    assert data["sensitivity"] == pytest.approx(expected or 2 * 5.0 * math.sqrt(10))
    assert data["clip_norm"] == (p if p == "inf" else int(p))


def test_sensitivity_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "sensitivity", "--dim", "4")
    assert code == 0 and "L1 sensitivity of L2 clipping" in out and "4" in out


# -------------------------------------------------------------------- analyze
def test_analyze_adept_acceptance(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "analyze", "adept", "-p", "dim=2", "--epsilon", "1")
    assert data["claimed_epsilon"] == 1.0
    assert data["true_epsilon"] == pytest.approx(math.sqrt(2))
    assert data["violation"] is True
    assert data["witness"]["epsilon_lower_bound"] == pytest.approx(math.sqrt(2))
    pair = data["paper_counterexample"]["pair"]
    assert pair["epsilon_lower_bound"] == pytest.approx(4 / 3, rel=1e-12)
    assert pair["x"] == pytest.approx([2 / 3, 2 / 3]) and pair["x_prime"] == pytest.approx(
        [-2 / 3, -2 / 3]
    )


def test_analyze_dptext_acceptance(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "analyze", "dptext", "-p", "dim=1", "--epsilon", "1")
    assert data["true_epsilon"] == "inf"
    assert data["violation"] is True
    assert data["witness"]["x"] == [0.0] and data["witness"]["x_prime"] == [1.0]
    assert data["witness"]["epsilon_lower_bound"] == "inf"


@pytest.mark.parametrize(
    ("argv", "violation"),
    [
        (["laplace", "-p", "dim=4"], False),
        (["gaussian", "--delta", "1e-6"], False),
        (["gaussian", "-p", "calibration=classic", "--epsilon", "10"], True),
        (["adept-acl22", "-p", "dim=8"], True),
        (["adept-l1", "-p", "dim=64"], False),
        (["adept-fixed-scale", "-p", "dim=64"], False),
        (["grr", "-p", "k=7"], False),
        (["sue", "-p", "k=3", "-p", "dim=2"], False),
        (["oue-embedding"], False),
        (["randomized-response"], False),
        (["identity", "-p", "dim=3"], True),
        (["random-bits"], False),
    ],
)
def test_analyze_verdicts(
    capsys: pytest.CaptureFixture[str], argv: list[str], violation: bool
) -> None:
    if "--epsilon" not in argv:
        argv = [*argv, "--epsilon", "1"]
    data = run_json(capsys, "analyze", *argv)
    assert data["violation"] is violation
    assert data["witness"] is not None


def test_analyze_gaussian_reports_delta(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "analyze", "gaussian", "-p", "calibration=classic", "--epsilon", "10")
    assert data["definition"] == "approximate"
    assert data["true_delta"] > data["claimed_delta"] == 1e-5
    assert "unproven" in data["warning"]


def test_analyze_unknown_truth(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "analyze", "adept", "--epsilon", "1", "--domain", "0,1")
    assert data["true_epsilon"] is None and data["violation"] is None


def test_analyze_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "analyze", "adept", "-p", "dim=2", "--epsilon", "1")
    assert code == 0
    assert "violation:    YES" in out and "paper's pair" in out


def test_every_mechanism_is_listed(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "mechanisms")
    names = {row["name"] for row in data["mechanisms"]}
    expected = {
        "gaussian", "randomized-response", "grr", "sue", "oue", "sue-embedding",
        "oue-embedding", "identity", "random-bits", "adept", "adept-l1",
        "adept-fixed-scale", "adept-acl22", "dptext",
    }  # fmt: skip
    assert expected <= names


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    "argv",
    [
        ["analyze", "adept", "--epsilon", "0"],
        ["analyze", "adept", "--epsilon", "-1"],
        ["analyze", "adept", "--epsilon", "nan"],
        ["analyze", "gaussian", "--epsilon", "1", "--delta", "1.5"],
        ["analyze", "gaussian", "--epsilon", "1", "--delta", "-0.1"],
        ["analyze", "gaussian", "--epsilon", "1", "--delta", "0"],
        ["analyze", "adept", "--epsilon", "1", "-p", "bound=0"],
        ["analyze", "adept", "--epsilon", "1", "-p", "bound=-2"],
        ["analyze", "adept", "--epsilon", "1", "-p", "dim=0"],
        ["analyze", "adept", "--epsilon", "1", "-p", "dim=two"],
        ["analyze", "adept", "--epsilon", "1", "-p", "colour=red"],
        ["analyze", "adept", "--epsilon", "1", "-p", "nonsense"],
        ["analyze", "no-such-mechanism", "--epsilon", "1"],
        ["analyze", "dptext", "--epsilon", "1", "-p", "nan_policy=maybe"],
        ["analyze", "laplace", "--epsilon", "1", "--domain", "1,0"],
        ["analyze", "grr", "--epsilon", "1", "--delta", "0.1"],
        ["analyze", "adept"],
        ["sensitivity", "--clip-norm", "3", "--dim", "2"],
        ["sensitivity", "--norm", "0.5", "--dim", "2"],
        ["sensitivity", "--dim", "0"],
        ["sensitivity", "--dim", "2", "--bound", "0"],
        ["sensitivity", "--dim", "2", "--bound", "-1"],
        ["sensitivity", "--dim", "x"],
    ],
)
def test_bad_input_exits_2_with_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out, err = run_cli(capsys, *argv, "--json")
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err
