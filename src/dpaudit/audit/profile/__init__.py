"""Auditing a whole privacy claim — a profile δ(ε), μ-GDP, a Rényi curve, ρ-zCDP — for one pair.

See :mod:`dpaudit.audit.profile.auditor`.  Imports ``audit/core`` and no other auditor.
"""

from dpaudit.audit.profile.auditor import ProfileAuditConfig, audit_profile
from dpaudit.audit.profile.result import (
    CertifiedSet,
    ProfileAuditResult,
    ProfilePoint,
    RenyiPoint,
)

__all__ = [
    "CertifiedSet",
    "ProfileAuditConfig",
    "ProfileAuditResult",
    "ProfilePoint",
    "RenyiPoint",
    "audit_profile",
]
