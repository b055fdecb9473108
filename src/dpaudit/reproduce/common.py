"""What every reproduced figure shares: scales, how a result is built, its output files.

A figure module's ``compute`` receives a :class:`FigureRun` (the figure's
identity, scale, seed, executor, progress and stopwatch) and returns
:meth:`FigureRun.result` — a :class:`~dpaudit.rundir.records.FigureResult`, a
frozen record with the figure's parameters, seed, library versions, sample
counts, timings, a tidy table of rows (one CSV line each), the paper's numbers
set beside ours, the qualitative findings checked, and one
:class:`~dpaudit.rundir.records.AuditRecord` per audited mechanism (what the
report lists).  The record types live in :mod:`dpaudit.rundir.records`, which
the report reads too; this module re-exports them for the figure modules.
A figure's ``readme`` lays out its README with :func:`readme_page`.
:func:`write_figure_outputs` then writes the figure's files (their names:
:mod:`dpaudit.rundir.layout`) into its directory, each atomically
(:mod:`dpaudit.io`), so a file is either complete or absent.
"""

from __future__ import annotations

import csv
import io
import math
import platform
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from dpaudit.engine.executor import ExecutionConfig
from dpaudit.errors import InvalidArgumentError, OptionalDependencyError
from dpaudit.io import atomic_write_bytes, atomic_write_text
from dpaudit.rundir.layout import FIGURE_PNG, FIGURE_README, FIGURE_SVG, RESULTS_CSV, RESULTS_JSON

# The record types, re-exported for the figure modules (``X as X`` marks a re-export).
from dpaudit.rundir.records import (
    FINDING_STATUSES as FINDING_STATUSES,
)
from dpaudit.rundir.records import (
    INCONCLUSIVE as INCONCLUSIVE,
)
from dpaudit.rundir.records import (
    NOT_AT_THIS_SCALE as NOT_AT_THIS_SCALE,
)
from dpaudit.rundir.records import (
    NOT_SHOWN as NOT_SHOWN,
)
from dpaudit.rundir.records import (
    SHOWS as SHOWS,
)
from dpaudit.rundir.records import (
    AuditRecord as AuditRecord,
)
from dpaudit.rundir.records import (
    FigureResult as FigureResult,
)
from dpaudit.rundir.records import (
    Finding as Finding,
)
from dpaudit.rundir.records import (
    ReportTable as ReportTable,
)
from dpaudit.rundir.records import (
    summarise_findings as summarise_findings,
)
from dpaudit.serialization import dumps

#: Scales offered on the command line.  ``paper`` uses the papers' sample
#: sizes; ``quick`` is sized so that ``reproduce all`` fits in 10 minutes on 2
#: cores while every qualitative finding still shows; ``tiny`` is a smoke test
#: of the pipeline (used by the test suite) whose numbers prove nothing.
SCALES = ("tiny", "quick", "paper")


def check_scale(scale: str) -> str:
    """Return ``scale`` if it is one of :data:`SCALES`, else raise naming the allowed values."""
    if scale not in SCALES:
        raise InvalidArgumentError("--scale", scale, f"one of {', '.join(SCALES)}")
    return scale


def library_versions() -> dict[str, str]:
    """Versions of Python, dpaudit and the numerical libraries a result depends on."""
    import numpy
    import scipy

    from dpaudit import __version__

    versions = {
        "python": platform.python_version(),
        "dpaudit": __version__,
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
    }
    for optional in ("sklearn", "matplotlib"):
        try:
            module = __import__(optional)
        except ImportError:
            continue
        versions[optional] = str(getattr(module, "__version__", "unknown"))
    return versions


class Stopwatch:
    """Named wall-clock timings of the stages of one figure."""

    def __init__(self) -> None:
        self._start = time.perf_counter()
        self.timings: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the enclosed block under ``name`` (seconds, accumulated)."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - t0

    def total(self) -> dict[str, float]:
        """The stage timings plus ``total_s`` since construction, rounded to ms."""
        out = {k: round(v, 3) for k, v in self.timings.items()}
        out["total_s"] = round(time.perf_counter() - self._start, 3)
        return out


