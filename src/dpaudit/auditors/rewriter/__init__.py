"""Auditing LM rewriters: exact white-box losses and text features propose; the core certifies.

* :mod:`.whitebox`: teacher-forced exact losses, the declared-decoding check, certified sets.
* :mod:`.exact`, :mod:`.fidelity`: the two white-box measurements.
* :mod:`.result`: typed results.
"""

from dpaudit.auditors.rewriter.fidelity import FidelityCheck
from dpaudit.auditors.rewriter.result import PairFindings, RewriterAuditResult, Statement
from dpaudit.auditors.rewriter.whitebox import RewriterAuditConfig, audit_rewriter, exact_violation

__all__ = [
    "FidelityCheck",
    "PairFindings",
    "RewriterAuditConfig",
    "RewriterAuditResult",
    "Statement",
    "audit_rewriter",
    "exact_violation",
]
