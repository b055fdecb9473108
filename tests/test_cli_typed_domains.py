"""`dpaudit audit module:f --domain TYPED [--pair 'A|B']`: typed inputs from the command line.

The callable receives values of the domain's own type; bad domain and pair strings
exit 2 with one line naming the flag and the allowed syntax.  Sizes are small (a few
thousand outputs): the broken mechanisms' losses are far above the claim (exact
support shifts), the correct ones' claims hold exactly, so the verdicts are not
near the sampling error at seed 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli import run_cli_quiet

FAST = ["--samples", "4000", "--final-samples", "8000", "--workers", "1", "--json"]

MODULE = '''
import numpy as np

SEEN = []


def shift(x, n, rng):
    """Integer + geometric noise: the support moves with x (true ε = ∞)."""
    assert isinstance(x, int) and not isinstance(x, bool), type(x)
    return [int(v) for v in x + rng.geometric(0.5, size=n)]


def krr(x, n, rng):
    """3-ary randomised response, exactly ε = 1."""
    assert x in ("a", "b", "c"), x
    cats = ["a", "b", "c"]
    p = np.exp(1.0) / (np.exp(1.0) + 2)
    return [x if rng.random() < p else cats[(cats.index(x) + 1 + rng.integers(2)) % 3]
            for _ in range(n)]


def total(d, n, rng):
    """Sum of records in 0..100 with noise for sensitivity 1 (true ε = 100)."""
    assert isinstance(d, list) and all(isinstance(r, int) for r in d), d
    return sum(d) + rng.laplace(0.0, 1.0, size=n)
'''


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "typed_mod.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def _audit(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict, str]:
    code, out, err = run_cli_quiet(capsys, "audit", *argv, *FAST)
    return code, (json.loads(out) if code == 0 else {}), err


def test_int_domain_calls_with_ints_and_flags_a_support_shift(
    capsys: pytest.CaptureFixture[str], module: Path
) -> None:
    code, data, err = _audit(
        capsys, "typed_mod:shift", "--epsilon", "1", "--domain", "int:0..10", "--pair", "3|4"
    )
    assert code == 0, err
    assert data["violation"] and data["epsilon_lower_bound"] > 1
    w = data["witness"]
    # The witness names the user's integers, the encoding beside them.
    assert all(type(v) is int and 0 <= v <= 10 for v in (w["x"], w["x_prime"])), w
    assert len(w["x_encoded"]) == 1 and "indices" in w["input_encoding"]


def test_categories_with_a_given_pair_are_not_flagged(
    capsys: pytest.CaptureFixture[str], module: Path
) -> None:
    code, data, err = _audit(
        capsys, "typed_mod:krr", "--epsilon", "1", "--domain", "cat:a,b,c", "--pair", "a|c",
        "--no-patterns",
    )  # fmt: skip
    assert code == 0, err
    assert not data["violation"]
    w = data["witness"]
    assert "given: index 0 = 'a', 1 = 'c'" in w["pair_origin"]
    assert {w["x"], w["x_prime"]} == {"a", "c"}
    assert sorted([w["x_encoded"], w["x_prime_encoded"]]) == [[0.0], [1.0]]
    decoded = [["a", "c"][int(w[k][0])] for k in ("x_encoded", "x_prime_encoded")]
    assert [w["x"], w["x_prime"]] == decoded


def test_dataset_domain_with_a_given_pair(capsys: pytest.CaptureFixture[str], module: Path) -> None:
    code, data, err = _audit(
        capsys, "typed_mod:total", "--epsilon", "1",
        "--domain", "dataset:int:0..100,max=20,neighbours=add-remove",
        "--pair", "[1, 2]|[1, 2, 100]", "--no-patterns",
    )  # fmt: skip
    assert code == 0, err
    assert data["violation"] and data["epsilon_lower_bound"] > 5
    assert sorted([data["witness"]["x"], data["witness"]["x_prime"]]) == [[1, 2], [1, 2, 100]]
    # The JSON reads back into the typed result: encoded inputs in x, the user's in values.
    from dpaudit import AuditResult

    w = AuditResult.from_dict(data).witness
    assert w is not None and w.values is not None
    assert sorted(w.values) == [[1, 2], [1, 2, 100]]
    assert [list(w.x), list(w.x_prime)] == [
        data["witness"][k] for k in ("x_encoded", "x_prime_encoded")
    ]
    assert AuditResult.from_dict(data).to_dict()["witness"] == data["witness"]


def test_typed_witness_text_shows_the_users_values(
    capsys: pytest.CaptureFixture[str], module: Path
) -> None:
    code, out, err = run_cli_quiet(
        capsys, "audit", "typed_mod:krr", "--epsilon", "1", "--domain", "cat:a,b,c",
        "--pair", "a|c", "--no-patterns", "-v", *FAST[:-1],
    )  # fmt: skip
    assert code == 0, err
    line = next(ln for ln in out.splitlines() if ln.startswith("witness:"))
    assert line.startswith(("witness: x = 'a', x′ = 'c'", "witness: x = 'c', x′ = 'a'")), line
    assert "inputs: x and x' are values of" in out
    assert "where a = x and b = x′" in out or "where a = x′ and b = x" in out
    # The claim is stated over the user's domain, not the index box the auditor samples.
    assert "claim: 1-DP on category in {'a', 'b', 'c'}" in out, out


@pytest.mark.parametrize(
    ("argv", "flag", "syntax"),
    [
        (["--domain", "int:0..x"], "--domain", "int:LOW..HIGH"),
        (["--domain", "int:5..1"], "--domain", "int:LOW..HIGH"),
        (["--domain", "cat:a"], "--domain", "cat:a,b,c"),
        (["--domain", "dataset:int:0..9,max=0"], "--domain", "dataset:ELEMENT"),
        (["--domain", "dataset:int:0..9,size=3"], "--domain", "max="),
        (["--domain", "integer:0..3"], "--domain", "int:LOW..HIGH"),
        (["--domain", "int:0..10", "--pair", "3;4"], "--pair", "'|'"),
        (["--domain", "int:0..10", "--pair", "3|11"], "--pair", "integer in {0..10}"),
        (["--domain", "cat:a,b,c", "--pair", "a|d"], "--pair", "category"),
        (["--domain", "dataset:int:0..9,max=3", "--pair", "[1]|[2]"], "--pair", "neighbours"),
        (["--domain", "int:0..10", "--dim", "3"], "--dim", "typed --domain"),
        (["--domain", "int:0..10", "-p", "dim=3"], "-p", "typed --domain"),
    ],
)
def test_bad_domain_or_pair_exits_2_with_one_line(
    capsys: pytest.CaptureFixture[str], module: Path, argv: list[str], flag: str, syntax: str
) -> None:
    code, out, err = run_cli_quiet(capsys, "audit", "typed_mod:shift", "--epsilon", "1", *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert flag in err and syntax in err, err


def test_typed_domain_needs_a_callable(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli_quiet(capsys, "audit", "laplace", "--epsilon", "1", "--domain", "bool")
    assert code == 2 and "--domain" in err and "module:callable" in err
