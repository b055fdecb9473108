"""Input pairs for a metric-DP word audit, found from the embedding's geometry.

A metric-DP claim allows each pair its own loss ``ε·d(w, w')``; the pairs
where published mechanisms break are the ones where that allowance is small
or where the mechanism's behaviour changes abruptly.  Candidates, in order:

* ``user`` — pairs the user gave;
* ``closest`` — the globally closest pairs among the searched words (numbers,
  years, spelling variants: tiny ``d``, so a tiny allowed loss);
* ``nearest`` — frequent words and their nearest neighbour;
* ``neighbourhood`` — close pairs whose ``k`` nearest words differ most
  (the output distributions of nearest-word mechanisms differ there);
* ``radius`` — for a mechanism with a truncation radius γ (TEM): pairs at
  distance just inside and just outside γ, and close pairs whose γ-balls hold
  the most different words;
* ``oov`` — a capitalised or otherwise out-of-vocabulary input against its
  vocabulary word (the claim does not cover them; the audit shows what leaks).

Geometric pairs the claim does not constrain (``d = inf``, e.g. two words in
different CusText output sets) are dropped.  Everything is deterministic given
the embedding (searched words: the first ``search_words`` rows, the most
frequent for GloVe).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpaudit.analysis.word_embedding import WordEmbedding
from dpaudit.mechanisms.word.base import WordMechanism
from dpaudit.validation import check_int

#: Pair origins in the order they are tried.
ORIGINS = ("user", "closest", "nearest", "neighbourhood", "radius", "oov")


@dataclass(frozen=True)
class WordPair:
    """Two input words and why they were chosen."""

    w: str
    w_prime: str
    origin: str


def search_pairs(
    mechanism: WordMechanism,
    max_pairs: int = 24,
    user_pairs: tuple[tuple[str, str], ...] = (),
    search_words: int = 2000,
    neighbours: int = 10,
) -> list[WordPair]:
    """Up to ``max_pairs`` distinct pairs (user pairs first, always kept), geometry next."""
    max_pairs = check_int("max_pairs", max_pairs, minimum=1)
    emb = mechanism.vocabulary
    m = min(check_int("search_words", search_words, minimum=2), emb.size)
    pools: dict[str, list[tuple[str, str]]] = {o: [] for o in ORIGINS}
    pools["user"] = [(a, b) for a, b in user_pairs]
    near, dist = emb.nearest(emb.matrix[:m], k=min(neighbours + 1, emb.size))
    # Column 0 is the word itself unless another word has an identical vector.
    first = np.where(near[:, 0] == np.arange(m), near[:, 1], near[:, 0])
    first_d = np.where(near[:, 0] == np.arange(m), dist[:, 1], dist[:, 0])
    words = emb.words
    for i in np.argsort(first_d, kind="stable"):
        pools["closest"].append((words[i], words[first[i]]))
    for i in range(m):
        pools["nearest"].append((words[i], words[first[i]]))
    pools["neighbourhood"] = _neighbourhood_pairs(near, first, first_d, words, m)
    radius = mechanism.radius
    if radius is not None and np.isfinite(radius):
        pools["radius"] = _radius_pairs(emb, radius, first, first_d, min(m, 300))
    for i in range(min(m, 50)):
        w = words[i]
        for variant in (w.capitalize(), w.upper()):
            if variant != w and variant not in emb:
                pools["oov"].append((variant, w))
                break
    metric = mechanism.claim.metric
    for origin in ("closest", "nearest", "neighbourhood", "radius"):
        pool = pools[origin]
        if pool:  # pairs the claim does not constrain tell nothing about it (OOV pool aside)
            d = metric.distances([a for a, _ in pool], [b for _, b in pool])
            pools[origin] = [pair for pair, di in zip(pool, d, strict=True) if np.isfinite(di)]
    return _interleave(pools, max_pairs)


def _neighbourhood_pairs(
    near: np.ndarray, first: np.ndarray, first_d: np.ndarray, words: tuple[str, ...], m: int
) -> list[tuple[str, str]]:
    """Close pairs ranked by how many of their k nearest words differ, per unit distance."""
    sets = [set(row.tolist()) for row in near]
    score = np.zeros(m)
    for i in range(m):
        j = int(first[i])
        if j < m:
            score[i] = len(sets[i] ^ sets[j]) / max(first_d[i], 1e-12)
    order = np.argsort(-score, kind="stable")
    return [(words[i], words[first[i]]) for i in order if score[i] > 0]


def _radius_pairs(
    emb: WordEmbedding, radius: float, first: np.ndarray, first_d: np.ndarray, m: int
) -> list[tuple[str, str]]:
    """Pairs at distance just inside/outside ``radius``; close pairs whose balls differ most."""
    out: list[tuple[str, str]] = []
    ranked: list[tuple[float, int, int]] = []
    for i in range(m):
        d = emb.distances_from(i)
        d[i] = np.inf
        inside = np.flatnonzero(d <= radius)
        outside = np.flatnonzero(d > radius)
        if len(inside):
            out.append((emb.words[i], emb.words[inside[np.argmax(d[inside])]]))
        if len(outside):
            out.append((emb.words[i], emb.words[outside[np.argmin(d[outside])]]))
        j = int(first[i])
        dj = emb.distances_from(j)
        d[i] = 0.0
        differ = int(np.count_nonzero((d <= radius) != (dj <= radius)))
        ranked.append((differ / max(float(first_d[i]), 1e-12), i, j))
    ranked.sort(key=lambda t: -t[0])
    balls = [(emb.words[i], emb.words[j]) for _, i, j in ranked]
    # Alternate: ball-difference pairs and straddling pairs.
    merged: list[tuple[str, str]] = []
    for k in range(max(len(balls), len(out))):
        if k < len(balls):
            merged.append(balls[k])
        if k < len(out):
            merged.append(out[k])
    return merged


def _interleave(pools: dict[str, list[tuple[str, str]]], max_pairs: int) -> list[WordPair]:
    """User pairs first, then one from each pool in turn until ``max_pairs``."""
    chosen: list[WordPair] = []
    seen: set[frozenset[str]] = set()

    def take(a: str, b: str, origin: str) -> None:
        key = frozenset((a, b))
        if a != b and key not in seen:
            seen.add(key)
            chosen.append(WordPair(a, b, origin))

    for a, b in pools["user"]:
        take(a, b, "user")
    cursors = {o: 0 for o in ORIGINS if o != "user"}
    while len(chosen) < max(max_pairs, len(pools["user"])) and cursors:
        for origin in list(cursors):
            pool = pools[origin]
            before = len(chosen)
            while cursors[origin] < len(pool) and len(chosen) == before:
                a, b = pool[cursors[origin]]
                cursors[origin] += 1
                take(a, b, origin)
            if cursors[origin] >= len(pool):
                del cursors[origin]
            if len(chosen) >= max_pairs:
                break
    return chosen
