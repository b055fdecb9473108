"""What an audit answers, as plain typed values: the leaf every layer above the basics reads.

* :class:`AuditResult` — one audit of one claim: bound, :class:`~dpaudit.verdicts.Verdict`,
  :class:`~dpaudit.witness.Witness`, power, trust notes and its auditor's ``detail``;
  ``to_dict``/``from_dict`` serialise it once (:mod:`dpaudit.results.audit`);
* :class:`AuditorKind` — which auditor produced a result (the ``kind`` tag of its JSON);
* :class:`CertifiedStatement` — one statement an auditor certified: its ordered pair,
  event, final counts and bounds (:mod:`dpaudit.results.statement`);
* :class:`DeclarationFinding` — a declaration the real sampler contradicts
  (:mod:`dpaudit.results.findings`).

This package imports only the basics (errors, serialization, verdicts, witness), so the run
directory, the report and every auditor can read results without importing each other.
"""

from dpaudit.results.audit import (
    DETAIL_MODULES,
    AuditorKind,
    AuditResult,
    detail_type,
    register_detail,
)
from dpaudit.results.findings import DeclarationFinding
from dpaudit.results.statement import CertifiedStatement
from dpaudit.verdicts import Verdict
from dpaudit.witness import Witness

__all__ = [
    "DETAIL_MODULES",
    "AuditResult",
    "AuditorKind",
    "CertifiedStatement",
    "DeclarationFinding",
    "Verdict",
    "Witness",
    "detail_type",
    "register_detail",
]
