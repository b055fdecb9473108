"""Witness sets in the user's own words (issue 51 §3): categorical outputs by their values.

``S = {y : score(y) < -0.957}`` says nothing to a user whose function answers
'GREEN' or 'RED'; the witness names the set by the outputs it contains,
``S = {'GREEN'}``, and keeps the threshold beside it.  Continuous outputs keep
the threshold form.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli import run_cli_quiet

MODULE = """
import numpy as np


def colour(x, n, rng):
    # 'GREEN' for input 1 far more often than e^1 times as for input 0: a leak
    p = 0.9 if x == 1 else 0.05
    return np.where(rng.random(n) < p, "GREEN", "RED")


def bit(x, n, rng):
    keep = rng.random(n) < 0.95
    return np.where(keep, x, 1 - x).astype(np.int64)
"""

SIZES = ["--samples", "5000", "--final-samples", "5000", "--workers", "1"]


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    name = f"dpa_wv_{abs(hash(str(tmp_path))) % 10**8}"
    (tmp_path / f"{name}.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return name


def test_string_outputs_show_the_set_as_values(capsys, module: str) -> None:
    argv = ["audit", f"{module}:colour", "--epsilon", "1", "--domain", "int:0..1", *SIZES]
    code, out, err = run_cli_quiet(capsys, *argv)
    assert code == 0, err
    assert "violation" in out
    assert "S = {'GREEN'}" in out and "score(y)" in out  # the values, the threshold beside
    assert "x = 1, x′ = 0" in out  # typed inputs as the user's values
    code, out, _ = run_cli_quiet(capsys, *argv, "--json")
    witness = json.loads(out)["witness"]
    assert witness["output_set"] == "{'GREEN'}"
    assert witness["event"].startswith("score(y)")  # the JSON keeps the rule too


def test_integer_outputs_show_the_set_as_numbers(capsys, module: str) -> None:
    code, out, err = run_cli_quiet(
        capsys, "audit", f"{module}:bit", "--epsilon", "1", "--domain", "int:0..1", *SIZES
    )
    assert code == 0, err
    assert "S = {1}" in out or "S = {0}" in out, out


def test_continuous_outputs_keep_the_threshold(capsys) -> None:
    code, out, err = run_cli_quiet(capsys, "audit", "laplace", "--epsilon", "0.5", "-p",
                                   "sensitivity=0.5", *SIZES)  # fmt: skip
    assert code == 0, err
    assert "S = {y : score(y)" in out


def test_witness_describe_uses_the_values() -> None:
    from dpaudit.witness import ProbabilityEstimate, ThresholdAttack, Witness

    attack = ThresholdAttack("histogram", "h", ((0.0,), (1.0,)), "lower", -0.957, 0.0)
    p1 = ProbabilityEstimate(90, 100, 0.8, "lower", 0.025)
    p2 = ProbabilityEstimate(5, 100, 0.1, "upper", 0.025)
    w = Witness("black-box", (1.0,), (0.0,), attack.set_description, 1.9, 0.95, attack=attack,
                p1=p1, p2=p2, values=(1, 0), output_set="{'GREEN'}")  # fmt: skip
    assert "S = {'GREEN'}" in w.describe() and "x = 1, x' = 0" in w.describe()
    assert w.summary()["S"] == "{'GREEN'}"
    assert w.to_dict()["output_set"] == "{'GREEN'}"
    plain = Witness("black-box", (1.0,), (0.0,), attack.set_description, 1.9, 0.95,
                    attack=attack, p1=p1, p2=p2)  # fmt: skip
    assert "S = {score(y) < -0.957}" in plain.describe()
    assert "output_set" not in plain.to_dict()
