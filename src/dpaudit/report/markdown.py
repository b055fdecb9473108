"""The run report as Markdown (``DIR/report.md``); figures are linked by relative path.

Plain text that may come from a corpus or a user is escaped (``<``, ``>``,
``&``, ``*``, `````, ``[`` and table pipes) so that a Markdown viewer never
renders it as HTML or formatting; dpaudit's own Markdown keeps its marks.
"""

from __future__ import annotations

import html
import re

from dpaudit.report import blocks as content
from dpaudit.report.collect import RunContents
from dpaudit.report.document import build_document
from dpaudit.rundir.layout import FIGURE_PNG


def _esc(text: str, markdown: bool = False) -> str:
    out = html.escape(text, quote=False).replace("\n", " ")
    if not markdown:
        out = re.sub(r"([*_`\[\]])", r"\\\1", out)
    return out


def _cell(text: str) -> str:
    return _esc(text).replace("|", "\\|")


def _table(table: content.Table) -> list[str]:
    lines = [
        "| " + " | ".join(_cell(h) for h in table.headers) + " |",
        "|" + "---|" * len(table.headers),
    ]
    previous = None
    for row in table.rows:
        cells = [
            _esc(c, True).replace("|", "\\|") if i in table.markdown_columns else _cell(c)
            for i, c in enumerate(row)
        ]
        if table.group_column is not None:
            group = row[table.group_column]
            cells[table.group_column] = "" if group == previous else _esc(group, True)
            previous = group
        lines.append("| " + " | ".join(cells) + " |")
    if table.note:
        lines += ["", _esc(table.note, markdown=True)]
    return lines


def _block(block: content.Block) -> list[str]:
    if isinstance(block, content.Heading):
        return ["#" * block.level + " " + _esc(block.text)]
    if isinstance(block, content.Text):
        text = _esc(block.text, block.markdown)
        if block.kind == "status-ok":
            return [f"**{text}**"]
        if block.kind in ("status-bad", "note"):
            return [f"> {'**' + text + '**' if block.kind == 'status-bad' else text}"]
        return [text]
    if isinstance(block, content.Bullets):
        return [f"- {_esc(i, block.markdown)}" for i in block.items]
    if isinstance(block, content.Table):
        return ([f"#### {_esc(block.title)}", ""] if block.title else []) + _table(block)
    if isinstance(block, content.Image):
        png = block.path or f"{block.figure}/{FIGURE_PNG}"
        target = block.full_size[0][1] if block.full_size else png
        return [f"[![{_esc(block.alt)}]({png})]({target})"]
    if isinstance(block, content.Links):
        return [block.lead + " " + " · ".join(f"[{label}]({p})" for label, p in block.links)]
    if isinstance(block, content.WitnessCard):
        lines = [f'<a id="{block.anchor}"></a>', ""] if block.anchor else []
        lines += [f"#### {_esc(block.title)}", ""]
        return lines + [f"- **{_esc(label)}:** {_esc(text)}" for label, text in block.lines]
    raise TypeError(f"unknown report block {type(block).__name__}")


def render_markdown(run: RunContents) -> str:
    """The whole report of a run as one Markdown document."""
    return render_blocks(build_document(run))


def render_blocks(document: list[content.Block], title: str = "dpaudit report") -> str:
    """Report blocks (a run's or one audit's) as one Markdown document."""
    lines = [f"# {_esc(title)}", ""]
    for block in document:
        lines += [*_block(block), ""]
    return "\n".join(lines).rstrip("\n") + "\n"
