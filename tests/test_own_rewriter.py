"""A rewriter of the user's own, ``dpaudit audit-rewriter MODULE:CALLABLE``, black box.

The flaws are written as a user would write them: a rewriter that keeps the input's final
punctuation (a leak the lower-cased word features cannot see) and one that returns the
input unchanged.  Each produces, under one document, a set of rewrites the other
document never produces: the exact loss is ∞, so at 1 000 draws per document the bound
is the sample size's ceiling ln(n / ln(2K/α)) ≈ 5.4 whatever the seed.  The control
draws from a public list that ignores its input: its exact loss is 0, and the certified
bound is never above the claim (Clopper–Pearson, fresh rewrites).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _cli import run_cli_quiet

from dpaudit.auditors.rewriter.features import written_events

MODULE = """
PUBLIC = ["a fine film", "a dull film", "an odd film", "a long film"]

def keeps_punctuation(text, n, rng):
    end = text.rstrip()[-1] if text.rstrip()[-1] in ".!?" else ""
    return [PUBLIC[i] + end for i in rng.integers(0, len(PUBLIC), size=n)]

def returns_input(text, n, rng):
    keep = rng.random(n) < 0.5
    return [text if k else PUBLIC[0] for k in keep]

def public_only(text, n, rng):
    return [PUBLIC[i] for i in rng.integers(0, len(PUBLIC), size=n)]

def wrong_type(text, n, rng):
    return [len(text)] * n
"""
PAIR = ["--pair", "the film was great!", "the film was great."]
SIZES = ["--samples", "200", "--final-samples", "1000"]


@pytest.fixture
def own_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "own_rewriters.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def _run(capsys: pytest.CaptureFixture[str], name: str, *extra: str) -> tuple[int, str, str]:
    return run_cli_quiet(
        capsys, "audit-rewriter", f"own_rewriters:{name}", "--epsilon", "1", *PAIR, *SIZES, *extra
    )


@pytest.mark.parametrize("name", ["keeps_punctuation", "returns_input"])
@pytest.mark.parametrize("seed", [0, 1])
def test_a_copied_flaw_is_a_violation_consistent_with_infinity(
    capsys: pytest.CaptureFixture[str], own_module: Path, name: str, seed: int
) -> None:
    code, out, err = _run(capsys, name, "--unit", "document", "--seed", str(seed))
    assert code == 0, err
    assert "verdict (confidence 0.95): violation" in out
    assert "consistent with ε = ∞" in out


def test_a_per_token_claim_out_of_reach_is_inconclusive_and_says_how_far(
    capsys: pytest.CaptureFixture[str], own_module: Path
) -> None:
    # 16 tokens × ε = 1 allows 16: far above what 1 000 draws can certify.
    code, out, _ = _run(capsys, "keeps_punctuation")
    assert code == 0 and "inconclusive" in out
    assert "draws per document would certify the claim's 16" in out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_rewriter_that_ignores_its_input_is_not_flagged(
    capsys: pytest.CaptureFixture[str], own_module: Path, seed: int, tmp_path: Path
) -> None:
    out_file = tmp_path / "r.json"
    code, _out, err = _run(
        capsys, "public_only", "--unit", "document", "--seed", str(seed), "--out", str(out_file)
    )
    assert code == 0, err
    data = json.loads(out_file.read_text())
    assert data["verdict"] == "no violation found" and not data["violation"]
    assert data["claim"].startswith("ε = 1 per document")


@pytest.mark.parametrize(
    ("extra", "flag"),
    [
        (["--clip", "-1", "1"], "--clip"),
        (["--model", "tiny"], "--model"),
        (["--state-clip", "0.1"], "--state-clip"),
        (["--unit", "sentence"], "--unit"),
    ],
)
def test_options_it_cannot_take_name_the_flag(
    capsys: pytest.CaptureFixture[str], own_module: Path, extra: list[str], flag: str
) -> None:
    code, out, err = _run(capsys, "public_only", *extra)
    assert code == 2 and out == "" and flag in err


def test_a_function_returning_no_strings_is_a_clear_error(
    capsys: pytest.CaptureFixture[str], own_module: Path
) -> None:
    code, out, err = _run(capsys, "wrong_type")
    assert code != 0 and out == ""
    assert "must return" in err and "strings" in err


def test_unit_is_refused_for_a_catalogue_rewriter(capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run_cli_quiet(
        capsys, "audit-rewriter", "dp-prompt", "--epsilon", "1", "--unit", "word", *PAIR
    )
    assert code == 2 and "--unit" in err


def test_written_features_keep_case_and_punctuation() -> None:
    texts = ["A fine film!", "a fine film."]
    names = {e.name: e for e in written_events(texts)}
    bang = names["contains '!'"]
    assert list(bang(texts)) == [True, False]
    assert list(names["starts with a capital letter"](texts)) == [True, False]
    assert list(names["contains token 'film!' (as written)"](texts)) == [True, False]
    assert list(names["ends with '.'"](texts)) == [False, True]
    assert np.asarray(names["ends with '!'"](["film !"])).all()
