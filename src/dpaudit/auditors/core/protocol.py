"""What an auditor is: a *proposer* the core can ask whether it applies, then let run.

Every auditor of dpaudit has the same three parts, in the spirit of DP-Auditorium's
``interfaces.py`` (a mechanism, a dataset-pair generator, a property tester):

* ``kind`` — the :class:`~dpaudit.results.AuditorKind` its results carry;
* ``supports(mechanism, claim) -> bool`` — whether it can audit that pair at all, answered
  before anything is sampled (as dp_accounting's accountants answer ``supports(event)``):
  an auditor never half-runs on a mechanism or claim it does not understand;
* ``audit(mechanism, claim, config, execution) -> AuditResult`` — propose input pairs and
  output sets with any heuristic on samples of its own, and have them certified on fresh
  samples by :mod:`dpaudit.auditors.core.certify` (Clopper–Pearson, Bonferroni over every
  statement certified together).

An auditor that proposes through the core
(:class:`~dpaudit.auditors.core.procedure.ProposingAuditor`: ``propose`` and ``read``) has
an ``audit`` that is the core's procedure,
:func:`~dpaudit.auditors.core.procedure.run_audit`; ``tests/test_architecture.py`` checks
that every auditor of dpaudit is one.

:func:`error_shares` splits one error budget among several certifiers run on the same claim
(the black-box search and the profile certifier on an (ε, δ) claim): each certifies at its
share, and all their statements hold together at ``1 − α`` by the union bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from dpaudit.errors import InvalidArgumentError
from dpaudit.results import AuditorKind, AuditResult


@runtime_checkable
class Auditor(Protocol):
    """An auditor: its kind, whether it applies to a (mechanism, claim), and the audit itself."""

    kind: AuditorKind

    def supports(self, mechanism: Any, claim: Any) -> bool:
        """Whether this auditor can audit ``mechanism`` against ``claim`` (nothing is sampled)."""
        ...

    def audit(self, mechanism: Any, claim: Any, config: Any, execution: Any) -> AuditResult:
        """Propose on samples of its own, certify on fresh ones, return the typed result."""
        ...


def error_shares(alpha: float, certifiers: Sequence[str]) -> dict[str, float]:
    """Each certifier's share of the error ``alpha`` when they audit one claim together.

    Equal shares: with probability at least ``1 − alpha`` every statement of every certifier
    holds (union bound over the certifiers; each splits its own share further over its
    statements).  A certifier named twice is refused: its statements would be counted once.
    """
    if not 0.0 < alpha < 1.0:
        raise InvalidArgumentError("alpha", alpha, "a probability in (0, 1)")
    if not certifiers or len(set(certifiers)) != len(certifiers):
        raise InvalidArgumentError("certifiers", tuple(certifiers), "distinct names, at least one")
    return {name: alpha / len(certifiers) for name in certifiers}


__all__ = ["Auditor", "error_shares"]
