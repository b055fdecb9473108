"""What only the black-box audit (:mod:`dpaudit.auditors.blackbox.auditor`) reports.

The result itself is the shared :class:`dpaudit.results.audit.AuditResult`
(bound, verdict, witness, trust notes); :class:`BlackBoxDetail` is its
``detail`` for ``kind = blackbox``: how the search ran, and every set it
certified together (:class:`~dpaudit.results.statement.CertifiedStatement`, with the
black box's ``face_projection``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dpaudit.auditors.core.certify import FinalCounts, certify
from dpaudit.results.audit import AuditorKind, register_detail
from dpaudit.results.statement import CertifiedStatement

__all__ = ["BlackBoxDetail", "statement_counts"]


def statement_counts(c: CertifiedStatement) -> FinalCounts:
    """A recorded statement's final hits as the certification core takes them (numerator first)."""
    return FinalCounts(c.p1_hits, c.p1_samples, c.p2_hits, c.p2_samples)


@register_detail(AuditorKind.BLACKBOX)
@dataclass(frozen=True)
class BlackBoxDetail:
    """The black-box search behind a result.

    ``mode``: ``dpaudit`` (the staged search) or ``dpsniper`` (as published);
    ``attack_families``: the score families trained; ``pairs_tried``: input
    pairs searched; ``sets_compared``: candidate sets ranked on the selection
    samples; ``certified_proposals``: ``K``, the sets re-estimated together on
    the final samples (each one-sided bound at ``α/(2K)``, Bonferroni), and
    ``certified`` those ``K`` sets, in the order proposed (empty in ``dpsniper``
    mode, which certifies one set, and when nothing was certified).  Each records why
    the search proposed it (``role``), its final counts, its bounds at ``α/(2K)`` (the
    witness is the largest ``epsilon_lower_bound``) and its ``face_projection``: the
    bound it projected at face value on the ranking's counts (scaled to the final
    size, no selection margin), the number the ladder compares rungs by; the
    winner's is inflated by having won, which is why a final bound is usually lower.
    """

    mode: str
    attack_families: tuple[str, ...]
    pairs_tried: int
    sets_compared: int
    certified_proposals: int
    certified: tuple[CertifiedStatement, ...] = ()

    def kept_by_face_bar(self, c: CertifiedStatement) -> bool:
        """Whether the ladder bar ``"face"`` would have proposed set ``c``.

        Under it a rung is proposed only when its ``face_projection`` is above the
        winner's (``certified[0]``); every other set is proposed alike.
        """
        winner = self.certified[0].face_projection
        return c.role != "rung" or (
            c.face_projection is not None and winner is not None and c.face_projection > winner
        )

    def recertified(
        self, keep: Callable[[CertifiedStatement], bool], confidence: float, delta: float = 0.0
    ) -> float:
        """The bound (≥ 0) had only the recorded sets that ``keep`` accepts been certified.

        The Bonferroni split is re-made over the kept sets alone.  A set's final
        counts do not depend on which others were certified (the sets of a pair
        share its samples, one slot each), so this is what a search proposing only
        those sets would have certified on the same seed; a randomised tie drawn
        after a dropped set's is the one exception.  E.g. the ``"face"`` ladder bar
        from a run with the lower bar: ``keep=detail.kept_by_face_bar``.
        """
        kept = [c for c in self.certified if keep(c)]
        if not kept:
            return 0.0
        counts = [statement_counts(c) for c in kept]
        return max(0.0, max(cert.lower_bound for cert in certify(counts, confidence, delta)))
