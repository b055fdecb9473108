"""What a figure's ``results.json`` holds, typed: written by ``reproduce``, read by the report.

A figure module returns a :class:`FigureResult` (its parameters, seed, library
versions, sample counts, timings, tidy rows, the paper's numbers beside ours,
the qualitative :class:`Finding` s checked, the reader's :class:`ReportTable` s
and one :class:`AuditRecord` per audited mechanism).  It serialises through
:func:`dpaudit.serialization.to_jsonable` (``inf`` as ``"inf"``) and
:meth:`FigureResult.from_dict` reads it back: ``to_jsonable(from_dict(d)) == d``
for every file this version writes.

Older files still load.  Every version wrote the fields of the first layout
(:data:`FIGURE_FIELDS`, :data:`AUDIT_FIELDS`); a file lacking one is refused
with a :class:`ResultsFormatError` naming the file and the field.  Fields added
since default to empty: a finding's ``paper`` and ``status`` (then it follows
``holds``), the figure's words and tables (the report then reads the words from
the figure's README), the typed verdict and witness of an audit (an older
audit's ``verdict`` is its sentence and its ``witness`` the card's lines; its
typed verdict follows ``violation`` and the sentence, its witness is None), and
an audit's stored typed result ``audit`` (without it, the record's ``row_*``
fields hold the outcome the file wrote; :class:`AuditRecord`).

Free mappings stay mappings, because their keys are data, not fields:
``parameters`` (a mechanism's or figure's own parameter names), ``rows`` and
``comparison`` (each figure's columns), ``sample_counts``, ``timings`` and
``versions`` (named by the run), ``extra`` (figure-specific data that only the
figure's own plot and README read) and an audit's ``witness_lines`` (the card's
``label → value`` lines a figure words itself).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from dpaudit.errors import DPAuditError, InvalidArgumentError
from dpaudit.results.audit import AuditResult
from dpaudit.rundir.layout import RESULTS_JSON
from dpaudit.serialization import from_jsonable
from dpaudit.verdicts import Verdict
from dpaudit.witness import Witness

T = TypeVar("T")


#: What a run says about a finding (:attr:`Finding.status`).  Only ``shows`` counts as
#: shown: a finding the scale cannot test, or one the run could neither show nor
#: refute, is never reported as shown.
SHOWS = "shows"
NOT_SHOWN = "not shown"
NOT_AT_THIS_SCALE = "not shown at this scale"
INCONCLUSIVE = "inconclusive"
FINDING_STATUSES = (SHOWS, NOT_SHOWN, NOT_AT_THIS_SCALE, INCONCLUSIVE)

#: Fields every version of ``results.json`` wrote (the first layout): required.
FIGURE_FIELDS = ("figure", "title", "paper", "scale", "seed", "parameters", "sample_counts",
                 "timings", "versions", "rows")  # fmt: skip
AUDIT_FIELDS = ("mechanism", "parameters", "claim", "claimed_epsilon", "true_epsilon",
                "truth_method", "epsilon_lower_bound", "confidence", "method", "violation",
                "verdict")  # fmt: skip


class ResultsFormatError(DPAuditError, ValueError):
    """A ``results.json`` lacks a field every version wrote, or holds a value of the wrong kind.

    The message names the file and the field (``audits[2].claimed_epsilon``).
    """

    def __init__(self, source: str, field_path: str, problem: str) -> None:
        self.source, self.field = source, field_path
        super().__init__(f"{source}: field {field_path!r} {problem}")


@dataclass(frozen=True)
class Finding:
    """A qualitative finding of the paper and whether our run shows it.

    ``detail`` gives our numbers (and the cells they come from); ``paper`` the
    paper's own number or statement for the same quantity, set beside ours in
    the report's summary.  ``status`` (one of :data:`FINDING_STATUSES`) refines
    ``holds``: ``shows`` exactly when ``holds``; otherwise ``not shown`` (the
    run contradicts it), ``not shown at this scale`` (what would show it was not
    audited here; ``detail`` says what and why) or ``inconclusive`` (too few
    samples to show or refute it).  Left empty it follows ``holds``.
    """

    statement: str
    holds: bool
    detail: str = ""
    paper: str = ""
    status: str = ""

    def __post_init__(self) -> None:
        status = self.status or (SHOWS if self.holds else NOT_SHOWN)
        if status not in FINDING_STATUSES or (status == SHOWS) != bool(self.holds):
            raise ValueError(f"finding status {status!r} does not fit holds={self.holds}")
        object.__setattr__(self, "status", status)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "finding", at: str = "") -> Finding:
        """A finding from its JSON form (``paper`` and ``status`` may be absent: older files).

        ``source`` names the file and ``at`` the finding in it in any error.
        """
        get = _Fields(data, source, at)
        statement, holds = get.required("statement", _text), get.required("holds", _flag)
        status = get.optional("status", _text, "")
        try:
            return cls(statement, holds, get.optional("detail", _text, ""),
                       get.optional("paper", _text, ""), status)  # fmt: skip
        except ValueError as exc:
            raise ResultsFormatError(source, at + "status", str(exc)) from None


@dataclass(frozen=True)
class ReportTable:
    """A table as a reader sees it: title, header, formatted cells, and a note under it."""

    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str = ""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "table", at: str = "") -> ReportTable:
        """A table from its JSON form (``source``, ``at``: see :meth:`Finding.from_dict`)."""
        get = _Fields(data, source, at)
        return cls(
            get.required("title", _text),
            get.required("headers", _strings),
            get.required("rows", lambda rows: tuple(_strings(r) for r in _list(rows))),
            get.optional("note", _text, ""),
        )


@dataclass(frozen=True)
class AuditRecord:
    """One audited mechanism as the report shows it: a row and a witness card.

    ``audit`` is the audit's own typed result (:class:`~dpaudit.results.audit.AuditResult`:
    claim, bound, confidence, verdict, witness, trust notes and the auditor's
    typed detail), stored whole.  The row's claim, claimed ε, bound, confidence,
    verdict, sentence and witness are the audit's, read through the properties
    below, except where a figure states something else on purpose: then the
    ``row_*`` field holds the row's value and the figure says why where it
    builds the record (a verdict combining a white-box finding with the
    certified one, the largest bound over a metric audit's pairs, a family-wise
    confidence over a grid's cells).  A ``row_*`` value equal to the audit's own
    is no difference and is dropped, so a record reads back from JSON equal to
    itself.  ``audit`` is None only for a
    record read from an older ``results.json`` (before audits were stored) or
    built without an auditor; then the ``row_*`` fields hold the whole outcome.

    The other fields are the row's own, not the audit's: ``mechanism`` the
    figure's label, ``parameters`` the figure's parameter names,
    ``true_epsilon``/``truth_method`` the analytic truth (no auditor knows it),
    ``method`` the figure's words for how it audited, and ``witness_lines`` the
    card's ``label → value`` lines where the figure words the evidence itself
    (e.g. a white-box token loss beside the certified witness); without them the
    card is the witness's own :meth:`~dpaudit.witness.Witness.summary`.

    ``epsilon_lower_bound`` holds with probability ``confidence`` (one-sided).
    ``verdict`` is the outcome (VIOLATION, NO_VIOLATION_FOUND, or INCONCLUSIVE
    when too few samples were drawn to see a loss at the claim) and
    ``verdict_text`` the one-sided sentence that states it, never a statement
    that the mechanism is private.
    """

    mechanism: str
    parameters: Mapping[str, Any]
    true_epsilon: float | None
    truth_method: str | None
    method: str
    audit: AuditResult | None = None
    witness_lines: Mapping[str, Any] = field(default_factory=dict)
    row_claim: str | None = None
    row_claimed_epsilon: float | None = None
    row_epsilon_lower_bound: float | None = None
    row_confidence: float | None = None
    row_verdict: Verdict | None = None
    row_verdict_text: str | None = None
    row_witness: Witness | None = None

    def __post_init__(self) -> None:
        if self.row_verdict is not None:
            object.__setattr__(self, "row_verdict", Verdict(self.row_verdict))
        if self.audit is None:
            missing = [n for n in _ROW_OUTCOME[:-1] if getattr(self, "row_" + n) is None]
            if missing:
                raise InvalidArgumentError(
                    "audit", None, f"an AuditResult, or row values for {', '.join(missing)}"
                )
            return
        for name in _ROW_OUTCOME:  # a row value equal to the audit's own is the audit's
            if _same(getattr(self, "row_" + name), getattr(self.audit, name)):
                object.__setattr__(self, "row_" + name, None)

    def _outcome(self, name: str) -> Any:
        own = getattr(self, "row_" + name)
        return own if own is not None or self.audit is None else getattr(self.audit, name)

    @property
    def claim(self) -> str:
        """The claim audited, in words: ``row_claim``, else the audit's."""
        return self._outcome("claim")

    @property
    def claimed_epsilon(self) -> float:
        """The claimed ε: ``row_claimed_epsilon``, else the audit's."""
        return self._outcome("claimed_epsilon")

    @property
    def epsilon_lower_bound(self) -> float:
        """The row's ε lower bound: ``row_epsilon_lower_bound``, else the audit's."""
        return self._outcome("epsilon_lower_bound")

    @property
    def confidence(self) -> float:
        """The confidence the row's bound holds at: ``row_confidence``, else the audit's."""
        return self._outcome("confidence")

    @property
    def verdict(self) -> Verdict:
        """The row's verdict: ``row_verdict``, else the audit's."""
        return self._outcome("verdict")

    @property
    def verdict_text(self) -> str:
        """The sentence stating the row's verdict: ``row_verdict_text``, else the audit's."""
        return self._outcome("verdict_text")

    @property
    def witness(self) -> Witness | None:
        """What proves the bound (``row_witness``, else the audit's); None where none exists."""
        return self._outcome("witness")

    @property
    def violation(self) -> bool:
        """True when the row shows the claim false."""
        return self.verdict is Verdict.VIOLATION

    @property
    def card_lines(self) -> Mapping[str, Any]:
        """The witness card's ``label → value`` lines (see the class docstring)."""
        witness = self.witness
        if self.witness_lines or witness is None:
            return self.witness_lines
        return witness.summary()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: the row as every version wrote it, then ``audit`` (its ``to_dict``).

        The row's bound, confidence, verdict, sentence, witness and ``violation``
        are written resolved (for readers of the file and older dpaudit);
        :meth:`from_dict` takes the audit's own from ``audit`` and keeps only
        where the row differs.
        """
        out = {name: getattr(self, name) for name in AUDIT_FIELDS}  # violation: the property
        out.update(verdict=self.verdict.value, verdict_text=self.verdict_text)
        out.update(witness=self.witness, witness_lines=self.witness_lines)
        out.update(audit=None if self.audit is None else self.audit.to_dict())
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "audit", at: str = "") -> AuditRecord:
        """Inverse of :meth:`to_dict` after JSON; reads older layouts too (module docstring).

        ``source``, ``at``: see :meth:`Finding.from_dict`.
        """
        get = _Fields(data, source, at)
        for name in AUDIT_FIELDS:
            get.required(name, lambda v: v)
        violation = get.required("violation", _flag)
        if "verdict_text" in data:
            verdict = get.required("verdict", Verdict)
            text = get.required("verdict_text", _text)
            witness = get.optional("witness", lambda d: from_jsonable(Witness, d), None)
            lines = get.optional("witness_lines", _mapping, {})
            if violation != (verdict is Verdict.VIOLATION):
                raise ResultsFormatError(source, at + "violation", f"contradicts {verdict!r}")
        else:  # before the verdict was typed: the sentence, and the card's lines
            text = get.required("verdict", _text)
            verdict = _legacy_verdict(violation, text)
            witness, lines = None, get.optional("witness", _mapping, {})
        return cls(
            get.required("mechanism", _text), get.required("parameters", _mapping),
            get.optional("true_epsilon", _number, None),
            get.optional("truth_method", _text, None), get.required("method", _text),
            audit=get.optional("audit", _audit_result, None), witness_lines=lines,
            row_claim=get.required("claim", _text),
            row_claimed_epsilon=get.required("claimed_epsilon", _number),
            row_epsilon_lower_bound=get.required("epsilon_lower_bound", _number),
            row_confidence=get.required("confidence", _number),
            row_verdict=verdict, row_verdict_text=text, row_witness=witness,
        )  # fmt: skip


#: What a row may state in place of its audit's own (``AuditRecord.row_<name>``); all but
#: the witness are required of a record without an audit.
_ROW_OUTCOME = ("claim", "claimed_epsilon", "epsilon_lower_bound", "confidence", "verdict",
                "verdict_text", "witness")  # fmt: skip


def _same(row: Any, own: Any) -> bool:
    """True when a row's value is its audit's own (NaN equals NaN: a profile claim's ε may be)."""
    if isinstance(row, float) and isinstance(own, float) and math.isnan(row) and math.isnan(own):
        return True
    return row is not None and row == own


def _audit_result(value: Any) -> AuditResult:
    """A stored audit result: :meth:`AuditResult.from_dict` (typed, exact)."""
    try:
        return AuditResult.from_dict(_mapping(value))
    except InvalidArgumentError as exc:  # e.g. an unknown auditor kind
        raise ValueError(str(exc)) from None


def _legacy_verdict(violation: bool, sentence: str) -> Verdict:
    """An older audit's outcome: its flag, or INCONCLUSIVE where its sentence opens so."""
    if violation:
        return Verdict.VIOLATION
    if sentence.startswith(Verdict.INCONCLUSIVE.value):
        return Verdict.INCONCLUSIVE
    return Verdict.NO_VIOLATION_FOUND


@dataclass(frozen=True)
class FigureResult:
    """Everything one reproduced figure computed; serialises to ``results.json``.

    ``rows`` is the tidy table (one dict per CSV line); ``comparison`` sets
    the paper's numbers beside ours (dicts with at least ``quantity``,
    ``paper`` and ``ours``); ``extra`` carries figure-specific data that the
    plot or the README needs but that does not fit a row.

    The figure's words, shared by its README and the run report (Markdown):
    ``shows`` says in plain words what the figure shows and what it means;
    ``method`` how it was made; ``differences`` a bullet list of where and why
    it differs from the paper.  ``tables`` are the tables a reader sees
    (:class:`ReportTable`); without them the report shows ``comparison``.
    ``scope`` says what this scale audited and what it skipped, and why
    (Markdown); the report opens the figure's section with it.
    """

    figure: str
    title: str
    paper: str
    scale: str
    seed: int
    parameters: Mapping[str, Any]
    sample_counts: Mapping[str, Any]
    timings: Mapping[str, float]
    versions: Mapping[str, str]
    rows: tuple[Mapping[str, Any], ...]
    comparison: tuple[Mapping[str, Any], ...] = ()
    findings: tuple[Finding, ...] = ()
    audits: tuple[AuditRecord, ...] = ()
    notes: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)
    shows: str = ""
    method: str = ""
    differences: str = ""
    tables: tuple[ReportTable, ...] = ()
    scope: str = ""

    @property
    def all_findings_hold(self) -> bool:
        """True when every qualitative finding checked shows in this run."""
        return all(f.holds for f in self.findings)

    @property
    def findings_summary(self) -> str:
        """E.g. ``all 6 findings shown`` or ``1 of 2 findings shown; 1 not shown at this scale``."""
        return summarise_findings([f.status for f in self.findings])

    @property
    def total_seconds(self) -> float | None:
        """The figure's wall-clock time (``timings["total_s"]``), None if not recorded."""
        total = self.timings.get("total_s")
        return None if total is None else float(total)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = RESULTS_JSON) -> FigureResult:
        """Inverse of serialising with :func:`~dpaudit.serialization.to_jsonable` after JSON.

        ``source`` (the file's path) is named by every :class:`ResultsFormatError`.
        """
        get = _Fields(data, source)
        for name in FIGURE_FIELDS:  # the first missing field is the one named
            get.required(name, lambda v: v)
        return cls(
            get.required("figure", _text), get.required("title", _text),
            get.required("paper", _text), get.required("scale", _text),
            get.required("seed", _integer),
            *(get.required(k, _mapping) for k in FIGURE_FIELDS[5:9]),
            get.required("rows", _mappings),
            comparison=get.optional("comparison", _mappings, ()),
            findings=get.items("findings", Finding.from_dict),
            audits=get.items("audits", AuditRecord.from_dict),
            notes=get.optional("notes", _strings, ()),
            extra=get.optional("extra", _mapping, {}),
            shows=get.optional("shows", _text, ""), method=get.optional("method", _text, ""),
            differences=get.optional("differences", _text, ""),
            tables=get.items("tables", ReportTable.from_dict),
            scope=get.optional("scope", _text, ""),
        )  # fmt: skip


