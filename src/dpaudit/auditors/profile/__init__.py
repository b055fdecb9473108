"""Auditing a whole privacy claim — a profile δ(ε), μ-GDP, a Rényi curve, ρ-zCDP — for one pair.

See :mod:`dpaudit.auditors.profile.auditor`.  Imports ``auditors/core`` and no other auditor.
"""

from dpaudit.auditors.profile.auditor import ProfileAuditConfig, ProfileAuditor, audit_profile
from dpaudit.auditors.profile.result import (
    ProfileDetail,
    ProfilePoint,
    RenyiPoint,
)

__all__ = [
    "ProfileAuditConfig",
    "ProfileAuditor",
    "ProfileDetail",
    "ProfilePoint",
    "RenyiPoint",
    "audit_profile",
]
