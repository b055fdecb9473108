"""``dpaudit audit-rewriter``: a tiny model end to end; bad input exits 2, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpaudit.cli.main import main

pytest.importorskip("transformers", reason="audit-rewriter needs the lm extra")

from lm_threads import one_torch_thread  # noqa: F401  (autouse fixture)

TINY = ["--model", "tiny", "--samples", "10", "--final-samples", "10", "--max-new-tokens", "3"]
PAIR = ["--pair", "the film was good", "the film was bad"]


def test_white_box_and_black_box_runs_write_json(tmp_path: Path, capsys) -> None:
    out = tmp_path / "result.json"
    assert (
        main(["audit-rewriter", "dp-prompt", "--epsilon", "10", *TINY, *PAIR, "--out", str(out)])
        == 0
    )
    data = json.loads(out.read_text())
    assert data["kind"] == "rewriter" and data["detail"]["text_claim"]["epsilon"] == 10.0
    assert data["detail"]["pairs"][0]["x"] == "the film was good"
    assert "white-box" in capsys.readouterr().out
    assert (
        main(
            [
                "audit-rewriter",
                "dp-prompt",
                "--epsilon",
                "10",
                *TINY,
                *PAIR,
                "--black-box",
                "--json",
            ]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["kind"] == "rewriter" and data["detail"]["mode"] == "black-box"


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["dp-prompt", "--epsilon", "10", "--model", "/no/such/model"], "--model"),
        (["dp-prompt", "--epsilon", "-1", *TINY], "epsilon"),
        (["no-such-rewriter", "--epsilon", "1", *TINY], "no-such-rewriter"),
        (["dp-prompt", "--epsilon", "1", *TINY, "--pairs", "bogus"], "kinds"),
        (["dp-prompt", "--epsilon", "1", *TINY, "--out", "/no/such/dir/r.json"], "--out"),
        (["dp-prompt", "--epsilon", "1", *TINY, "--workers", "2"], "--backend ray"),
        (["dp-mlm", "--epsilon", "1"], "--model='smollm2' is invalid: expected a masked LM"),
    ],
)
def test_bad_input_exits_2_naming_the_argument(args, named, tmp_path: Path, capsys) -> None:
    before = set(tmp_path.iterdir())
    try:
        code = main(["audit-rewriter", *args])
    except SystemExit as stop:  # argparse's usage errors
        code = stop.code
    assert code == 2
    assert named in capsys.readouterr().err
    assert set(tmp_path.iterdir()) == before


def test_help_names_every_rewriter() -> None:
    """``audit-rewriter --help`` lists each rewriter of the catalogue (the help is static text)."""
    pytest.importorskip("torch")
    from dpaudit.cli.cmd_audit_rewriter import REWRITER_HELP
    from dpaudit.mechanisms.rewriters.catalogue import rewriter_names

    assert all(name in REWRITER_HELP for name in rewriter_names()), REWRITER_HELP


def test_dp_bart_black_box_on_the_tiny_bart(capsys) -> None:
    bart = ["dp-bart", "--epsilon", "10", *TINY, *PAIR, "--max-length", "4", "--black-box"]
    assert main(["audit-rewriter", *bart, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["kind"] == "rewriter" and data["detail"]["mode"] == "black-box"
    assert data["detail"]["text_claim"]["unit"] == "document"


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["dp-bart", "--epsilon", "1", *TINY], "--black-box"),
        (["dp-bart", "--epsilon", "1", *TINY, "--black-box", "--noise", "gaussian"], "--delta"),
        (["dp-bart", "--epsilon", "1", *TINY, "--black-box", "--state-clip", "0"], "--state-clip"),
        (["dp-bart", "--epsilon", "1", *TINY, "--black-box", "--clip", "-1", "1"], "--clip"),
        (["dp-prompt", "--epsilon", "1", *TINY, "--noise", "laplace"], "--noise"),
    ],
)
def test_dp_bart_options_are_checked_before_any_model_loads(args, named, monkeypatch, capsys):
    def no_model(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a model was loaded")

    monkeypatch.setattr("dpaudit.cli.cmd_audit_rewriter._load", no_model)
    assert main(["audit-rewriter", *args]) == 2
    assert named in capsys.readouterr().err


def test_dp_bart_noises_are_the_rewriters() -> None:
    from dpaudit.cli.cmd_audit_rewriter import BART_NOISES
    from dpaudit.mechanisms.rewriters.bart import NOISES

    assert BART_NOISES == NOISES


def test_a_default_white_box_run_is_sized_to_its_budget_and_says_what_it_can_see(capsys) -> None:
    import re

    base = ["audit-rewriter", "dp-prompt", "--epsilon", "10", "--model", "tiny",
            "--max-new-tokens", "3", *PAIR]  # fmt: skip
    assert main([*base, "--time-budget", "4"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    sizes = re.search(r"--samples (\d+) --final-samples (\d+)", first)
    assert first.startswith("audit-rewriter: sized to the 4 s budget (") and sizes
    assert min(int(sizes[1]), int(sizes[2])) >= 10
    # 3 tokens at ε = 10 each: no final stage of a 4 s audit can certify the 30 allowed
    assert "can certify the 30 the claim allows" in first and "exact losses" in first
    assert main([*base, "--time-budget", "4", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["kind"] == "rewriter"  # no sizing line


@pytest.mark.parametrize(
    "extra",
    [["--time-budget", "5", "--samples", "10"], ["--time-budget", "5", "--final-samples", "10"]],
)
def test_a_time_budget_beside_sizes_exits_2(extra, capsys) -> None:
    code = main(["audit-rewriter", "dp-prompt", "--epsilon", "1", "--model", "tiny", *extra])
    assert code == 2 and "--time-budget" in capsys.readouterr().err


def test_a_black_box_plan_spends_the_budget_only_where_it_can_refute(monkeypatch) -> None:
    """A fake clock: 0.01 s + 0.001 s per rewrite and document.  With 2 pairs and 100 s,
    about 44 900 rewrites per document fit: a per-document claim of 1 gets a quarter of them
    (at most 2 000) to choose sets and the rest (at most 50 000) to certify; a claim of
    100 (a per-token ε over long outputs) is out of reach of any of them, so the audit runs
    at the small sizes and says why."""
    from dpaudit.auditors.rewriter import sizing

    clock = [0.0]
    monkeypatch.setattr(sizing.time, "perf_counter", lambda: clock[0])

    def pilot(n: int) -> None:
        clock[0] += 0.01 + 0.001 * n

    pairs = [("a", "b", "one"), ("c", "d", "two")]
    refutable = sizing.plan_text_sizes(pilot, pairs, 100.0, 0.95, 2, allowed=1.0)
    assert refutable.certificate_decides and refutable.black_box
    assert refutable.samples == sizing.MAX_TEXT_TRAINING
    assert 40_000 <= refutable.final_samples <= sizing.MAX_TEXT_FINAL
    assert refutable.estimated_seconds <= 100.0
    # The pilot grew past its first sizes only while each took under 0.25 s.
    assert refutable.pilot_seconds == pytest.approx(
        sum(0.01 + 0.001 * n for n in (2, 6, 24, 96, 384)), rel=1e-9
    )
    out_of_reach = sizing.plan_text_sizes(pilot, pairs, 100.0, 0.95, 2, allowed=100.0)
    assert not out_of_reach.certificate_decides
    assert (out_of_reach.samples, out_of_reach.final_samples) == sizing.TEXT_SMALL_SIZES
    assert "inconclusive at any size that fits" in out_of_reach.describe()


def test_a_user_text_function_is_sized_to_its_budget_black_box(tmp_path, capsys, monkeypatch):
    (tmp_path / "fixedrw.py").write_text(
        "def rewrite(text, n, rng):\n    return ['a film' + text[-1] for _ in range(n)]\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    args = ["audit-rewriter", "fixedrw:rewrite", "--epsilon", "1", "--unit", "document",
            "--pair", "the film!", "the film.", "--time-budget", "2"]  # fmt: skip
    assert main(args) == 0
    first, _, verdict, *_ = capsys.readouterr().out.splitlines()
    assert first.startswith("audit-rewriter: sized to the 2 s budget (--samples ")
    assert "above the 1 the claim allows" in first
    assert verdict.startswith("verdict (confidence 0.95): violation")


def test_the_plan_spends_the_budget_where_it_changes_the_verdict(monkeypatch) -> None:
    """A pilot costing 0.05 s + 0.01 s per rewrite (a fake clock): 4 481 rewrites per
    document fit 90 % of 100 s over 2 pairs, less the pilot's 0.18 s, split by whether the
    final stage can certify what the claim allows."""
    from dpaudit.auditors.rewriter import sizing

    clock = [0.0]
    monkeypatch.setattr(sizing.time, "perf_counter", lambda: clock[0])

    def pilot(n: int) -> None:
        clock[0] += 0.05 + 0.01 * n

    pairs = [("a", "b", "one"), ("c", "d", "two")]
    certify = sizing.plan_rewriter_sizes(pilot, pairs, 100.0, 0.95, allowed=1.0)
    assert certify.certificate_decides and certify.ceiling > 1.0
    assert (certify.samples, certify.final_samples) == (200, 4200)
    assert certify.estimated_seconds <= 100.0
    exact = sizing.plan_rewriter_sizes(pilot, pairs, 100.0, 0.95, allowed=100.0)
    assert not exact.certificate_decides
    assert (exact.samples, exact.final_samples) == (3300, 1100)
    assert "the verdict rests on the exact losses" in exact.describe()