class FigureProgress:
    """How a figure reports progress to the runner's overall bar.

    A figure declares how many steps it has (:meth:`start`) and calls
    :meth:`advance` after each; the runner turns these into a share of the
    figure's estimated run time, so the overall bar's ETA covers every figure.
    """

    def __init__(self, on_fraction: Callable[[float], None] | None = None) -> None:
        self._on_fraction = on_fraction
        self._total = 1
        self._done = 0

    def start(self, total_steps: int) -> None:
        """Announce the number of steps (>= 1)."""
        self._total = max(1, int(total_steps))
        self._done = 0

    def advance(self, steps: int = 1) -> None:
        """Record that ``steps`` more steps are done."""
        self._done = min(self._total, self._done + steps)
        if self._on_fraction is not None:
            self._on_fraction(self._done / self._total)


@dataclass(frozen=True)
class FigureRun:
    """One computation of a figure: what its ``compute`` gets, and how it builds its result.

    ``name``, ``title`` and ``paper`` identify the figure (from its spec);
    ``scale``, ``seed``, ``execution`` and ``data`` (a corpus path or None) are
    the run's settings; ``progress`` reports steps to the runner's bar and
    ``clock`` times the stages.
    """

    name: str
    title: str
    paper: str
    scale: str
    seed: int
    execution: ExecutionConfig = field(default_factory=ExecutionConfig)
    progress: FigureProgress = field(default_factory=FigureProgress)
    data: str | None = None
    clock: Stopwatch = field(default_factory=Stopwatch)

    def stage(self, name: str) -> AbstractContextManager[None]:
        """Time the enclosed block under ``name`` (see :meth:`Stopwatch.stage`)."""
        return self.clock.stage(name)

    def result(self, **fields: Any) -> FigureResult:
        """The figure's :class:`FigureResult`, with identity, settings, timings and versions."""
        return FigureResult(
            figure=self.name,
            title=self.title,
            paper=self.paper,
            scale=self.scale,
            seed=self.seed,
            timings=self.clock.total(),
            versions=library_versions(),
            **fields,
        )


def fmt_number(value: Any, digits: int = 4) -> str:
    """A number for tables: ``∞`` for infinity, ``—`` for missing, else ``digits`` significant."""
    if value is None:
        return "—"
    if isinstance(value, str):
        return value
    v = float(value)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "∞" if v > 0 else "-∞"
    return f"{v:.{digits}g}"


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub-flavoured Markdown table; numbers formatted with :func:`fmt_number`."""

    def cell(v: Any) -> str:
        text = v if isinstance(v, str) else fmt_number(v)
        return text.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def rows_to_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    """The tidy rows as CSV (columns in first-seen order; ``inf`` written as ``inf``)."""
    columns: list[str] = []
    for row in rows:
        for key in row:
            if key not in columns:
                columns.append(key)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _csv_value(row.get(k)) for k in columns})
    return buf.getvalue()


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, (list, tuple)):
        return ";".join(str(_csv_value(v)) for v in value)
    return value


def require_matplotlib() -> Any:
    """``matplotlib.pyplot`` on the non-interactive Agg backend, or an error naming the extra."""
    try:
        import matplotlib
    except ImportError:
        raise OptionalDependencyError("matplotlib", "reproduce", f"drawing {FIGURE_PNG}") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


#: Resolution of ``figure.png``: a figure drawn 10 inches wide is 1100 px,
#: the report's text width, so its text is shown at the size it was drawn.
PNG_DPI = 110


def save_figure(fig: Any, path: Path) -> None:
    """Write a matplotlib figure as PNG (``path``) and as SVG beside it, each atomically.

    The SVG (``path`` with suffix ``.svg``, text kept as text) is for papers
    and for zooming in; the PNG is what the report embeds.
    """
    plt = require_matplotlib()
    try:
        for fmt, target, options in (
            ("png", path, {"dpi": PNG_DPI}),
            ("svg", path.with_suffix(".svg"), {"metadata": {"Date": None}}),
        ):
            buf = io.BytesIO()
            with plt.rc_context({"svg.fonttype": "none", "svg.hashsalt": "dpaudit"}):
                fig.savefig(buf, format=fmt, bbox_inches="tight", **options)
            atomic_write_bytes(target, buf.getvalue())
    finally:
        plt.close(fig)


def write_figure_outputs(
    result: FigureResult,
    directory: Path,
    plot: Callable[[FigureResult, Path], None],
    readme: Callable[[FigureResult], str],
) -> None:
    """Write results.json, results.csv, figure.png and README.md for one figure.

    ``results.json`` is written last: its presence marks the figure as done
    (a resumed run skips figures whose ``results.json`` matches its settings).
    """
    directory.mkdir(parents=True, exist_ok=True)
    atomic_write_text(directory / RESULTS_CSV, rows_to_csv(result.rows))
    plot(result, directory / FIGURE_PNG)
    atomic_write_text(directory / FIGURE_README, readme(result).rstrip("\n") + "\n")
    atomic_write_text(directory / RESULTS_JSON, dumps(result) + "\n")


def readme_page(
    result: FigureResult,
    description: str | None = None,
    sections: Sequence[str] = (),
    differences: str | None = None,
) -> str:
    """A figure's README: title, source, what it shows, the figure, ``sections``, differences, run.

    ``description`` (how the figure was made) and ``differences`` (the bullet
    list of where and why this reproduction differs from the paper) default to
    the result's own ``method`` and ``differences``, which the report shows
    too; ``sections`` are the figure's own Markdown sections, in order
    (tables, :func:`findings_section`, ...).
    """
    shows = f"## What this shows\n\n{result.shows}" if result.shows else ""
    if result.scope:
        shows = f"## What was audited at scale `{result.scale}`\n\n{result.scope}\n\n" + shows
    how = result.method if description is None else description
    return "\n\n".join(
        part
        for part in [
            f"# {result.title}",
            f"Reproduces {result.paper}.",
            shows,
            f"[![figure]({FIGURE_PNG})]({FIGURE_SVG}) (full size: [SVG]({FIGURE_SVG}), "
            f"[PNG]({FIGURE_PNG}))",
            "## How it was made\n\n" + how if how else "",
            *sections,
            "## Where and why this differs from the paper\n\n"
            + (result.differences if differences is None else differences),
            provenance_markdown(result),
        ]
        if part
    )


def add_words(
    result: FigureResult,
    shows: Callable[[FigureResult], str],
    method: Callable[[FigureResult], str],
    differences: Callable[[FigureResult], str],
    tables: Callable[[FigureResult], Sequence[ReportTable]],
    scope: Callable[[FigureResult], str] | None = None,
) -> FigureResult:
    """``result`` with its words and reader's tables, each derived from the result itself."""
    return replace(
        result,
        shows=shows(result),
        method=method(result),
        differences=differences(result),
        tables=tuple(tables(result)),
        scope=scope(result) if scope is not None else result.scope,
    )


