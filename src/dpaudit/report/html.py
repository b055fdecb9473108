"""The run report as one self-contained HTML file (``DIR/report.html``).

Self-contained means: CSS inline in a ``<style>`` element, every figure
embedded as a ``data:image/png;base64`` URI, no scripts, no fonts, nothing
fetched from outside the file — a reviewer can open it offline or mail it on.
The only links are relative ones to the full-size figure files beside the
report (``<figure>/figure.svg`` …) and anchors inside the page.  Every piece
of text passes through :func:`html.escape` first, so corpus sentences or
user-supplied names can never inject markup; dpaudit's own inline Markdown is
turned into ``<b>``, ``<em>``, ``<code>`` and anchor links after escaping.
"""

from __future__ import annotations

import base64
import html
import re

from dpaudit.report import blocks as content
from dpaudit.report.collect import RunContents
from dpaudit.report.content import INCONCLUSIVE_MARK, SHOWS, VIOLATION_MARK
from dpaudit.report.document import build_document

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       max-width: 1100px; margin: 1.2em auto; padding: 0 1em; color: #1d1d1f;
       line-height: 1.45; background: #fff; }
h1 { font-size: 1.7em; border-bottom: 2px solid #333; padding-bottom: .1em; margin: 0 0 .4em; }
h2 { font-size: 1.35em; margin-top: 1.8em; border-bottom: 1px solid #bbb; }
section.claims h2 { margin-top: .8em; }
section.summary p, section.claims p { margin: .4em 0; }
h3 { margin: 1.2em 0 .4em; }
h4 { margin: 1em 0 .3em; }
.status-ok, .status-bad { padding: .35em .8em; border-radius: 6px; font-weight: 600;
                          margin: .3em 0; }
.status-ok { background: #e7f5e9; border: 1px solid #3c8d4a; }
.status-bad { background: #fdecea; border: 2px solid #c0392b; color: #7b1d12; }
table { border-collapse: collapse; margin: .5em 0 .8em; font-size: .86em; }
th, td { border: 1px solid #ccc; padding: .2em .5em; text-align: left; vertical-align: top; }
th { background: #f0f0f3; }
tr.group th { background: #e4e8f0; text-align: left; font-weight: 500; }
table.wide { font-size: .8em; }
table.wide td:first-child { white-space: nowrap; }
table.findings { width: 100%; font-size: .84em; }
table.findings td:nth-child(1) { width: 36%; }
table.findings td:nth-child(2) { width: 14%; }
tr.group th a { color: inherit; }
table.claims { width: 100%; font-size: .84em; }
table.claims td:nth-child(1) { width: 13%; }
table.claims td:nth-child(2) { width: 17%; }
table.claims td:nth-child(3) { width: 17%; }
table.claims td:nth-child(4) { white-space: nowrap; }
table.violations td:nth-child(3) { white-space: normal; font-weight: 600; color: #b00020; }
table.claims td:nth-child(5) { word-break: break-word; }
td.mark-repro { color: #1f4e9a; white-space: nowrap; }
td.mark-bad { color: #b00020; font-weight: 700; white-space: nowrap; }
td.mark-open { color: #8a5a00; }
td.mark-none { color: #555; }
caption { caption-side: bottom; text-align: left; color: #555; font-size: .92em;
          padding-top: .3em; }
figure { margin: .8em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #ddd; }
figcaption { color: #555; font-size: .88em; }
.links { font-size: .88em; color: #555; }
.links a { margin-right: .6em; }
.note { color: #444; font-size: .92em; border-left: 3px solid #ccc; padding-left: .8em; }
.facts { color: #666; font-size: .82em; }
.witness { border-left: 4px solid #999; padding: .1em 1em; margin: .25em 0; background: #fafafa; }
.witness.violation { border-left-color: #b00020; }
.witness summary { font-weight: 600; cursor: pointer; font-size: .92em; }
.witness dl { display: grid; grid-template-columns: max-content 1fr; gap: .1em 1em;
              margin: .3em 0; font-size: .88em; }
.witness dt { font-weight: 600; }
.witness dd { margin: 0; word-break: break-word; }
code { background: #f3f3f5; padding: 0 .2em; border-radius: 3px; }
"""


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _inline(text: str, markdown: bool = True) -> str:
    """Escape ``text``; for dpaudit's Markdown, then render code, bold, italics and links."""
    out = _esc(text)
    if not markdown:
        return out
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", out)
    out = re.sub(r"(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])", r"<em>\1</em>", out)
    # Links to anchors in the page or to files beside the report (no scheme allowed).
    return re.sub(r"\[([^\]]+)\]\(((?:#|[\w.-]+/)[\w./#-]*)\)", r'<a href="\2">\1</a>', out)


def _mark_class(cell: str) -> str:
    """The colour of a mark: the paper's finding reproduced (blue), a violation (red), open."""
    if cell.startswith(SHOWS[0]):
        return "mark-repro"
    if cell.startswith(VIOLATION_MARK[0]):
        return "mark-bad"
    if cell.startswith(("–", INCONCLUSIVE_MARK[0])):
        return "mark-open"
    return "mark-none"


def _table(table: content.Table) -> str:
    """A table; a ``group_column`` becomes a full-width row opening each group."""
    shown = [i for i in range(len(table.headers)) if i != table.group_column]
    head = "".join(f"<th>{_esc(table.headers[i])}</th>" for i in shown)
    body = []
    previous = None
    for row in table.rows:
        if table.group_column is not None and row[table.group_column] != previous:
            previous = row[table.group_column]
            body.append(
                f'<tr class="group"><th colspan="{len(shown)}">{_inline(previous)}</th></tr>'
            )
        cells = []
        for i in shown:
            cell = row[i]
            cls = _mark_class(cell) if i == table.marks else ""
            attr = f' class="{cls}"' if cls else ""
            markdown = i in table.markdown_columns
            cells.append(f"<td{attr}>{_inline(cell, markdown=markdown)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    caption = f"<caption>{_inline(table.note)}</caption>" if table.note else ""
    css = table.css or ("wide" if len(shown) >= 7 else "")
    cls = f' class="{css}"' if css else ""
    return (
        f"<table{cls}>{caption}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def _block(block: content.Block) -> str:
    if isinstance(block, content.Heading):
        anchor = f' id="{_esc(block.anchor)}"' if block.anchor else ""
        return f"<h{block.level}{anchor}>{_esc(block.text)}</h{block.level}>"
    if isinstance(block, content.Text):
        return f'<p class="{_esc(block.kind)}">{_inline(block.text, block.markdown)}</p>'
    if isinstance(block, content.Bullets):
        items = "".join(f"<li>{_inline(i, block.markdown)}</li>" for i in block.items)
        return f"<ul>{items}</ul>"
    if isinstance(block, content.Table):
        title = f"<h4>{_esc(block.title)}</h4>" if block.title else ""
        return title + _table(block)
    if isinstance(block, content.Image):
        data = base64.b64encode(block.png).decode("ascii")
        target = block.full_size[0][1] if block.full_size else ""
        img = f'<img alt="{_esc(block.alt)}" src="data:image/png;base64,{data}">'
        if target:
            img = f'<a href="{_esc(target)}" title="open full size">{img}</a>'
        sizes = " · ".join(f'<a href="{_esc(p)}">{_esc(label)}</a>' for label, p in block.full_size)
        caption = f"<figcaption>{_esc(block.alt)}. Full size: {sizes}</figcaption>"
        return f'<figure class="plot" id="{_esc(block.figure)}-img">{img}{caption}</figure>'
    if isinstance(block, content.Links):
        links = "".join(f'<a href="{_esc(p)}">{_esc(label)}</a>' for label, p in block.links)
        return f'<p class="links">{_esc(block.lead)} {links}</p>'
    if isinstance(block, content.WitnessCard):
        items = "".join(
            f"<dt>{_esc(label)}</dt><dd>{_esc(text)}</dd>" for label, text in block.lines
        )
        cls = "witness violation" if block.violation else "witness"
        ident = f' id="{_esc(block.anchor)}"' if block.anchor else ""
        # Folded by default (no script needed): the printed report lists one line per card.
        return (
            f'<details class="{cls}"{ident}><summary>{_esc(block.title)}</summary>'
            f"<dl>{items}</dl></details>"
        )
    raise TypeError(f"unknown report block {type(block).__name__}")


def render_html(run: RunContents) -> str:
    """The whole report of a run as one self-contained HTML document."""
    return render_blocks(build_document(run))


def render_blocks(document: list[content.Block], title: str = "dpaudit report") -> str:
    """Report blocks (a run's or one audit's) as one self-contained HTML document."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_esc(title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{_esc(title)}</h1>",
    ]
    sections = _sections(document)
    for name, blocks in sections:
        parts.append(f'<section class="{name}">' if name else "<section>")
        parts.extend(_block(b) for b in blocks)
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


#: The ``<section>`` class of each level-2 heading's anchor (any other: a figure).
_SECTION_KINDS = {"summary": "summary", "witnesses": "witnesses", "violations": "claims",
                  "held": "claims", "inconclusive": "claims", "audit": "claims"}  # fmt: skip


def _sections(blocks: list[content.Block]) -> list[tuple[str, list[content.Block]]]:
    """Group blocks into ``<section>``s at each level-2 heading (class = its anchor)."""
    out: list[tuple[str, list[content.Block]]] = [("status", [])]
    for block in blocks:
        if isinstance(block, content.Heading) and block.level == 2:
            kind = _SECTION_KINDS.get(block.anchor, "figure")
            out.append((kind, []))
        out[-1][1].append(block)
    return [(name, bs) for name, bs in out if bs]
