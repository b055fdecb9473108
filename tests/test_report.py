"""The report renderers on hand-made run directories (no computation involved)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpaudit.errors import InvalidArgumentError
from dpaudit.report.build import write_report
from dpaudit.report.collect import as_float, fmt, load_run
from dpaudit.report.content import audit_labels
from dpaudit.report.html import render_html
from dpaudit.report.markdown import render_markdown
from dpaudit.rundir.layout import FIGURE_PNG, FIGURE_README, FIGURE_SVG, RESULTS_JSON, RUN_STATUS
from dpaudit.rundir.records import AuditRecord
from dpaudit.verdicts import Verdict

EVIL = '<img src=x onerror="alert(1)"> | & "text"'


def _figure(directory: Path, name: str, **extra: object) -> None:
    (directory / name).mkdir(parents=True)
    result = {
        "figure": name,
        "title": f"Title of {name}",
        "paper": "Some paper",
        "scale": "quick",
        "seed": 0,
        "parameters": {},
        "sample_counts": {},
        "timings": {"total_s": 1.5},
        "versions": {"python": "3.11"},
        "rows": [],
        "findings": [{"statement": "finding", "holds": True, "detail": EVIL}],
        "comparison": [{"quantity": "q", "paper": "inf", "ours": 1.25}],
        "audits": [
            {
                "mechanism": "ome",
                "parameters": {"lambda": 10.0, "dim": 1, "sensitivity": None},
                "claim": "1-DP on [-10, 10]^1",
                "claimed_epsilon": 1.0,
                "true_epsilon": "inf",
                "truth_method": "support argument",
                "epsilon_lower_bound": 7.5,
                "confidence": 0.95,
                "method": "black-box audit",
                "violation": True,
                "verdict": "violation: ε ≥ 7.5 > claimed 1 at confidence 0.95",
                "witness": {"x": [0.0], "sentence": EVIL, "counts": [[1, 2], [3, 4]]},
            }
        ],
        "notes": [EVIL],
        **extra,
    }
    (directory / name / RESULTS_JSON).write_text(json.dumps(result))


def _status(directory: Path, status: str, figures: list[str]) -> None:
    record = {"status": status, "config": {"figures": figures, "scale": "quick", "seed": 0}}
    (directory / RUN_STATUS).write_text(json.dumps(record))


def test_complete_run_renders_audits_findings_and_tables(tmp_path: Path) -> None:
    _figure(tmp_path, "fig-a")
    _status(tmp_path, "complete", ["fig-a"])
    run = load_run(tmp_path)
    assert run.complete and run.missing_figures == []
    page = render_html(run)
    md = render_markdown(run)
    for text in (page, md):
        assert "Complete run" in text and "INCOMPLETE" not in text
        assert "Title of fig-a" in text
        assert "VIOLATION" in text
        assert "support argument" in text and "black-box audit" in text
        assert "sensitivity=" not in text  # unset parameters are left out
    assert "∞" in page
    assert "lambda=10" in md


def test_every_text_is_escaped(tmp_path: Path) -> None:
    _figure(tmp_path, "fig-a")
    _status(tmp_path, "complete", ["fig-a"])
    run = load_run(tmp_path)
    page = render_html(run)
    assert "<img" not in page and 'onerror="' not in page
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in page
    md = render_markdown(run)
    assert "<img" not in md and "\\|" in md  # pipes cannot break a Markdown table


def test_missing_figure_marks_the_run_incomplete(tmp_path: Path) -> None:
    _figure(tmp_path, "fig-a")
    _status(tmp_path, "complete", ["fig-a", "fig-b"])
    run = load_run(tmp_path)
    assert not run.complete and run.missing_figures == ["fig-b"]
    md, page = render_markdown(run), render_html(run)
    assert "Missing figures: fig-b" in md
    assert 'class="status-bad"' in page and 'class="status-ok"' not in page
    for text in (md, page):
        # The status file says "complete", the report must not repeat it.
        assert "INCOMPLETE RUN" in text
        assert "status: complete" not in text and "Complete run" not in text


@pytest.mark.parametrize("status", ["running", "failed", "interrupted"])
def test_unfinished_status_is_incomplete(tmp_path: Path, status: str) -> None:
    _figure(tmp_path, "fig-a")
    _status(tmp_path, status, ["fig-a"])
    md_path, html_path = write_report(tmp_path)
    assert f"INCOMPLETE RUN (status: {status})" in md_path.read_text()
    assert "INCOMPLETE RUN" in html_path.read_text()


def test_no_status_file_is_incomplete(tmp_path: Path) -> None:
    _figure(tmp_path, "fig-a")
    assert "INCOMPLETE RUN (status: unknown" in render_markdown(load_run(tmp_path))


def test_directory_without_results_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentError, match="no results"):
        load_run(tmp_path)
    with pytest.raises(InvalidArgumentError, match="existing run directory"):
        load_run(tmp_path / "missing")


def test_number_formatting() -> None:
    assert fmt("inf") == "∞" and fmt("-inf") == "-∞" and fmt(None) == "—"
    assert fmt(0.123456789) == "0.1235" and fmt(2) == "2"
    assert as_float("nan") != as_float("nan")  # NaN


def _sections_in_order(page: str, *markers: str) -> list[int]:
    positions = [page.index(m) for m in markers]
    assert positions == sorted(positions), list(zip(markers, positions, strict=True))
    return positions


def test_summary_then_figures_then_witnesses(tmp_path: Path) -> None:
    _figure(
        tmp_path,
        "fig-a",
        shows="The figure shows **one thing**.",
        method="Made with `care`.",
        differences="- differs because *reasons*\n- and more",
        findings=[
            {"statement": "it rises", "holds": True, "detail": "0.9 (cell n = 8)", "paper": "1.0"},
            {"statement": "it falls", "holds": False, "detail": "0.1", "paper": "0.0"},
        ],
    )
    (tmp_path / "fig-a" / FIGURE_PNG).write_bytes(b"\x89PNG\r\n\x1a\nfake")
    (tmp_path / "fig-a" / FIGURE_SVG).write_text("<svg/>")
    _status(tmp_path, "complete", ["fig-a"])
    page = render_html(load_run(tmp_path))
    _sections_in_order(
        page, 'id="summary"', "it rises", 'id="fig-a"', "<img", "What this shows",
        "Where and why this differs", 'id="witnesses"', "witness: sentence",
    )  # fmt: skip
    # Findings: the paper's number beside ours, and a finding that does not show says so.
    assert "<td>1.0</td><td>0.9 (cell n = 8)</td>" in page
    assert "1 of 2 findings reproduced" in page and "◇ not reproduced" in page
    # The figure's words are in the HTML, with dpaudit's Markdown rendered.
    assert "<b>one thing</b>" in page and "<code>care</code>" in page
    assert "<li>differs because <em>reasons</em></li>" in page
    # The image links to its full-size files beside the report.
    assert '<a href="fig-a/figure.svg" title="open full size"><img' in page
    assert '<a href="fig-a/figure.png">PNG</a>' in page


def test_figure_text_falls_back_to_the_readme(tmp_path: Path) -> None:
    """A results.json without words (older dpaudit) still gets them, from its README."""
    _figure(tmp_path, "fig-a")
    (tmp_path / "fig-a" / FIGURE_README).write_text(
        "# Title\n\nReproduces Some paper.\n\nHow it was done, in words.\n\n"
        "![figure](figure.png)\n\n## Findings\n\n- x\n\n"
        "## Where and why this differs from the paper\n\n- one **reason**\n\n## Run\n\n- a"
    )
    _status(tmp_path, "complete", ["fig-a"])
    page = render_html(load_run(tmp_path))
    assert "How it was done, in words." in page
    assert "<li>one <b>reason</b></li>" in page


def test_figure_text_from_a_readme_laid_out_by_readme_page(tmp_path: Path) -> None:
    """A figure that passes its words to readme_page only (not to its result) still shows them."""
    from dpaudit.reproduce.common import FigureRun, readme_page

    result = FigureRun("fig-a", "T", "P", "tiny", 0).result(
        parameters={}, sample_counts={}, rows=()
    )
    _figure(tmp_path, "fig-a")
    (tmp_path / "fig-a" / FIGURE_README).write_text(
        readme_page(result, "Made *so*.", ["## Extra\n\nx"], "- because **this**")
    )
    _status(tmp_path, "complete", ["fig-a"])
    page = render_html(load_run(tmp_path))
    assert "<p>Made <em>so</em>.</p>" in page.replace(' class="p"', "")
    assert "<li>because <b>this</b></li>" in page


def test_audits_are_titled_by_what_distinguishes_them() -> None:
    def audit(eps: float, lam: float, method: str, policy: str | None = None) -> AuditRecord:
        params = {"epsilon": eps, "lambda": lam, "dim": 1, "nan_policy": policy}
        return AuditRecord("ome", params, None, None, method, row_claim="claim",
                           row_claimed_epsilon=eps, row_epsilon_lower_bound=0.0,
                           row_confidence=0.95, row_verdict=Verdict.NO_VIOLATION_FOUND,
                           row_verdict_text="no violation found")  # fmt: skip

    audits = [
        audit(1.0, 10.0, "black-box audit, DP-Sniper mode (c = 0.01, logistic)"),
        audit(1.0, 10.0, "black-box audit, dpaudit mode (exact likelihood ratio)"),
        audit(0.001, 100.0, "black-box audit, dpaudit mode (exact likelihood ratio)", "zero"),
    ]
    assert audit_labels(audits) == [
        "ε = 1, λ = 10, DP-Sniper mode",
        "ε = 1, λ = 10, dpaudit mode",
        "ε = 0.001, λ = 100, nan_policy = zero, dpaudit mode",
    ]
    assert audit_labels(audits[1:2]) == ["ε = 1"]  # nothing else to tell apart


def test_markdown_blocks_escape_before_formatting(tmp_path: Path) -> None:
    _figure(tmp_path, "fig-a", shows="a <b>tag</b> and **bold** [link](https://x.invalid/)")
    _status(tmp_path, "complete", ["fig-a"])
    page = render_html(load_run(tmp_path))
    assert "&lt;b&gt;tag&lt;/b&gt; and <b>bold</b>" in page
    assert 'href="https://' not in page  # only anchors and files beside the report link


def test_untestable_and_inconclusive_findings_never_get_a_tick(tmp_path: Path) -> None:
    inconclusive_audit = {
        "mechanism": "cmp", "parameters": {}, "claim": "metric DP", "claimed_epsilon": 5.0,
        "true_epsilon": None, "truth_method": None, "epsilon_lower_bound": 1.1,
        "confidence": 0.95, "method": "pair audit", "violation": False,
        "verdict": "inconclusive: no violation found, but 2 of 3 pairs need more samples",
        "witness": {},
    }  # fmt: skip
    _figure(
        tmp_path,
        "fig-a",
        scope="**Audited: dpaudit's own code**; skipped `syntf`: only in mldp-text.",
        findings=[
            {
                "statement": "A violates",
                "holds": False,
                "detail": "A not audited",
                "status": "not shown at this scale",
            },
            {
                "statement": "B: none found",
                "holds": False,
                "detail": "2 inconclusive",
                "status": "inconclusive",
            },
            {"statement": "C rises", "holds": True, "detail": "0.9"},
        ],
        audits=[inconclusive_audit],
    )
    _status(tmp_path, "complete", ["fig-a"])
    run = load_run(tmp_path)
    page, md = render_html(run), render_markdown(run)
    for text in (page, md):
        assert "1 of 3 findings reproduced; 1 not shown at this scale, 1 inconclusive" in text
        assert "– not tested at this scale" in text and "? inconclusive" in text
        assert "What was audited at scale" in text and "quick" in text
        assert "none found" not in text.replace("B: none found", "")  # inconclusive stays so
    assert page.count("◆ reproduced") == 1
    assert '<td class="mark-open">– not tested at this scale</td>' in page
    assert '<td class="mark-open">? inconclusive</td>' in page  # the audit's verdict column
    assert "<b>Audited: dpaudit&#x27;s own code</b>" in page
    assert "1 are inconclusive (not a pass)" in page


def test_witness_cards_are_folded_details(tmp_path: Path) -> None:
    _figure(tmp_path, "fig-a")
    _status(tmp_path, "complete", ["fig-a"])
    page = render_html(load_run(tmp_path))
    assert '<details class="witness violation" id="fig-a-w0"><summary>' in page
    assert "<details open" not in page and "<script" not in page
