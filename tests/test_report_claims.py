"""The report answers first: the claims found false, those that held, the inconclusive ones."""

from __future__ import annotations

import json
import re
from pathlib import Path

from dpaudit.report.claims import claims_blocks
from dpaudit.report.collect import load_run
from dpaudit.report.content import Heading, Table
from dpaudit.report.html import render_html
from dpaudit.report.markdown import render_markdown
from dpaudit.rundir.layout import RESULTS_JSON, RUN_STATUS


def _audit(mechanism: str, claimed: float, bound: float, verdict: str, **extra: object) -> dict:
    text = {
        "violation": f"violation: ε ≥ {bound} > claimed {claimed}",
        "no violation found": "no violation found",
        "inconclusive": "inconclusive: too few",
    }
    return {
        "mechanism": mechanism, "parameters": {"epsilon": claimed}, "claim": f"{claimed}-DP",
        "claimed_epsilon": claimed, "true_epsilon": None, "truth_method": None,
        "epsilon_lower_bound": bound, "confidence": 0.95, "method": "black-box audit",
        "violation": verdict == "violation", "verdict": verdict,
        "verdict_text": text[verdict], "witness": None, "witness_lines": {}, **extra,
    }  # fmt: skip


def _run(directory: Path, figures: dict[str, list[dict]]) -> Path:
    for name, audits in figures.items():
        (directory / name).mkdir(parents=True)
        result = {
            "figure": name, "title": f"Title of {name}", "paper": "Some paper, Fig. 1",
            "scale": "quick", "seed": 0, "parameters": {}, "sample_counts": {},
            "timings": {}, "versions": {}, "rows": [], "audits": audits,
            "findings": [{"statement": "Laplace never flagged", "holds": True}],
        }  # fmt: skip
        (directory / name / RESULTS_JSON).write_text(json.dumps(result))
    status = {
        "status": "complete",
        "config": {"figures": list(figures), "scale": "quick", "seed": 0},
    }
    (directory / RUN_STATUS).write_text(json.dumps(status))
    return directory


def _first_table(run_dir: Path) -> Table:
    blocks = claims_blocks(load_run(run_dir))
    assert isinstance(blocks[0], Heading) and blocks[0].anchor == "violations"
    return next(b for b in blocks if isinstance(b, Table))


def test_first_section_lists_exactly_the_violations_of_the_results(tmp_path: Path) -> None:
    held = _audit("laplace", 1.0, 0.4, "no violation found")
    unsure = _audit("cmp", 5.0, 1.3, "inconclusive")
    _run(tmp_path, {
        "fig-a": [_audit("ome", 1.0, 6.9, "violation"), held],
        "fig-b": [unsure, _audit("identity", 0.5, 7.8, "violation")],
    })  # fmt: skip
    expected = []
    for path in sorted(tmp_path.glob(f"*/{RESULTS_JSON}")):
        data = json.loads(path.read_text())
        expected += [(a["mechanism"], a["claim"]) for a in data["audits"] if a["violation"]]
    table = _first_table(tmp_path)
    listed = [(row[1].split(",")[0], row[2]) for row in table.rows]
    assert listed == expected == [("ome", "1.0-DP"), ("identity", "0.5-DP")]
    assert table.headers[3:6] == ("certified bound", "confidence", "witness")
    page, md = render_html(load_run(tmp_path)), render_markdown(load_run(tmp_path))
    for text in (page, md):
        # The claims come first, the reproduction scorecard only after them.
        order = [
            text.index(m)
            for m in (
                "Claims found false",
                "Claims that held",
                "Inconclusive claims",
                "Reproduction scorecard",
            )
        ]
        assert order == sorted(order)
        assert "✓" not in text  # no tick anywhere, least of all beside a pass
    assert '<td class="mark-repro">◆ reproduced</td>' in page  # the paper's finding, in blue
    assert '<td class="mark-bad">✗ VIOLATION</td>' in page  # the audit's violation, in red
    assert 'href="#fig-a-w0">witness</a>' in page and 'id="fig-a-w0"' in page


def test_no_negative_number_is_printed_as_a_bound(tmp_path: Path) -> None:
    card = {"certified": "x = 'a', x' = 'b'; S = {y}: ε ≥ -0.7565 at confidence 0.95"}
    _run(tmp_path, {"fig-a": [_audit("dp-prompt", 10.0, -0.3172, "no violation found",
                                     witness_lines=card)]})  # fmt: skip
    run = load_run(tmp_path)
    for text in (render_html(run), render_markdown(run)):
        assert not re.search(r"[-−]0\.3172|[-−]0\.7565", text)
        assert "none (≤ 0)" in text and "ε ≥ 0 (nothing certified)" in text


def test_an_infinite_exact_loss_prints_as_infinite_exact(tmp_path: Path) -> None:
    exact = _audit("llmdp-dp-prompt", 100.0, 0.9854, "violation")
    exact["verdict_text"] = (
        "white box (exact): violation, largest loss of one token ∞; certified: no"
    )
    exact["witness_lines"] = {"pair": "length: last word dropped", "worst token": "'if' (loss ∞)"}
    support = _audit("identity", 0.5, 7.8, "violation", true_epsilon="inf",
                     truth_method="support argument: M(x) = x")  # fmt: skip
    _run(tmp_path, {"fig-a": [exact, support]})
    table = _first_table(tmp_path)
    assert table.rows[0][3].startswith("∞ exact (white box (exact): violation")
    assert table.rows[0][4] == "exact (no sampling)"
    assert "'if' (loss ∞)" in table.rows[0][5]
    assert "0.9854" not in " ".join(table.rows[0])  # not "VIOLATION beside ε ≥ 0.98 for 100"
    assert table.rows[1][3] == "ε_lcb = 7.8; exact ε = ∞ (support argument: M(x) = x)"
    assert "∞ exact" in render_markdown(load_run(tmp_path))


def test_the_whole_claims_figures_refuted_curve_leads_the_report(tmp_path: Path) -> None:
    """The μ-GDP audits are listed in the claims' own terms (μ_lcb), never as 'ε = nan'."""
    from dpaudit.reproduce.runner import reproduce

    reproduce("whole-claims", tmp_path, scale="tiny", seed=0)
    data = json.loads((tmp_path / "whole-claims" / RESULTS_JSON).read_text())
    broken = [a["mechanism"] for a in data["audits"] if a["violation"]]
    assert broken == ["Gaussian, broken σ"]
    table = _first_table(tmp_path)
    assert [row[1].split(",")[:2] for row in table.rows] == [["Gaussian", " broken σ"]]
    assert table.rows[0][3].startswith("μ_lcb = ")
    md = render_markdown(load_run(tmp_path))
    assert not re.search(r"\bnan\b", md, re.IGNORECASE)
