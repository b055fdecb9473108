"""The run report as Markdown (``DIR/report.md``); figures are linked by relative path.

Text that may come from a corpus or a user is escaped (``<``, ``>``, ``&`` and
table pipes) so that a Markdown viewer never renders it as HTML.
"""

from __future__ import annotations

import html

from dpaudit.report import content
from dpaudit.report.collect import FIGURE_PNG, RunContents


def _esc(text: str) -> str:
    return html.escape(text, quote=False).replace("|", "\\|").replace("\n", " ")


def _table(table: content.Table) -> list[str]:
    lines = [
        "| " + " | ".join(_esc(h) for h in table.headers) + " |",
        "|" + "---|" * len(table.headers),
    ]
    lines += ["| " + " | ".join(_esc(c) for c in row) + " |" for row in table.rows]
    return lines


def render_markdown(run: RunContents) -> str:
    """The whole report as one Markdown document."""
    complete, status = content.status_line(run)
    lines = ["# dpaudit report", ""]
    lines += [f"**{_esc(status)}**" if complete else f"> **⚠ {_esc(status)}**", ""]
    lines += [
        "Every ε lower bound below is one-sided: it can show that a mechanism "
        "violates its claim (ε ≥ bound with the stated confidence); "
        "it never proves a mechanism private.",
        "",
        "## Audited mechanisms",
        "",
    ]
    summary = content.audit_summary_table(run)
    lines += _table(summary) if summary.rows else ["No mechanism was audited in this run."]
    lines.append("")
    for figure, audit in run.audits():
        heading = (
            f"{audit.get('mechanism', '?')} ({content.params_text(audit.get('parameters', {}))})"
        )
        lines += [f"### {_esc(heading)} — {_esc(figure)}", ""]
        lines += [f"- **{label}:** {_esc(text)}" for label, text in content.audit_details(audit)]
        witness = content.witness_items(audit.get("witness", {}))
        lines.append("- **witness:**" + ("" if witness else " —"))
        lines += [f"  - {_esc(key)}: {_esc(text)}" for key, text in witness]
        lines.append("")
    lines += ["## Reproduced figures", ""]
    for entry in run.figures:
        result = entry.result
        lines += [f"### {_esc(entry.title)}", ""]
        lines += [f"*{_esc(str(result.get('paper', '')))}* — `{entry.name}`", ""]
        if entry.png is not None:
            lines += [f"![{_esc(entry.title)}]({entry.name}/{FIGURE_PNG})", ""]
        found = content.findings(result)
        if found:
            lines += ["Findings of the paper in this run:", ""]
            lines += [f"- {'✓' if ok else '✗'} {_esc(text)}" for ok, text in found]
            lines.append("")
        table = content.comparison_table(result)
        if table is not None:
            lines += ["Paper beside ours:", "", *_table(table), ""]
        for note in result.get("notes", []):
            lines += [f"> {_esc(str(note))}", ""]
        lines += [
            f"Run: {_esc(content.run_facts(result))}. Details: [{entry.name}/README.md]"
            f"({entry.name}/README.md).",
            "",
        ]
    return "\n".join(lines).rstrip("\n") + "\n"
