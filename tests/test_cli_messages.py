"""Every usage message names the flag and its allowed values (issue 51 §6).

A check deep in the library names its Python parameter (``workers``,
``time_budget``); the CLI names the flag the value came from.  Each case exits 2
with one line on stderr, prints nothing on stdout and writes nothing, and the
checks that need no model answer before any model loads.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from _cli import run_cli_quiet

QUICK = ["--samples", "1000", "--final-samples", "1000"]

# (id, argv, what the one line must contain)
CASES = [
    ("workers-0", ["audit", "laplace", "--epsilon", "1", *QUICK, "--workers", "0"],
     ["--workers", "[1, 4096]"]),
    ("workers-huge", ["sanity-check", "laplace", "--epsilon", "1", "--workers", "5000"],
     ["--workers", "[1, 4096]"]),
    ("time-budget-negative", ["audit", "laplace", "--epsilon", "1", "--time-budget", "-1"],
     ["--time-budget", "> 0"]),
    ("time-budget-0", ["audit", "laplace", "--epsilon", "1", "--time-budget", "0"],
     ["--time-budget", "> 0"]),
    ("unit-timeout-0", ["reproduce", "hoho-fig2", "--out", "{out}", "--unit-timeout", "0"],
     ["--unit-timeout", "> 0"]),
    ("seed-negative", ["sanity-check", "laplace", "--epsilon", "1", "--seed", "-1"],
     ["--seed", ">= 0"]),
    ("resume-without-out", ["audit", "laplace", "--epsilon", "1", "--resume"],
     ["--out is missing", "--resume"]),
    ("resume-without-out-sanity", ["sanity-check", "laplace", "--epsilon", "1", "--resume"],
     ["--out is missing"]),
    ("resume-without-sizes", ["audit", "laplace", "--epsilon", "1", "--out", "{out}", "--resume"],
     ["--samples", "--final-samples"]),
    ("runs-0", ["sanity-check", "laplace", "--epsilon", "1", "--runs", "0"], ["--runs=0", "[1, "]),
    ("clip-norm-0", ["simulate-sensitivity", "--dims", "1", "--pairs", "10", "--clip-norm", "0"],
     ["--clip-norm=", ">= 1"]),
    ("claimed-sensitivity", ["simulate-sensitivity", "--dims", "1", "--pairs", "10",
                             "--claimed-sensitivity", "-1"],
     ["--claimed-sensitivity=", "> 0"]),
    ("sensitivity-norm", ["sensitivity", "--clip-norm", "2", "--norm", "0", "--dim", "3",
                          "--bound", "1"], ["--norm=", "1, 2, inf"]),
    ("n-sentences", ["text-grid", "--n-sentences", "1"], ["--n-sentences=", "[2, "]),
    ("mechanism-parameter", ["audit", "ome", "--epsilon", "1", *QUICK, "-p", "lambda=0"],
     ["-p lambda=", "> 0"]),
    ("callable-without-domain", ["audit", "dpa_msg_mod:f", "--epsilon", "1"],
     ["--domain is missing", "LOW,HIGH", "int:LOW..HIGH", "cat:a,b,c", "bool"]),
    ("callable-without-domain-claim",
     ["audit", "dpa_msg_mod:f", "--epsilon", "1", "--claim", "gdp:1"], ["--domain is missing"]),
]  # fmt: skip

# audit-rewriter: refused from the arguments alone, before torch or a model loads.
REWRITER = ["audit-rewriter", "dp-prompt", "--model", "tiny"]
REWRITER_CASES = [
    ("clip-reversed", [*REWRITER, "--epsilon", "1", "--clip", "5", "-5"], ["--clip", "LO < HI"]),
    ("clip-equal", [*REWRITER, "--epsilon", "1", "--clip", "1", "1"], ["--clip", "LO < HI"]),
    ("clip-infinite", [*REWRITER, "--epsilon", "1", "--clip", "-5", "inf"], ["--clip", "finite"]),
    ("epsilon-0", [*REWRITER, "--epsilon", "0"], ["--epsilon", "> 0"]),
    ("max-new-tokens-0", [*REWRITER, "--epsilon", "1", "--max-new-tokens", "0"],
     ["--max-new-tokens", ">= 1"]),
    ("samples-5", [*REWRITER, "--epsilon", "1", "--samples", "5"], ["--samples=5", "[10, "]),
    ("final-samples-5", [*REWRITER, "--epsilon", "1", "--final-samples", "5", "--black-box"],
     ["--final-samples=5", "[10, "]),
    ("confidence-1", [*REWRITER, "--epsilon", "1", "--confidence", "1"],
     ["--confidence=1", "(0, 1)"]),
    ("workers-0", [*REWRITER, "--epsilon", "1", "--workers", "0"], ["--workers", "[1, 4096]"]),
]  # fmt: skip


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "work"
    where.mkdir()
    (tmp_path / "dpa_msg_mod.py").write_text(
        "def f(x, n, rng):\n    return x + rng.laplace(0.0, 1.0, size=(n, x.size))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(where)
    return where


def _check(capsys, work: Path, argv: list[str], needles: list[str]) -> float:
    argv = [str(work / "run") if a == "{out}" else a for a in argv]
    start = time.perf_counter()
    code, out, err = run_cli_quiet(capsys, *argv)
    took = time.perf_counter() - start
    assert code == 2, (out, err)
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert not any(work.iterdir()), "something was written"
    return took


@pytest.mark.parametrize(("argv", "needles"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_message_names_the_flag_and_its_allowed_values(capsys, work, argv, needles) -> None:
    _check(capsys, work, argv, needles)


@pytest.mark.parametrize(
    ("argv", "needles"), [c[1:] for c in REWRITER_CASES], ids=[c[0] for c in REWRITER_CASES]
)
def test_rewriter_arguments_are_checked_before_any_model_loads(
    capsys, work, argv, needles, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = pytest.importorskip("dpaudit.text.models")

    def no_load(*_: object, **__: object) -> None:
        raise AssertionError("a model was loaded before the arguments were checked")

    monkeypatch.setattr(models, "tiny_model", no_load)
    monkeypatch.setattr(models, "load_model", no_load)
    assert _check(capsys, work, argv, needles) < 5.0
