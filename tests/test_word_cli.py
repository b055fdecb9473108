"""``dpaudit audit`` / ``analyze`` with word-level mechanisms (a small embedding file)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _cli import run_cli, run_cli_quiet


@pytest.fixture
def vectors(tmp_path: Path) -> str:
    rng = np.random.default_rng(0)
    m = rng.normal(size=(30, 4))
    lines = [f"w{i} " + " ".join(f"{v:.6f}" for v in row) for i, row in enumerate(m)]
    path = tmp_path / "vectors.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_audit_word_mechanism_json(capsys: pytest.CaptureFixture[str], vectors: str) -> None:
    code, out, err = run_cli_quiet(
        capsys, "audit", "santext", "--epsilon", "2", "--embeddings", vectors,
        "--samples", "5000", "--final-samples", "50000", "--max-pairs", "4",
        "--pair", "w0;w1", "--workers", "1", "--json",
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    assert data["kind"] == "metric" and not data["violation"]
    pairs = data["detail"]["pairs"]
    assert any(p["w"] == "w0" and p["w_prime"] == "w1" for p in pairs)
    for p in pairs:
        assert p["verdict"] in ("no violation found", "inconclusive", "outside the claim")
        if p["verdict"] != "outside the claim":  # what the audit could see, per pair
            assert p["resolution_mass"] > 0 and p["detectable_loss"] is not None
            assert "ceiling" in p["power"]
        if p["verdict"] == "inconclusive":
            assert p["samples_needed"] is None or p["samples_needed"] > 50_000
    # SanText's law is exact: each pair's exact loss sits beside its bound, law checked.
    assert data["detail"]["law_check"]["mismatches"] == {}
    assert all(p["exact_loss"] is not None for p in pairs)


def test_audit_word_mechanism_text(capsys: pytest.CaptureFixture[str], vectors: str) -> None:
    code, out, _ = run_cli_quiet(
        capsys, "audit", "tem", "--epsilon", "1", "--embeddings", vectors, "-p", "gamma=1.5",
        "--samples", "2000", "--final-samples", "20000", "--max-pairs", "3", "--workers", "1",
    )  # fmt: skip
    assert code == 0
    assert "ε·d" in out and "ε_lcb" in out and "claim: 1·d-privacy" in out
    assert "could flag" in out and "exact loss" in out and "note: power:" in out


def test_analyze_word_mechanism(capsys: pytest.CaptureFixture[str], vectors: str) -> None:
    code, out, err = run_cli(
        capsys, "analyze", "custext", "--epsilon", "1", "--embeddings", vectors, "-p", "k=5",
        "--json",
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    assert data["violation"] is False
    assert data["method"].startswith("exact, exhaustive")
    assert data["worst"]["ratio"] <= 1.0 + 1e-9
    code, out, _ = run_cli(capsys, "analyze", "cmp", "--epsilon", "1", "--embeddings", vectors)
    assert code == 0 and "no closed form" in out


@pytest.mark.parametrize(
    ("argv", "names"),
    [
        (["audit", "tem", "--epsilon", "1", "--delta", "0.1"], "--delta"),
        (["audit", "tem", "--epsilon", "1", "--pair", "w0"], "--pair"),
        (["audit", "tem", "--epsilon", "1", "--samples", "0"], "--samples"),
        (["audit", "tem", "--epsilon", "1", "--vocabulary-size", "1"], "--vocabulary-size"),
        (["audit", "tem", "--epsilon", "1", "-p", "gamma=-1"], "gamma"),
        (["analyze", "tem", "--epsilon", "1", "--embeddings", "/nonexistent.txt"], "embeddings"),
        (["analyze", "laplace", "--epsilon", "1", "--pair", "a;b"], "--pair"),
    ],
)
def test_bad_word_input_exits_2_with_one_line(
    capsys: pytest.CaptureFixture[str], vectors: str, argv: list[str], names: str
) -> None:
    if "--embeddings" not in argv and argv[1] != "laplace":
        argv = [*argv, "--embeddings", vectors]
    code, out, err = run_cli_quiet(capsys, *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and names in err


def test_mechanisms_lists_word_mechanisms(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "mechanisms", "--json")
    assert code == 0
    words = {row["name"]: row for row in json.loads(out)["word_mechanisms"]}
    assert {"cmp", "mahalanobis", "vickrey", "tem", "truncated-gumbel"} <= set(words)
    assert {"santext", "santext+", "custext"} <= set(words)
    assert "lambda" in words["mahalanobis"]["parameters"]


def test_mechanisms_lists_the_rewriters_and_trainers(capsys: pytest.CaptureFixture[str]) -> None:
    """Every rewriter of the catalogue and every built-in trainer, each with what it is."""
    from dpaudit.cli.cmd_audit_training import TRAINERS
    from dpaudit.mechanisms.rewriters.catalogue import rewriter_names

    code, out, _ = run_cli(capsys, "mechanisms", "--json")
    data = json.loads(out)
    assert code == 0
    assert [r["name"] for r in data["rewriters"]] == rewriter_names()
    assert {r["name"]: r["model"] for r in data["rewriters"]}["dp-bart"] == "seq2seq"
    assert [t["name"] for t in data["trainers"]] == list(TRAINERS)
    code, text, _ = run_cli(capsys, "mechanisms")
    assert f"{len(rewriter_names())} LM rewriters" in text and "dp-bart  (seq2seq model)" in text
    assert f"{len(TRAINERS)} training algorithms" in text and "dp-bigram" in text
