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

A user's own auditor has a kind of its own: any name of lower-case letters, digits and
hyphens that no built-in kind has, registered with its detail type by
``@register_detail("my-kind")``.  Its results carry the kind as a string, and their JSON
names the module that registered it (``detail_module``), which :meth:`AuditResult.from_dict`
imports to read them back, as :data:`DETAIL_MODULES` does for the built-in kinds.
"""

from __future__ import annotations

import importlib
import json
import re
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, TypeVar

from dpaudit.errors import InvalidArgumentError
from dpaudit.results.findings import DeclarationFinding
from dpaudit.serialization import dataclass_fields, dumps, from_jsonable, to_jsonable
from dpaudit.verdicts import Verdict
from dpaudit.witness import Witness

__all__ = ["AuditResult", "AuditorKind", "auditor_kind", "detail_type", "register_detail"]


class AuditorKind(StrEnum):
    """Which auditor produced a result (the ``kind`` tag of its JSON)."""

    BLACKBOX = "blackbox"
    SANITY = "sanity"
    METRIC = "metric"
    PROFILE = "profile"
    REWRITER = "rewriter"
    TRAINING = "training"


#: Detail type of each auditor kind (built-in or a user's), filled by the result modules on
#: import.
_DETAIL_TYPES: dict[AuditorKind | str, type] = {}
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
#: The module that registered each user kind (written into its results' JSON).
_USER_MODULES: dict[str, str] = {}
_KIND_NAME = re.compile(r"[a-z][a-z0-9-]{0,63}")
D = TypeVar("D", bound=type)


def _allowed_kinds() -> str:
    users = sorted(_USER_MODULES)
    return (
        ", ".join([k.value for k in AuditorKind] + users)
        + ", or a kind registered with register_detail"
    )


def auditor_kind(kind: AuditorKind | str) -> AuditorKind | str:
    """``kind`` as a result carries it: a built-in :class:`AuditorKind`, or a registered
    user kind (a string); anything else is refused, naming the kinds there are."""
    try:
        return AuditorKind(kind)
    except ValueError:
        if isinstance(kind, str) and kind in _USER_MODULES:
            return kind
        raise InvalidArgumentError("kind", kind, _allowed_kinds()) from None


def register_detail(kind: AuditorKind | str) -> Any:
    """Class decorator: ``cls`` is the typed ``detail`` of results of ``kind``.

    ``kind``: a built-in :class:`AuditorKind`, or a new name (lower-case letters, digits and
    hyphens, at most 64) for a user's own auditor; a user kind may be registered again by
    the same module or the same class (a re-import, a module run as a script and imported),
    never by another class of another module.
    """
    try:
        key: AuditorKind | str = AuditorKind(kind)
    except ValueError:
        if not isinstance(kind, str) or not _KIND_NAME.fullmatch(kind):
            raise InvalidArgumentError(
                "kind", kind, "a built-in AuditorKind or a name of a-z, 0-9 and '-' (at most 64)"
            ) from None
        key = kind

    def register(cls: D) -> D:
        if isinstance(key, str) and not isinstance(key, AuditorKind):
            owner, before = _USER_MODULES.get(key), _DETAIL_TYPES.get(key)
            # The same class again (a module run as a script and imported, a reload) takes
            # over; another class of another module may not.
            if owner not in (None, cls.__module__) and getattr(
                before, "__qualname__", None
            ) != getattr(cls, "__qualname__", None):
                raise InvalidArgumentError(
                    "kind", key, f"a kind not yet registered (it is, by {owner})"
                )
            _USER_MODULES[key] = cls.__module__
        _DETAIL_TYPES[key] = cls
        return cls

    return register


def detail_type(kind: AuditorKind | str, module: str | None = None) -> type:
    """The detail dataclass registered for ``kind``, its module (:data:`DETAIL_MODULES`, or
    ``module`` for a user kind read from JSON) loaded on first use.

    Importing ``module`` runs it, as loading any plugin does: read results of user kinds
    only from sources you trust.
    """
    try:
        key: AuditorKind | str = AuditorKind(kind)
    except ValueError:
        if isinstance(kind, str) and kind not in _USER_MODULES and module is not None:
            try:
                importlib.import_module(module)
            except ImportError as exc:
                raise InvalidArgumentError(
                    "detail_module", module, f"an importable module registering {kind!r}"
                ) from exc
        key = auditor_kind(kind)
    if key not in _DETAIL_TYPES:
        importlib.import_module(DETAIL_MODULES[AuditorKind(key)])
    return _DETAIL_TYPES[key]


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

    #: A built-in :class:`AuditorKind`, or a user kind's registered name.
    kind: AuditorKind | str
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
        object.__setattr__(self, "kind", auditor_kind(self.kind))
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
        if not isinstance(self.kind, AuditorKind):
            out["detail_module"] = _USER_MODULES[self.kind]
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
        detail_cls = detail_type(data["kind"], data.get("detail_module"))
        skip = ("detail", "detail_module")
        base = dataclass_fields(cls, {k: v for k, v in data.items() if k not in skip})
        return cls(**base, detail=from_jsonable(detail_cls, data["detail"]))

    @classmethod
    def from_json(cls, text: str) -> AuditResult:
        """The result :meth:`to_json` wrote."""
        return cls.from_dict(json.loads(text))
