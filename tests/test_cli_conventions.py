"""CLI conventions: one JSON object, exit 2 with one line for bad input."""

from __future__ import annotations

import json

import pytest
from _cli import run_cli


def test_mechanisms_json_is_one_object(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "mechanisms", "--json")
    assert code == 0
    data = json.loads(out)
    names = {row["name"] for row in data["mechanisms"]}
    assert "laplace" in names


def test_unknown_command_exits_2_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "no-such-command")
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1


def test_negative_domain_needs_no_equals_sign(capsys: pytest.CaptureFixture[str]) -> None:
    # The issue's own example: OME on scalars in [-10, 10] is `-p dim=1 --domain -10,10`.
    code, out, err = run_cli(
        capsys, "analyze", "ome", "-p", "dim=1", "--domain", "-10,10", "--epsilon", "1", "--json"
    )
    assert code == 0, err
    assert json.loads(out)["true_epsilon"] > 1


def test_ome_value_outside_the_encodable_range_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(
        capsys, "analyze", "ome", "-p", "dim=1", "--domain", "-40,40", "--epsilon", "1"
    )
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "domain" in err
