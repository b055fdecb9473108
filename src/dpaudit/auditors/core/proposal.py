"""What an auditor proposes to the core: an ordered input pair, an event, and why.

A proposal is the statement ``Pr[M(a) ∈ S] > e^ε·Pr[M(b) ∈ S] + δ`` an auditor wants
certified, before any final sample is drawn: ``pair_index`` names the pair among those it
tried, ``forward`` the order (``a, b = x, x'``, else ``x', x``), ``event`` the set ``S`` — a
picklable predicate on blocks of outputs, or the auditor's own descriptor of one (a search
candidate, a likelihood-ratio threshold) that its counting unit evaluates — and ``role`` why
it was proposed (``"best"``, ``"runner-up"``, ``"likelihood ratio"``, ``"text feature"`` …).
The core certifies proposals together (:mod:`dpaudit.auditors.core.certify`) and records
each as a :class:`~dpaudit.results.CertifiedStatement` (:func:`record`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dpaudit.auditors.core.certify import Certificate, FinalCounts
from dpaudit.results.statement import CertifiedStatement

__all__ = ["Proposal", "record"]


@dataclass(frozen=True)
class Proposal:
    """One statement to certify: pair, direction, event and role (module docstring)."""

    pair_index: int
    forward: bool
    event: Any
    role: str


def record(
    proposal: Proposal,
    counts: FinalCounts,
    certificate: Certificate,
    event_text: str,
    **extra: Any,
) -> CertifiedStatement:
    """``proposal`` as certified: its final ``counts``, its ``certificate`` and its set in words.

    ``extra``: the optional fields of :class:`~dpaudit.results.CertifiedStatement` the
    auditor records (``face_projection``; ``threshold`` and ``above``).
    """
    return CertifiedStatement(
        pair_index=proposal.pair_index,
        forward=proposal.forward,
        event=event_text,
        role=proposal.role,
        p1_hits=counts.hits_x,
        p1_samples=counts.samples_x,
        p2_hits=counts.hits_x_prime,
        p2_samples=counts.samples_x_prime,
        p1_lower=certificate.p1.bound,
        p2_upper=certificate.p2.bound,
        error=certificate.p1.bound_error,
        epsilon_lower_bound=certificate.lower_bound,
        **extra,
    )
