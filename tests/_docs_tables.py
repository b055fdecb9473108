"""The numbers a documentation table quotes, and the results files they come from.

A page's Markdown table quotes measured numbers; the measurement lies in a file
of ``benchmarks/results/``.  A :class:`Quote` ties one cell to that file: the
cell's numbers, in order, each with the field of the file it shows (``None``
for a number of the cell that is not a result: a sample size, a claim, a
label).  :func:`wrong_numbers` compares them at the precision the page shows
(``0.0982`` matches a stored ``0.098198``, not ``0.0984``), the rule the
pages' example outputs follow (``tests/_docs_output.py``).

A field is a path into the JSON (a ``.jsonl`` file reads as the list of its
lines)::

    rows[section=rss][details.runs=100000].details.rss_mib
    [case=svt1].epsilon_lcb_median
    side_by_side.gaussian_whole_mu|p5
    on.bounds|>1|min

``name`` steps into a mapping (``'name'`` when it holds a dot), a number into a
list, ``[key=value]`` keeps the one list element whose ``key`` (a dotted path)
prints as ``value`` (several selectors: all must hold), ``[*key=value]`` keeps
every such element and reads the rest of the path in each; after ``|`` come
operations on the value: ``min``, ``max``, ``median``, ``p5`` and ``p95``
(numpy's default, linear, quantiles, as the benchmark scripts print), ``>X``
(keep the values above X), ``*X`` and ``/X``, and ``~REGEX`` (the number its
first group finds in a text, or in each).  A page's ``∞`` matches only an
infinite value.  A tuple of fields means
"each": every one must show the cell's number (a row such as
"randomized-response, grr: 1/200 each").
"""

from __future__ import annotations

import json
import math
import re
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from _docs_output import _same_at_shown_precision

# A number as a page writes it: 1,072 (thousands), 0.0982, 1e-5; not a digit inside a word.
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|∞")

Field = str | tuple[str, ...] | None


@dataclass(frozen=True)
class Quote:
    """One table cell and the fields of a results file its numbers show."""

    page: str  # relative to the repository root
    table: str  # text of the table's header line that identifies it
    row: str  # the start of the row's first cell
    column: int  # 0 is the first cell
    file: str  # in benchmarks/results/
    fields: tuple[Field, ...]  # one per number in the cell, in order
    published: bool = False  # a peer's published figure, transcribed into the file


@dataclass(frozen=True)
class Unquoted:
    """A row of a checked table whose numbers come from no file of ``benchmarks/results/``."""

    page: str
    table: str
    row: str
    reason: str


def tables(text: str) -> list[list[list[str]]]:
    """The page's Markdown tables, each a list of rows of cells (header first, rule dropped)."""
    found: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.lstrip().startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                current.append(cells)
        elif current:
            found.append(current)
            current = []
    return found


def numbers(cell: str) -> list[str]:
    """The numbers a cell shows, thousands separators removed."""
    return [n.replace(",", "") for n in _NUMBER.findall(cell)]


def table(text: str, header: str) -> list[list[str]]:
    """The one table of the page whose header line contains ``header``."""
    chosen = [t for t in tables(text) if header in "| " + " | ".join(t[0]) + " |"]
    assert len(chosen) == 1, f"{len(chosen)} tables have a header with {header!r}"
    return chosen[0]


def row_label(row: list[str]) -> str:
    """What names a row: its first cell, or its first non-empty one (a row continuing another)."""
    return next((cell for cell in row if cell), "")


def find_row(text: str, header: str, row: str) -> list[str]:
    """The one row whose label starts with ``row``, in the table whose header holds ``header``."""
    rows = [r for r in table(text, header)[1:] if row_label(r).startswith(row)]
    assert len(rows) == 1, f"{len(rows)} rows of table {header!r} start with {row!r}"
    return rows[0]


def _steps(path: str) -> list[str]:
    """Split a path at the dots outside ``[...]`` and ``'...'`` (selectors stay with their step)."""
    steps, depth, quoted, current = [], 0, False, ""
    for char in path:
        depth += {"[": 1, "]": -1}.get(char, 0)
        quoted ^= char == "'"
        if char == "." and depth == 0 and not quoted:
            steps.append(current)
            current = ""
        else:
            current += char
    return [*steps, current]


class _Many(list):
    """The elements a ``[*key=value]`` selector kept: the rest of the path reads each."""


def _get(node: Any, path: str) -> Any:
    steps = _steps(path) if path else []
    for k, step in enumerate(steps):
        if isinstance(node, _Many):
            return _Many(_get(item, ".".join(steps[k:])) for item in node)
        name, *selectors = step.split("[")
        name = name.strip("'")
        if name:
            node = node[int(name)] if isinstance(node, list) else node[name]
        if selectors:
            many = selectors[0].startswith("*")
            conditions = [s.rstrip("]").lstrip("*").partition("=")[::2] for s in selectors]
            kept = [i for i in node if all(str(_get(i, k)) == v for k, v in conditions)]
            assert len(kept) == 1 or (many and kept), f"{len(kept)} elements have {conditions}"
            node = _Many(kept) if many else kept[0]
    return node


def _operate(value: Any, operation: str) -> Any:
    if operation.startswith("~"):  # the number a regex's group finds in a text (or in each)
        texts = value if isinstance(value, list) else [value]
        found = [float(re.search(operation[1:], text).group(1)) for text in texts]
        return found if isinstance(value, list) else found[0]
    if operation.startswith(">"):
        return [v for v in value if v > float(operation[1:])]
    if operation[0] in "*/":
        factor = float(operation[1:])
        return value * factor if operation[0] == "*" else value / factor
    reducers = {
        "min": min,
        "max": max,
        "median": statistics.median,
        "p5": lambda v: float(np.quantile(v, 0.05)),
        "p95": lambda v: float(np.quantile(v, 0.95)),
    }
    return reducers[operation](value)


def value(data: Any, field: str) -> float:
    """The number a field names in a loaded results file."""
    path, *operations = field.split("|")
    result = _get(data, path)
    for operation in operations:
        result = _operate(result, operation)
    return float(result)


def load(path: Path) -> Any:
    """A results file: JSON, or JSON lines read as a list."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text)


def _shows(shown: str, real: float) -> bool:
    if shown == "∞" or math.isinf(real):
        return shown == "∞" and real == math.inf
    return _same_at_shown_precision(shown, repr(real))


def wrong_numbers(cell: str, fields: tuple[Field, ...], data: Any) -> list[str]:
    """Each number of the cell that differs from its field at the precision shown."""
    shown = numbers(cell)
    if len(shown) != len(fields):
        return [f"the cell shows {len(shown)} numbers {shown}, the map names {len(fields)}"]
    wrong = []
    for number, field in zip(shown, fields, strict=True):
        for one in (field,) if isinstance(field, str) else field or ():
            real = value(data, one)
            if not _shows(number, real):
                wrong.append(f"{number} shown, {one} = {real!r}")
    return wrong
