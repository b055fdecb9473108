"""Adaptive pair search: local moves around the pairs that look best on the audit's own samples.

The patterns of :mod:`dpaudit.auditors.blackbox.pairs` are a fixed guess at where
the worst pair of a box lies.  Like DP-Auditorium's Vizier pair generator
(Kong et al., "DP-Auditorium: a Large Scale Library for Auditing Differential
Privacy", IEEE S&P 2024) and Delta-Siege's optuna search over inputs (Lokna et
al., "Group and Attack: Auditing Differential Privacy", CCS 2023), the search
proposes new pairs where the estimates point: for a few rounds, the ``parents``
best pairs so far (by the best bound any of their trained sets projects, the
screen's measure) each get ``moves`` single-entry moves inside the box
(:func:`local_moves`: flip an entry's step, stop it, start it face to face,
shift a still entry, or halve a step), and the new pairs are trained on
training outputs of their own.  A move joins the other pairs only when its best
set's log-ratio estimate beats its parent's by more than ``z`` standard errors
(both on training outputs), ``z`` Bonferroni-corrected for the round's moves
(:meth:`~dpaudit.auditors.blackbox.config.SearchConfig.pair_search_z`: a round
keeps a move no better than its parent with probability ≤ 0.1).  A move that
merely ties its parent (a half step of a corner pair, a mirror copy) would add a
near-copy of a pair to the ranking, one more chance for a lucky count there (the
winner's curse): keeping every move cost ReportNoisyMax3 0.01 at 1/100 of
DP-Sniper's sizes, and a fixed z = 1 let about two lucky moves a round through on
SparseVectorTechnique4, whose winner then certified 0.097 instead of ≈ 0.13.

**It costs no confidence.**  Every estimate it uses comes from training outputs
(stage codes :func:`~dpaudit.auditors.core.streams.pair_search_round`,
disjoint from every other stage's and from the final samples).  The moves it
keeps join the other pairs: their candidate sets are counted in the multiplicity
margin of the screen and the ranking like every other candidate (a dropped move
is never ranked nor certified), and whatever
set finally wins is certified on fresh final samples, with ``K`` the number of
sets certified (:func:`dpaudit.auditors.core.certify.certify`); no choice made
on samples the certification does not see can make the bound invalid.

Which moves are tried is drawn from a generator seeded by the audit's seed and
the round, so an audit is reproducible.  Imports nothing above ``auditors/``.
"""

from __future__ import annotations

import numpy as np

from dpaudit.auditors.blackbox.pairs import InputPair, listed_pairs, pattern_box, pattern_radius
from dpaudit.mechanisms.base import Mechanism


def searchable(mechanism: Mechanism) -> bool:
    """True when any two points of the mechanism's box are neighbours and moves make sense.

    Not for one-coordinate integer (categorical) domains — their pairs are
    enumerated — nor for mechanisms that list their own neighbouring pairs
    (typed datasets: a moved input need not be a neighbour).
    """
    domain = mechanism.input_domain
    if listed_pairs(mechanism) is not None:
        return False
    return not (domain.integer and domain.size == 1)


def _key(x: tuple[float, ...], xp: tuple[float, ...]) -> tuple[tuple[float, ...], ...]:
    return tuple(sorted((x, xp)))


def local_moves(pair: InputPair, low: float, high: float, mid: float) -> list[InputPair]:
    """Every single-entry move of ``pair`` inside ``[low, high]``.

    Per entry ``i`` with values ``(a, b)`` in ``x`` and ``x'``: flip the step
    (``(b, a)``), stop it (both at ``a`` or both at ``b``), start a still entry face
    to face (``(low, high)``, ``(high, low)``), move a still entry to another of
    ``low``/``mid``/``high``, or halve a moving step towards the midpoint (either
    end to ``mid``).  Pairs with ``x = x'`` are dropped.
    """
    x, xp = list(pair.x), list(pair.x_prime)
    out: list[InputPair] = []
    for i, (a, b) in enumerate(zip(x, xp, strict=True)):
        if a != b:
            options = [("flip", b, a), ("stop", a, a), ("stop", b, b)]
            options += [("halve", mid, b), ("halve", a, mid)]
        else:
            options = [("start", low, high), ("start", high, low)]
            options += [("shift", v, v) for v in (low, mid, high) if v != a]
        for name, u, v in options:
            nx, nxp = x.copy(), xp.copy()
            nx[i], nxp[i] = u, v
            if nx != nxp:
                out.append(InputPair(nx, nxp, f"pair search: {name} entry {i} of {pair.origin}"))
    return out


def propose_pairs(
    mechanism: Mechanism,
    pairs: list[InputPair],
    scores: list[float],
    parents: int,
    moves: int,
    rng: np.random.Generator,
) -> list[tuple[int, InputPair]]:
    """New pairs: ``moves`` random local moves of each of the ``parents`` best-scored pairs.

    ``scores[i]`` is pair ``i``'s best projected bound on its training outputs.
    Returns ``(parent index, new pair)``.  Pairs already tried (in either order)
    are never proposed again.
    """
    low, high, mid = pattern_box(mechanism.input_domain, pattern_radius(mechanism))
    tried = {_key(p.x, p.x_prime) for p in pairs}
    order = sorted(range(len(pairs)), key=lambda i: -scores[i])
    out: list[tuple[int, InputPair]] = []
    for i in order[:parents]:
        if not np.isfinite(scores[i]):
            continue
        fresh: dict[tuple[tuple[float, ...], ...], InputPair] = {}
        for p in local_moves(pairs[i], low, high, mid):
            fresh.setdefault(_key(p.x, p.x_prime), p)
        options = [p for k, p in fresh.items() if k not in tried]
        picks = [options[j] for j in sorted(rng.permutation(len(options))[:moves])]
        tried.update(_key(p.x, p.x_prime) for p in picks)
        out += [(i, p) for p in picks]
    return out
