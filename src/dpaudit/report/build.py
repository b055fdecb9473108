"""Write ``report.md`` and ``report.html`` for a run or audit directory (``dpaudit report DIR``)."""

from __future__ import annotations

from pathlib import Path

from dpaudit.io import atomic_write_text
from dpaudit.report.audit_report import is_audit_directory, write_audit_report
from dpaudit.report.collect import load_run
from dpaudit.report.html import render_html
from dpaudit.report.markdown import render_markdown
from dpaudit.rundir.layout import REPORT_HTML, REPORT_MD


def write_report(directory: str | Path) -> tuple[Path, Path]:
    """Render the run in ``directory`` and write both reports atomically; returns their paths.

    The report says "complete" only when ``run-status.json`` does and every
    figure it lists is on disk; otherwise it opens with an INCOMPLETE banner.
    A finished ``dpaudit audit --out`` directory gets the report of its one audit
    (:mod:`dpaudit.report.audit_report`), in the same HTML and Markdown.
    """
    if is_audit_directory(directory):
        return write_audit_report(directory)
    run = load_run(directory)
    root = Path(directory)
    md_path, html_path = root / REPORT_MD, root / REPORT_HTML
    atomic_write_text(md_path, render_markdown(run))
    atomic_write_text(html_path, render_html(run))
    return md_path, html_path