#: The "field" of a :class:`ResultsFormatError` for a file that is not a JSON object at all.
NOT_JSON = "<file>"


def load_figure_result(path: str | Path) -> FigureResult:
    """Read a figure's ``results.json``; errors name the file (and the field).

    ``OSError`` when it cannot be read; a :class:`ResultsFormatError` with
    ``field`` :data:`NOT_JSON` when it is not a JSON object.
    """
    source = str(path)
    try:
        data = json.loads(Path(path).read_text("utf-8"))
    except ValueError as exc:
        raise ResultsFormatError(source, NOT_JSON, f"is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ResultsFormatError(source, NOT_JSON, "is not a JSON object")
    return FigureResult.from_dict(data, source)


def summarise_findings(statuses: Sequence[str]) -> str:
    """How many findings of each status (:data:`FINDING_STATUSES`) a figure has, in words."""
    n, shown = len(statuses), sum(s == SHOWS for s in statuses)
    if shown == n:
        return f"all {n} findings shown"
    others = [f"{statuses.count(s)} {s}" for s in FINDING_STATUSES if s != SHOWS and s in statuses]
    return f"{shown} of {n} findings shown; " + ", ".join(others)


# ------------------------------------------------------------------ reading JSON fields
class _Fields:
    """Reads the fields of one JSON object, naming ``source`` and the field in every error."""

    def __init__(self, data: Mapping[str, Any], source: str, at: str = "") -> None:
        if not isinstance(data, Mapping):
            raise ResultsFormatError(source, at.rstrip(".") or "<file>", "is not a JSON object")
        self.data, self.source, self.at = data, source, at

    def _read(self, name: str, read: Callable[[Any], T]) -> T:
        try:
            return read(self.data[name])
        except ResultsFormatError:
            raise
        except (TypeError, ValueError, KeyError) as exc:
            raise ResultsFormatError(self.source, self.at + name, f"is malformed: {exc}") from None

    def required(self, name: str, read: Callable[[Any], T]) -> T:
        """Field ``name`` read with ``read``; missing: a :class:`ResultsFormatError`."""
        if name not in self.data:
            raise ResultsFormatError(
                self.source, self.at + name, "is missing (every version of dpaudit wrote it)"
            )
        return self._read(name, read)

    def optional(self, name: str, read: Callable[[Any], T], default: Any) -> Any:
        """Field ``name`` read with ``read``; ``default`` when absent or null."""
        return default if self.data.get(name) is None else self._read(name, read)

    def items(self, name: str, read: Callable[[Any, str, str], T]) -> tuple[T, ...]:
        """A list of objects, item ``i`` read with ``read(object, source, "name[i].")``."""
        values = self.optional(name, _list, ())
        return tuple(read(v, self.source, f"{self.at}{name}[{i}].") for i, v in enumerate(values))


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {value!r}")
    return value


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"expected true or false, got {value!r}")
    return value


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError(f"expected a list, got {type(value).__name__}")
    return value


def _mapping(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError(f"expected an object, got {type(value).__name__}")
    return value


def _mappings(value: Any) -> tuple[dict[str, Any], ...]:
    return tuple(_mapping(v) for v in _list(value))


def _strings(value: Any) -> tuple[str, ...]:
    values = _list(value)
    if not all(isinstance(v, str) for v in values):
        raise TypeError("expected a list of strings")
    return tuple(values)


def _integer(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer, got {value!r}")
    return value


def _number(value: Any) -> float:
    """A JSON number (kept as written, so it serialises back the same) or "inf"/"-inf"/"nan"."""
    if isinstance(value, str):
        return float(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected a number, got {value!r}")
    return value
