"""The stage keys of every auditor's random streams, named once.

A work unit's generator is ``unit_rng(seed, (stage, …))`` (:mod:`dpaudit.random`):
the stage key at the head of its key keeps one stage's outputs apart from every
other stage's of the same auditor, so switching a stage off leaves the other
stages' samples unchanged, and the final certification's samples are never ones a
proposer saw.  :class:`StageKey` names each of them with the integer it has always
had, so every stream (hence every reported bound) is the one it was before it had a
name.

Values are unique within one auditor's audit, not across auditors: the profile
auditor's keys 0–2 are older than the black box's, so ``PROFILE_FINAL`` has
``TRAIN``'s value and ``PROFILE_BAND`` ``SELECT``'s (Python makes them aliases of
one member).  Where two auditors sample one mechanism in one audit (``dpaudit.audit`` on
an (ε, δ) claim runs the search and the profile certifier), the second draws under a
root seed of its own, so no stream is shared.  The rewriter auditors put the key last,
after ``(seed, pair)``.
Imports nothing.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["PAIR_SEARCH_ROUNDS", "StageKey", "final_look", "pair_search_round"]

#: Rounds the pair search may run: its keys ``PAIR_SEARCH + r`` stay below ``METRIC_SELECT``.
PAIR_SEARCH_ROUNDS = 9


class StageKey(IntEnum):
    """The stage key at the head (profile, metric, black box) or tail (rewriters) of a unit key."""

    # Black box, dpaudit mode (4 was a removed validation stage's; its number stays unused).
    TRAIN = 1
    SELECT = 2
    FINAL = 3
    PLAYOFF = 5
    RARE_SCAN = 6
    # Black box: the input design's screen and its refinement (:mod:`...blackbox.design`).
    DESIGN = 7
    DESIGN_CONFIRM = 8
    # Black box, DP-Sniper mode.
    SNIPER_TRAIN = 11
    SNIPER_CHECK = 12
    SNIPER_FINAL = 13
    # Black box: the pair search's round r draws its training outputs from PAIR_SEARCH + r.
    PAIR_SEARCH = 20
    # Metric (word mechanisms).
    METRIC_SELECT = 21
    METRIC_FINAL = 22
    METRIC_RANK = 23
    # Black box, sequential final stage: look l ≥ 1 draws from FINAL_LOOK + l (look 0 is FINAL).
    FINAL_LOOK = 30
    # Profile auditor: selection, final counts, the trade-off curve's DKW band.
    PROFILE_SELECT = 0
    PROFILE_FINAL = 1
    PROFILE_BAND = 2
    # Profile auditor's caller: the sample that decides whether the float bits are scored.
    PROFILE_BITS = 9
    # Rewriter, white box: one unit per pair and stage, ``(seed, pair, key)``.
    REWRITE_SELECT = 0
    REWRITE_FINAL = 1
    # Rewriter, white box: the recorded runs a declaration is compared with, ``(seed, key)``.
    REWRITE_DECLARED = 2
    # Rewriter, white box: the timed pilot that sizes an audit to its budget (discarded).
    REWRITE_PILOT = 3
    # Rewriter, black box: one stream per input and stage, ``(seed, pair, key)``.
    REWRITE_SELECT_X = 0
    REWRITE_SELECT_X_PRIME = 1
    REWRITE_FINAL_X = 2
    REWRITE_FINAL_X_PRIME = 3


def pair_search_round(r: int) -> int:
    """The stage key of the pair search's round ``r`` (1 ≤ r ≤ :data:`PAIR_SEARCH_ROUNDS`)."""
    if not 1 <= r <= PAIR_SEARCH_ROUNDS:
        raise ValueError(f"pair search round {r} outside 1..{PAIR_SEARCH_ROUNDS}")
    return int(StageKey.PAIR_SEARCH) + r


def final_look(look: int) -> int:
    """The stage key of a sequential final stage's look ``look`` (0: ``FINAL`` itself)."""
    if not 0 <= look <= 9:
        raise ValueError(f"final look {look} outside 0..9")
    return int(StageKey.FINAL) if look == 0 else int(StageKey.FINAL_LOOK) + look
