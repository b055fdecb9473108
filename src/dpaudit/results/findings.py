"""What the trust checks found: a declaration of the mechanism that its real sampler contradicts.

A plain value, recorded in :class:`dpaudit.results.AuditResult` and rendered by the report;
the checks that produce it live in :mod:`dpaudit.auditors.core.declarations`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DeclarationFinding:
    """A declaration that the real sampler contradicts, with the evidence.

    ``declaration``: ``log_prob`` or ``noise_from_uniform``; ``summary``: the
    finding in words; ``evidence``: the numbers behind it; ``alpha``: the
    check's error (probability of flagging a correct declaration).
    """

    declaration: str
    mechanism: str
    summary: str
    evidence: str
    alpha: float

    def describe(self) -> str:
        """One line: ``finding: <summary> (<evidence>)``."""
        return f"finding: {self.summary} ({self.evidence})"