def table_markdown(table: ReportTable) -> str:
    """A reader's table as a README section (``###`` title, table, note)."""
    parts = [f"### {table.title}", markdown_table(table.headers, table.rows)]
    if table.note:
        parts.append(table.note)
    return "\n\n".join(parts)


def tables_section(result: FigureResult) -> str:
    """The README section setting the paper's numbers beside ours (the result's tables)."""
    with_paper = any("paper" in h.lower() for t in result.tables for h in t.headers)
    heading = "Paper beside ours" if with_paper else "The numbers"
    return f"## {heading}\n\n" + "\n\n".join(table_markdown(t) for t in result.tables)


def findings_section(result: FigureResult) -> str:
    """The README section listing the qualitative findings."""
    return "## Findings\n\n" + findings_markdown(result)


def findings_markdown(result: FigureResult) -> str:
    """The qualitative findings as a Markdown bullet list with ✓/✗."""
    if not result.findings:
        return ""
    lines = []
    marks = {SHOWS: "✓ shows", NOT_SHOWN: "✗ does NOT show"}
    for f in result.findings:
        mark = marks.get(f.status, f"– {f.status}")
        detail = f" — ours: {f.detail}" if f.detail else ""
        paper = f"; paper: {f.paper}" if f.paper else ""
        lines.append(f"- {mark}: {f.statement}{detail}{paper}")
    return "\n".join(lines)


def provenance_markdown(result: FigureResult) -> str:
    """Scale, seed, sample counts, timings and versions as a short Markdown section."""
    counts = ", ".join(f"{k} = {fmt_number(v, 10)}" for k, v in result.sample_counts.items())
    times = ", ".join(f"{k} {v:.1f} s" for k, v in result.timings.items())
    versions = ", ".join(f"{k} {v}" for k, v in result.versions.items())
    return "\n".join(
        [
            "## Run",
            "",
            f"- scale `{result.scale}`, root seed {result.seed}",
            f"- sample counts: {counts}",
            f"- timings: {times}",
            f"- versions: {versions}",
            "- reproduce with: "
            f"`dpaudit reproduce {result.figure} --scale {result.scale} --seed {result.seed} "
            "--out DIR`",
        ]
    )
