"""The one result of an audit of a claim, whichever auditor ran it; serialised once.

Every audit — black-box, the ACL 2022 sanity check, the word-level metric
audit, the privacy-profile audit, the LM-rewriter audit — answers the same
question (is the claim refuted?) with the same parts: a certified one-sided
lower bound at a confidence, a :class:`~dpaudit.verdicts.Verdict`, the
:class:`~dpaudit.witness.Witness` behind the bound, and the trust notes
(reproducibility, declaration findings).  :class:`AuditResult` holds those;
what only one auditor has (the black-box search's counts, the sanity check's
2×2 table, the metric audit's per-pair results …) lives in its typed
``detail``, one frozen dataclass per auditor, defined beside that auditor and
registered here by its :class:`AuditorKind` so that :meth:`AuditResult.from_dict`
can rebuild it.  This module imports no auditor: a kind's result module is loaded by
name when a stored result of that kind is read (:data:`DETAIL_MODULES`).
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, TypeVar

from dpaudit.errors import InvalidArgumentError
from dpaudit.results.findings import DeclarationFinding
from dpaudit.serialization import dataclass_fields, dumps, from_jsonable, to_jsonable
from dpaudit.verdicts import Verdict
from dpaudit.witness import Witness

__all__ = ["AuditResult", "AuditorKind", "detail_type", "register_detail"]


class AuditorKind(StrEnum):
    """Which auditor produced a result (the ``kind`` tag of its JSON)."""

    BLACKBOX = "blackbox"
    SANITY = "sanity"
    METRIC = "metric"
    PROFILE = "profile"
    REWRITER = "rewriter"
    TRAINING = "training"


#: Detail type of each auditor kind, filled by the auditors' result modules on import.
_DETAIL_TYPES: dict[AuditorKind, type] = {}
#: The module whose import registers each kind's detail (:func:`detail_type` loads it by
#: name when a stored result of that kind is read, as the figure registry loads figures):
#: a reader of results need not import every auditor, and the core names no auditor
#: module in an import statement.
DETAIL_MODULES: dict[AuditorKind, str] = {
    AuditorKind.BLACKBOX: "dpaudit.auditors.blackbox.result",
    AuditorKind.SANITY: "dpaudit.auditors.sanity.check",
    AuditorKind.METRIC: "dpaudit.auditors.metric.result",
    AuditorKind.PROFILE: "dpaudit.auditors.profile.result",
    AuditorKind.REWRITER: "dpaudit.auditors.rewriter.result",
    AuditorKind.TRAINING: "dpaudit.auditors.training.result",
}
D = TypeVar("D", bound=type)


def register_detail(kind: AuditorKind) -> Any:
    """Class decorator: ``cls`` is the typed ``detail`` of results of ``kind``."""

    def register(cls: D) -> D:
        _DETAIL_TYPES[AuditorKind(kind)] = cls
        return cls

    return register


def detail_type(kind: AuditorKind | str) -> type:
    """The detail dataclass registered for ``kind``, its module (:data:`DETAIL_MODULES`)
    loaded on first use."""
    try:
        kind = AuditorKind(kind)
    except ValueError:
        allowed = ", ".join(k.value for k in AuditorKind)
        raise InvalidArgumentError("kind", kind, f"one of {allowed}") from None
    if kind not in _DETAIL_TYPES:
        importlib.import_module(DETAIL_MODULES[kind])
    return _DETAIL_TYPES[kind]


@dataclass(frozen=True)
class AuditResult:
    """Outcome of one audit of one claim: bound, verdict, witness, trust notes and the detail.

    ``epsilon_lower_bound`` holds with probability ≥ ``confidence`` and is
    never negative (one-sided: a result without a violation never shows that
    a mechanism is private).  What it bounds depends on the claim: for a
    metric claim it is the worst pair's bound, to be read against that pair's
    allowed loss ``ε·d`` (``detail.worst``); for a profile audit, whose verdict
    judges the whole claim, it is the best certified set's bound on ε at the
    claim's δ, and ``claimed_epsilon`` is NaN for a claim without an ε (GDP,
    RDP, zCDP).  ``verdict`` is the outcome, typed; ``verdict_text`` states it
    in words as the auditor phrased it.  ``samples``: outputs drawn per input,
    by stage; ``timing``: wall seconds (``total`` always).  ``power`` (black
    box, no violation): what the audit could have seen
    (:func:`dpaudit.auditors.core.power.power_summary`).
    """

    kind: AuditorKind
    #: The audited mechanism's description (its ``spec()``: name and parameters, as JSON).
    mechanism: dict[str, Any]
    claim: str
    claimed_epsilon: float
    claimed_delta: float
    epsilon_lower_bound: float
    confidence: float
    verdict: Verdict
    verdict_text: str
    witness: Witness | None
    confidence_statement: str
    seed: int
    samples: dict[str, int]
    timing: dict[str, float]
    detail: Any
    notes: tuple[str, ...] = ()
    #: False when the mechanism draws from a source dpaudit cannot seed (see ``notes``).
    reproducible: bool = True
    #: Declarations the real sampler contradicts (:mod:`dpaudit.auditors.core.declarations`).
    declaration_findings: tuple[DeclarationFinding, ...] = ()
    power: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # The description is kept in its JSON form (lists, "inf"), so that it reads back equal.
        object.__setattr__(self, "mechanism", to_jsonable(self.mechanism))
        object.__setattr__(self, "kind", AuditorKind(self.kind))
        object.__setattr__(self, "verdict", Verdict(self.verdict))
        expected = _DETAIL_TYPES.get(self.kind)
        if expected is not None and not isinstance(self.detail, expected):
            raise InvalidArgumentError(
                "detail", type(self.detail).__name__, f"a {expected.__name__} for a {self.kind}"
            )

    @property
    def violation(self) -> bool:
        """True when the claim was refuted at the audit's confidence."""
        return self.verdict is Verdict.VIOLATION

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (strict JSON types; ``inf``/``nan`` as strings), ``kind`` first.

        The one serialisation of every audit result: the CLI's ``--json`` and
        ``--out`` write it, :meth:`from_dict` reads it back.  ``violation`` is
        added (derived from ``verdict``).
        """
        out = {f.name: to_jsonable(getattr(self, f.name)) for f in fields(self)}
        # Derived, for readers of the JSON (from_dict ignores it: the verdict says it).
        return {**out, "violation": self.violation}

    def to_json(self, indent: int | None = 2) -> str:
        """:meth:`to_dict` as a JSON string."""
        return dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AuditResult:
        """The result :meth:`to_dict` wrote (``from_dict(r.to_dict()) == r``).

        ``kind`` selects the detail type (:func:`detail_type`).
        """
        if not isinstance(data, dict) or "kind" not in data:
            raise InvalidArgumentError("data", type(data).__name__, "a dict with a 'kind' field")
        detail_cls = detail_type(data["kind"])
        base = dataclass_fields(cls, {k: v for k, v in data.items() if k != "detail"})
        return cls(**base, detail=from_jsonable(detail_cls, data["detail"]))

    @classmethod
    def from_json(cls, text: str) -> AuditResult:
        """The result :meth:`to_json` wrote."""
        return cls.from_dict(json.loads(text))
