"""The blocks a report is made of, independent of the output format.

:mod:`dpaudit.report.content` (a run) and :mod:`dpaudit.report.audit_report`
(one audit) build lists of them; :mod:`dpaudit.report.html` and
:mod:`dpaudit.report.markdown` render the same blocks, each escaping the text
for its format.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Block", "Bullets", "Heading", "Image", "Links", "Table", "Text", "WitnessCard"]


@dataclass(frozen=True)
class Heading:
    """A heading; ``anchor`` is its id in the HTML (a link target)."""

    level: int
    text: str
    anchor: str = ""


@dataclass(frozen=True)
class Text:
    """A paragraph.  ``markdown``: dpaudit's own inline Markdown; else plain text.

    ``kind`` styles it: ``p``, ``note``, ``facts``, ``status-ok``, ``status-bad``.
    """

    text: str
    kind: str = "p"
    markdown: bool = False


@dataclass(frozen=True)
class Bullets:
    """A bullet list of inline-Markdown (``markdown``) or plain items."""

    items: tuple[str, ...]
    markdown: bool = False


@dataclass(frozen=True)
class Table:
    """A table of formatted cells; ``marks``: column index whose marked cells are coloured.

    ``group_column``: a column whose values open a group (shown once, as a row
    spanning the table in HTML); they are dpaudit's inline Markdown, and so are
    the cells of ``markdown_columns`` (e.g. links to evidence).
    """

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    title: str = ""
    note: str = ""
    marks: int | None = None
    group_column: int | None = None
    css: str = ""
    markdown_columns: tuple[int, ...] = ()


@dataclass(frozen=True)
class Image:
    """A figure's image, linked to its full-size files (paths relative to the report).

    ``path``: the PNG's file beside the report for Markdown (default ``<figure>/figure.png``).
    """

    figure: str
    png: bytes
    alt: str
    full_size: tuple[tuple[str, str], ...]
    path: str = ""


@dataclass(frozen=True)
class Links:
    """A line of links: ``(label, relative path or #anchor)``."""

    lead: str
    links: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class WitnessCard:
    """One audit's evidence as a card: title, ``(label, text)`` lines, violation flag.

    ``anchor``: its id, the target of the "evidence" links of the claims' tables.
    """

    title: str
    lines: tuple[tuple[str, str], ...]
    violation: bool
    anchor: str = ""


Block = Heading | Text | Bullets | Table | Image | Links | WitnessCard
