"""The ``dp-training`` figure: claimed vs audited ε of the correct and each broken DP-SGD.

The tiny scale (seconds) checks the pipeline — every variant, both panels, the records,
the files — and proves nothing; the slow quick-scale test checks the findings the figure's
README states (Steinke, Nasr & Jagielski, NeurIPS 2023 one-run bound on planted flaws).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpaudit.engine.config import ExecutionConfig
from dpaudit.mechanisms.training.dpsgd import FLAWS
from dpaudit.reproduce import dp_training, registry
from dpaudit.reproduce.common import (
    INCONCLUSIVE,
    NOT_AT_THIS_SCALE,
    SHOWS,
    FigureResult,
    FigureRun,
    write_figure_outputs,
)
from dpaudit.rundir.layout import FIGURE_PNG, FIGURE_README, RESULTS_JSON
from dpaudit.rundir.records import load_figure_result
from dpaudit.serialization import dumps


def _run(scale: str, workers: int = 1) -> FigureResult:
    run = FigureRun(
        dp_training.NAME, dp_training.TITLE, dp_training.PAPER, scale, 0,
        execution=ExecutionConfig(workers=workers),
    )  # fmt: skip
    return dp_training.compute(run)


@pytest.fixture(scope="module")
def tiny() -> FigureResult:
    return _run("tiny")


def test_registered_after_whole_claims() -> None:
    names = registry.figure_names()
    assert names.index("dp-training") == names.index("whole-claims") + 1
    assert registry.get_figure("dp-training") is dp_training.FIGURE


def test_cells_are_unique_longest_first_and_cover_both_panels() -> None:
    cells, skipped = dp_training.cells("quick", 3)
    assert len(cells) == len(set(cells))
    assert cells[0].method == "multi-run"  # the longest unit starts first
    sizes = dp_training.SIZES["quick"]
    flaws = {c.flaw for c in cells if c.runs == 1 and c.canaries == sizes.canaries}
    assert flaws == set(FLAWS)
    assert {c.seed for c in cells if c.method == "one-run"} == {3, 4}
    assert {c.canaries for c in cells if c.flaw == "none"} >= set(sizes.sweep)
    assert {c.runs for c in cells if c.method == "multi-run" and c.background == "data"} == set(
        sizes.multi
    )
    crafted = [c for c in cells if c.background == "opposing"]
    assert {c.seed for c in crafted} == {3, 4} and cells[: len(crafted)] == crafted
    assert all((c.flaw, c.method, c.runs) == ("shuffle-as-poisson", "multi-run", sizes.crafted)
               for c in crafted)  # fmt: skip
    assert (skipped is None) == any(c.trainer == "opacus" for c in cells)


def test_opacus_row_says_why_it_was_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dp_training.importlib.util, "find_spec", lambda name: None)
    assert dp_training.opacus_missing() == "torch and opacus not installed (extra opacus)"
    cells, skipped = dp_training.cells("quick", 0)
    assert skipped and not any(c.trainer == "opacus" for c in cells)


def test_tiny_has_every_variant_both_panels_and_a_card_per_variant(tiny: FigureResult) -> None:
    variants = tiny.extra["variants"]
    assert list(variants) == [
        *("dpsgd " + f for f in FLAWS),
        dp_training.CRAFTED_LABEL,
        "opacus (correct)",
    ]
    assert "skipped" in variants["opacus (correct)"]
    panels = {p for r in tiny.rows for p in r["panel"].split()}
    assert panels == {"A", "B-canaries", "B-runs", "B-multi-run"}
    for r in tiny.rows:
        if r.get("verdict") != "skipped":
            assert r["epsilon_lower_bound"] <= r["ceiling"] + 1e-9, r
    # A card per panel-A variant (first seed; the crafted background's too) and one for the
    # largest multi-run audit.
    assert len(tiny.audits) == len(FLAWS) + 2
    assert all(a.audit is not None and a.card_lines for a in tiny.audits)
    assert tiny.findings[-1].status == NOT_AT_THIS_SCALE  # Opacus is not run at tiny


def test_tiny_writes_files_that_read_back_byte_for_byte(tiny: FigureResult, tmp_path: Path) -> None:
    write_figure_outputs(tiny, tmp_path, dp_training.plot, dp_training.readme)
    assert (tmp_path / FIGURE_PNG).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = (tmp_path / FIGURE_README).read_text()
    assert "never shows privacy" in text and "What each bound assumes" in text
    back = load_figure_result(tmp_path / RESULTS_JSON)
    assert dumps(back) + "\n" == (tmp_path / RESULTS_JSON).read_text()
    assert json.loads((tmp_path / RESULTS_JSON).read_text())["figure"] == "dp-training"


@pytest.mark.slow  # the quick scale: about 45 s on 2 cores
def test_quick_scale_flags_the_visible_flaws_and_not_the_correct_trainer() -> None:
    result = _run("quick", workers=2)
    variants = result.extra["variants"]
    good = variants["dpsgd none"]
    assert good["flagged"] == 0 and good["max"] < good["claimed_epsilon"]
    for flaw in dp_training.VISIBLE:
        x = variants[f"dpsgd {flaw}"]
        assert x["flagged"] == x["seeds"] == 2, flaw
        assert x["min"] <= x["median"] <= x["max"]
    by_statement = {f.statement: f.status for f in result.findings}
    shuffle = next(s for k, s in by_statement.items() if k.startswith("shuffle-as-poisson ("))
    assert shuffle in (SHOWS, INCONCLUSIVE)
    # seeds 0 and 1 of benchmarks/results/crafted_background.json, the same audits
    crafted = variants[dp_training.CRAFTED_LABEL]
    assert crafted["flagged"] == crafted["seeds"] == 2
    assert by_statement[next(k for k in by_statement if "crafted background" in k)] == SHOWS
    assert all(
        s == SHOWS for k, s in by_statement.items() if not k.startswith(("shuffle", "Opacus"))
    )
