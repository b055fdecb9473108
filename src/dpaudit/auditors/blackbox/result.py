"""What only the black-box audit (:mod:`dpaudit.auditors.blackbox.auditor`) reports.

The result itself is the shared :class:`dpaudit.results.audit.AuditResult`
(bound, verdict, witness, trust notes); :class:`BlackBoxDetail` is its
``detail`` for ``kind = blackbox``: how the search ran, and every set it
certified together (:class:`CertifiedSet`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dpaudit.auditors.core.certify import FinalCounts, certify
from dpaudit.results.audit import AuditorKind, register_detail

__all__ = ["BlackBoxDetail", "CertifiedSet"]


@dataclass(frozen=True)
class CertifiedSet:
    """One set the final stage certified, under the Bonferroni split it shares with the rest.

    ``role``: why the search proposed it: ``"best"`` (one of the ranking's best
    candidates; the first is the ranking's winner), ``"runner-up"`` (a group the
    playoff could not tell from the leader's), ``"hedge"`` (the leading group's
    best under the whole ranking's margin), ``"rung"`` (a smaller set of the
    winner's kind, the ladder) or ``"rare"`` (a rare-event set).  ``pair_index``:
    the pair (0-based, in the order the search tried them); ``numerator_is_x``:
    whether the statement reads ``Pr[M(x) ∈ S] ≤ e^ε Pr[M(x') ∈ S] + δ`` with
    ``x`` first; ``event``: the score family and the set in words.  ``hits_x`` and
    ``hits_x_prime`` are its final hits among ``samples`` outputs of the
    numerator's and the denominator's input, ``epsilon_lower_bound`` its bound
    at ``α/(2K)`` (the witness is the largest).  ``face_projection``: the bound
    it projected at face value on the ranking's counts (scaled to the final
    size, no selection margin), the number the ladder compares rungs by; the
    winner's is inflated by having won, which is why a final bound is usually
    lower.
    """

    role: str
    pair_index: int
    numerator_is_x: bool
    event: str
    hits_x: int
    hits_x_prime: int
    samples: int
    epsilon_lower_bound: float
    face_projection: float

    @property
    def final_counts(self) -> FinalCounts:
        """Its final hits as the certification core takes them (numerator first)."""
        return FinalCounts(self.hits_x, self.samples, self.hits_x_prime, self.samples)


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
    mode, which certifies one set, and when nothing was certified).
    """

    mode: str
    attack_families: tuple[str, ...]
    pairs_tried: int
    sets_compared: int
    certified_proposals: int
    certified: tuple[CertifiedSet, ...] = ()

    def kept_by_face_bar(self, c: CertifiedSet) -> bool:
        """Whether the ladder bar ``"face"`` would have proposed set ``c``.

        Under it a rung is proposed only when its ``face_projection`` is above the
        winner's (``certified[0]``); every other set is proposed alike.
        """
        return c.role != "rung" or c.face_projection > self.certified[0].face_projection

    def recertified(
        self, keep: Callable[[CertifiedSet], bool], confidence: float, delta: float = 0.0
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
        counts = [c.final_counts for c in kept]
        return max(0.0, max(cert.lower_bound for cert in certify(counts, confidence, delta)))
