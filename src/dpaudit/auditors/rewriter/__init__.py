"""Auditing LM rewriters: exact white-box losses and text features propose; the core certifies.

* :mod:`.blackbox`: text features propose sets for a mechanism given only as a function.
* :mod:`.whitebox`: teacher-forced exact losses, the declared-decoding check, certified sets.
* :mod:`.exact`, :mod:`.fidelity`: the two white-box measurements.
* :mod:`.result`: typed results.
"""

from dpaudit.auditors.rewriter.blackbox import TextAuditConfig, TextAuditor, audit_text_mechanism
from dpaudit.auditors.rewriter.fidelity import FidelityCheck
from dpaudit.auditors.rewriter.result import (
    PairFindings,
    ReviewerChecks,
    RewriterDetail,
    Statement,
    summary,
)
from dpaudit.auditors.rewriter.whitebox import (
    RewriterAuditConfig,
    RewriterAuditor,
    audit_rewriter,
    exact_violation,
)

__all__ = [
    "FidelityCheck",
    "PairFindings",
    "ReviewerChecks",
    "RewriterAuditConfig",
    "RewriterAuditor",
    "RewriterDetail",
    "Statement",
    "TextAuditConfig",
    "TextAuditor",
    "audit_rewriter",
    "audit_text_mechanism",
    "exact_violation",
    "summary",
]
