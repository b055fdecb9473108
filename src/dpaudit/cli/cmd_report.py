"""``dpaudit report DIR``: write DIR/report.html (self-contained) and DIR/report.md.

DIR is a run directory of ``dpaudit reproduce`` (the claims found false first, then
the reproduction scorecard and every figure) or of ``dpaudit audit --out`` (the
verdict, the witness and its picture, the pairs tried and the power).
"""

from __future__ import annotations

import argparse
from typing import Any

from dpaudit.cli.common import add_json, emit
from dpaudit.cli.main import command_help


def register(sub: Any) -> None:
    """Add the ``report`` sub-command."""
    p = sub.add_parser(
        "report",
        help=command_help("report"),
        description=__doc__,
    )
    p.add_argument(
        "directory",
        metavar="DIR",
        help="directory written by `dpaudit reproduce` or `dpaudit audit --out`",
    )
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Render and write both reports; print where they are."""
    from dpaudit.report.audit_report import is_audit_directory, load_audit
    from dpaudit.report.build import write_report
    from dpaudit.report.collect import load_run

    md_path, html_path = write_report(args.directory)
    if is_audit_directory(args.directory):
        result, _ = load_audit(args.directory)
        audit = {
            "report_html": str(html_path),
            "report_markdown": str(md_path),
            "verdict": result["verdict"],
            "verdict_text": result.get("verdict_text", ""),
        }
        emit(
            args,
            audit,
            lambda p: f"{p['verdict_text']}\n{p['report_html']}\n{p['report_markdown']}",
        )
        return 0
    run_contents = load_run(args.directory)
    payload = {
        "report_html": str(html_path),
        "report_markdown": str(md_path),
        "complete": run_contents.complete,
        "figures": [f.name for f in run_contents.figures],
        "audits": len(run_contents.audits()),
    }

    def render(p: dict[str, Any]) -> str:
        state = "complete run" if p["complete"] else "INCOMPLETE run"
        return (
            f"{state}: {len(p['figures'])} figure(s), {p['audits']} audit(s)\n"
            f"{p['report_html']}\n{p['report_markdown']}"
        )

    emit(args, payload, render)
    return 0
