"""What only the black-box audit (:mod:`dpaudit.auditors.blackbox.auditor`) reports.

The result itself is the shared :class:`dpaudit.auditors.core.result.AuditResult`
(bound, verdict, witness, trust notes); :class:`BlackBoxDetail` is its
``detail`` for ``kind = blackbox``: how the search ran and how many sets it
certified.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpaudit.auditors.core.result import AuditorKind, register_detail

__all__ = ["BlackBoxDetail"]


@register_detail(AuditorKind.BLACKBOX)
@dataclass(frozen=True)
class BlackBoxDetail:
    """The black-box search behind a result.

    ``mode``: ``dpaudit`` (the staged search) or ``dpsniper`` (as published);
    ``attack_families``: the score families trained; ``pairs_tried``: input
    pairs searched; ``sets_compared``: candidate sets ranked on the selection
    samples; ``certified_proposals``: ``K``, the sets re-estimated together on
    the final samples (each one-sided bound at ``α/(2K)``, Bonferroni).
    """

    mode: str
    attack_families: tuple[str, ...]
    pairs_tried: int
    sets_compared: int
    certified_proposals: int
