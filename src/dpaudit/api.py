"""The one public entry of the auditors: ``dpaudit.audit(mechanism, claim, ...)``.

It chooses the auditor from the mechanism's declared output kind: a word-level
mechanism (output kind ``"word"``, a metric-DP claim) is
audited pair by pair against ``ε·d(w, w')`` by the metric auditor; any other
mechanism, or a plain function ``f(x, n, rng)`` with a
:class:`~dpaudit.claims.PrivacyClaim`, by the black-box auditor.  Both propose
input pairs and output sets on samples of their own and have their bounds
certified on fresh samples by :mod:`dpaudit.auditors.core.certify`.

The ACL 2022 sanity check is a different test (a fixed attack on constant
inputs), so it keeps its own entry, :func:`dpaudit.sanity_check`.

Every auditor returns the one typed result,
:class:`~dpaudit.results.audit.AuditResult`, whose ``detail`` is its
auditor's own frozen dataclass (re-exported here with it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from dpaudit.auditors.blackbox.auditor import audit as audit_blackbox
from dpaudit.auditors.blackbox.config import AuditConfig
from dpaudit.auditors.blackbox.result import BlackBoxDetail, CertifiedSet
from dpaudit.auditors.metric.auditor import MetricAuditConfig, audit_metric
from dpaudit.auditors.metric.result import MetricDetail, PairResult
from dpaudit.auditors.profile.result import ProfileDetail
from dpaudit.auditors.rewriter.result import RewriterDetail
from dpaudit.auditors.sanity.check import SanityDetail
from dpaudit.claims import MetricClaim, PrivacyClaim
from dpaudit.engine.config import ExecutionConfig
from dpaudit.errors import InvalidArgumentError, InvalidTypeError
from dpaudit.mechanisms.base import Mechanism, MechanismContract
from dpaudit.mechanisms.word.base import WordMechanism
from dpaudit.results.audit import AuditorKind, AuditResult
from dpaudit.testing import as_mechanism

# Importing every auditor's detail type here registers it, so that
# ``AuditResult.from_dict`` reads any auditor's JSON once ``dpaudit.api`` is loaded.
__all__ = [
    "AuditResult",
    "AuditorKind",
    "BlackBoxDetail",
    "CertifiedSet",
    "MetricDetail",
    "PairResult",
    "ProfileDetail",
    "RewriterDetail",
    "SanityDetail",
    "audit",
]


def audit(
    mechanism: Mechanism | WordMechanism | Callable[..., Any],
    claim: PrivacyClaim | float | None = None,
    *,
    config: AuditConfig | MetricAuditConfig | None = None,
    execution: ExecutionConfig | None = None,
) -> AuditResult:
    """Audit ``mechanism`` against ``claim`` and return the typed result with its witness.

    ``mechanism``: a registered or user :class:`~dpaudit.mechanisms.base.Mechanism`,
    a word mechanism, or a function ``f(x, n, rng)`` returning ``n`` outputs
    (then ``claim`` must be a :class:`~dpaudit.claims.PrivacyClaim`, which
    carries the input domain).  ``claim``: None (the mechanism's own claim), a
    number (its claim with that ε) or a claim.  ``config``:
    :class:`~dpaudit.auditors.blackbox.config.AuditConfig` for the black-box
    auditor, :class:`~dpaudit.auditors.metric.auditor.MetricAuditConfig` for a
    word mechanism (None: defaults).  ``execution``: workers and backend.

    The result's lower bound holds with probability ≥ the configured confidence;
    a result without a violation means "no violation found" (or *inconclusive*),
    never that the mechanism is private.
    """
    if isinstance(mechanism, MechanismContract) and mechanism.output_kind == "word":
        own = mechanism.claim
        if claim is not None and not _same_metric_claim(claim, own):
            # Silently auditing the mechanism's own claim instead would answer another question.
            raise InvalidArgumentError(
                "claim",
                claim.describe() if isinstance(claim, MetricClaim) else claim,
                f"None or the mechanism's own claim ({own.describe()}) for a word "
                "mechanism: it is audited against ε·d with its own ε and metric",
            )
        if config is not None and not isinstance(config, MetricAuditConfig):
            raise InvalidTypeError("config", config, "a MetricAuditConfig for a word mechanism")
        return audit_metric(cast(WordMechanism, mechanism), config, execution)
    if config is not None and not isinstance(config, AuditConfig):
        raise InvalidTypeError("config", config, "an AuditConfig for a vector mechanism")
    return audit_blackbox(as_mechanism(mechanism, claim), config, execution)


def _same_metric_claim(claim: object, own: MetricClaim) -> bool:
    """Whether ``claim`` states the word mechanism's own claim (same ε, same metric)."""
    return (
        isinstance(claim, MetricClaim)
        and claim.epsilon == own.epsilon
        and claim.describe() == own.describe()
    )
