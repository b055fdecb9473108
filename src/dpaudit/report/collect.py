"""Read a run directory back into one value that the Markdown and HTML renderers share.

Each figure's ``results.json`` is read into its typed
:class:`~dpaudit.rundir.records.FigureResult`; the file names come from
:mod:`dpaudit.rundir.layout`, shared with the writers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpaudit.errors import InvalidArgumentError
from dpaudit.rundir.layout import FIGURE_PNG, FIGURE_README, RESULTS_JSON
from dpaudit.rundir.records import (
    NOT_JSON,
    AuditRecord,
    FigureResult,
    ResultsFormatError,
    load_figure_result,
)
from dpaudit.rundir.status import RunStatus, load_run_status


@dataclass(frozen=True)
class FigureEntry:
    """One reproduced figure as read from ``DIR/<figure>/``."""

    name: str
    directory: Path
    result: FigureResult
    png: bytes | None
    readme: str | None = None

    @property
    def title(self) -> str:
        """The figure's title."""
        return self.result.title


@dataclass(frozen=True)
class RunContents:
    """Everything a report shows about one run directory."""

    directory: Path
    status: RunStatus | None
    figures: tuple[FigureEntry, ...]

    @property
    def complete(self) -> bool:
        """True only when the run finished every figure it was asked for."""
        if self.status is None or not self.status.complete:
            return False
        present = {f.name for f in self.figures}
        return all(name in present for name in self.status.config.figures)

    @property
    def missing_figures(self) -> list[str]:
        """Figures the run was asked for that have no results on disk."""
        wanted = () if self.status is None else self.status.config.figures
        present = {f.name for f in self.figures}
        return [name for name in wanted if name not in present]

    def audits(self) -> list[tuple[str, AuditRecord]]:
        """Every audited mechanism of every figure, as ``(figure, audit record)``."""
        return [(f.name, a) for f in self.figures for a in f.result.audits]


def load_run(directory: str | Path) -> RunContents:
    """Read ``run-status.json`` and every ``<figure>/results.json`` under ``directory``, typed.

    Raises :class:`InvalidArgumentError` when ``directory`` is not a directory
    or holds no figure results at all, and
    :class:`~dpaudit.rundir.records.ResultsFormatError` (naming the file and
    the field) for a ``results.json`` that lacks a field every version wrote.
    A results file that is not JSON at all is left out, as if absent (the
    report then says the run is incomplete).
    """
    root = Path(directory)
    if not root.is_dir():
        raise InvalidArgumentError("DIR", str(directory), "an existing run directory")
    status = load_run_status(root)
    order = [] if status is None else list(status.config.figures)
    found = sorted(p.parent for p in root.glob(f"*/{RESULTS_JSON}"))
    found.sort(key=lambda p: (order.index(p.name) if p.name in order else len(order), p.name))
    figures = []
    for sub in found:
        try:
            result = load_figure_result(sub / RESULTS_JSON)
        except ResultsFormatError as exc:
            if exc.field == NOT_JSON:
                continue  # unreadable: as if absent, the report says the run is incomplete
            raise
        png_path = sub / FIGURE_PNG
        png = png_path.read_bytes() if png_path.is_file() else None
        readme_path = sub / FIGURE_README
        readme = readme_path.read_text("utf-8") if readme_path.is_file() else None
        figures.append(FigureEntry(sub.name, sub, result, png, readme))
    if not figures:
        raise InvalidArgumentError(
            "DIR", str(directory), "a run directory written by `dpaudit reproduce` (no results)"
        )
    return RunContents(root, status, tuple(figures))


def as_float(value: Any) -> float | None:
    """A JSON number back to float (``"inf"``/``"-inf"``/``"nan"`` strings included)."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return float(value)


def fmt(value: Any, digits: int = 4) -> str:
    """Format a JSON number for a table: ``∞``, ``—`` for missing, ``digits`` significant."""
    v = as_float(value) if not isinstance(value, bool) else None
    if v is None:
        return "—" if value is None else str(value)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "∞" if v > 0 else "-∞"
    return f"{v:.{digits}g}"
