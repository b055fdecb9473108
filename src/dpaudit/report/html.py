"""The run report as one self-contained HTML file (``DIR/report.html``).

Self-contained means: CSS inline in a ``<style>`` element, every figure
embedded as a ``data:image/png;base64`` URI, no scripts, no fonts, no links to
anything outside the file — a reviewer can open it offline or mail it on.
Every piece of text passes through :func:`html.escape`, so corpus sentences or
user-supplied names can never inject markup.
"""

from __future__ import annotations

import base64
import html

from dpaudit.report import content
from dpaudit.report.collect import FigureEntry, RunContents
from dpaudit.verdicts import Verdict

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       max-width: 1100px; margin: 2em auto; padding: 0 1em; color: #1d1d1f;
       line-height: 1.45; background: #fff; }
h1 { border-bottom: 2px solid #333; padding-bottom: .2em; }
h2 { margin-top: 2em; border-bottom: 1px solid #bbb; }
.status { padding: .8em 1em; border-radius: 6px; font-weight: 600; }
.status.complete { background: #e7f5e9; border: 1px solid #3c8d4a; }
.status.incomplete { background: #fdecea; border: 2px solid #c0392b; color: #7b1d12; }
table { border-collapse: collapse; margin: .8em 0; font-size: .88em; }
th, td { border: 1px solid #ccc; padding: .25em .55em; text-align: left; vertical-align: top; }
th { background: #f0f0f3; }
tr:nth-child(even) td { background: #fafafa; }
td.violation { color: #b00020; font-weight: 700; }
td.pass { color: #2e7d32; }
.audit { border-left: 4px solid #999; padding: .2em 1em; margin: 1em 0; background: #fafafa; }
.audit.violation { border-left-color: #b00020; }
.audit dt { font-weight: 600; }
.audit dd { margin: 0 0 .4em 1.2em; word-break: break-word; }
.audit dd ul { margin: .2em 0; padding-left: 1.2em; }
figure { margin: 1em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #ddd; }
.ok { color: #2e7d32; } .bad { color: #b00020; font-weight: 700; }
.note { color: #555; font-size: .92em; border-left: 3px solid #ccc; padding-left: .8em; }
.facts { color: #555; font-size: .85em; }
details summary { cursor: pointer; }
"""


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _table(table: content.Table, verdict_column: int | None = None) -> str:
    head = "".join(f"<th>{_esc(h)}</th>" for h in table.headers)
    body = []
    for row in table.rows:
        cells = []
        for i, cell in enumerate(row):
            cls = ""
            if i == verdict_column:
                cls = ' class="violation"' if cell == Verdict.VIOLATION.label else ' class="pass"'
            cells.append(f"<td{cls}>{_esc(cell)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def render_html(run: RunContents) -> str:
    """The whole report as one self-contained HTML document."""
    complete, status = content.status_line(run)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>dpaudit report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>dpaudit report</h1>",
        f'<p class="status {"complete" if complete else "incomplete"}">'
        f"{'' if complete else '⚠ '}{_esc(status)}</p>",
        "<p>Every ε lower bound below is one-sided: it can show that a mechanism violates "
        "its claim (ε ≥ bound with the stated confidence); it never proves a mechanism "
        "private.</p>",
        "<h2>Audited mechanisms</h2>",
    ]
    summary = content.audit_summary_table(run)
    if summary.rows:
        parts.append(_table(summary, verdict_column=len(summary.headers) - 1))
    else:
        parts.append("<p>No mechanism was audited in this run.</p>")
    for figure, audit in run.audits():
        violation = bool(audit.get("violation"))
        heading = (
            f"{audit.get('mechanism', '?')} ({content.params_text(audit.get('parameters', {}))})"
        )
        items = "".join(
            f"<dt>{_esc(label)}</dt><dd>{_esc(text)}</dd>"
            for label, text in content.audit_details(audit)
        )
        witness = content.witness_items(audit.get("witness", {}))
        listed = "".join(f"<li><b>{_esc(k)}:</b> {_esc(v)}</li>" for k, v in witness)
        items += f"<dt>witness</dt><dd>{f'<ul>{listed}</ul>' if witness else '—'}</dd>"
        parts.append(
            f'<div class="audit{" violation" if violation else ""}">'
            f"<h3>{_esc(heading)} <small>— {_esc(figure)}</small></h3><dl>{items}</dl></div>"
        )
    parts.append("<h2>Reproduced figures</h2>")
    for entry in run.figures:
        parts.append(_figure_section(entry))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _figure_section(entry: FigureEntry) -> str:
    result = entry.result
    out = [
        f'<section id="{_esc(entry.name)}">',
        f"<h3>{_esc(entry.title)}</h3>",
        f"<p><em>{_esc(result.get('paper', ''))}</em> — <code>{_esc(entry.name)}</code></p>",
    ]
    if entry.png is not None:
        data = base64.b64encode(entry.png).decode("ascii")
        out.append(
            f'<figure><img alt="{_esc(entry.title)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{_esc(entry.title)}</figcaption></figure>"
        )
    found = content.findings(result)
    if found:
        items = "".join(
            f'<li><span class="{"ok" if ok else "bad"}">{"✓" if ok else "✗"}</span> '
            f"{_esc(text)}</li>"
            for ok, text in found
        )
        out.append(f"<p>Findings of the paper in this run:</p><ul>{items}</ul>")
    table = content.comparison_table(result)
    if table is not None:
        out.append(
            f"<details><summary>Paper beside ours ({len(table.rows)} rows)</summary>"
            f"{_table(table)}</details>"
        )
    for note in result.get("notes", []):
        out.append(f'<p class="note">{_esc(note)}</p>')
    out.append(f'<p class="facts">Run: {_esc(content.run_facts(result))}</p>')
    out.append("</section>")
    return "\n".join(out)
