"""The report renderers on hand-made run directories (no computation involved)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpaudit.errors import InvalidArgumentError
from dpaudit.report.build import write_report
from dpaudit.report.collect import as_float, fmt, load_run
from dpaudit.report.html import render_html
from dpaudit.report.markdown import render_markdown

EVIL = '<img src=x onerror="alert(1)"> | & "text"'


def _figure(directory: Path, name: str, **extra: object) -> None:
    (directory / name).mkdir(parents=True)
    result = {
        "figure": name,
        "title": f"Title of {name}",
        "paper": "Some paper",
        "scale": "quick",
        "seed": 0,
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
    (directory / name / "results.json").write_text(json.dumps(result))


def _status(directory: Path, status: str, figures: list[str]) -> None:
    record = {"status": status, "config": {"figures": figures, "scale": "quick", "seed": 0}}
    (directory / "run-status.json").write_text(json.dumps(record))


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
    assert "<td>ome</td>" in page and "∞" in page
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
    assert "Missing figures: fig-b" in render_markdown(run)
    assert 'class="status incomplete"' in render_html(run)


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
