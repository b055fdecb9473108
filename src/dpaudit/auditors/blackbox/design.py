"""The search's first stage, ``design``: inputs spread over the whole domain, screened cheaply.

The box patterns (:mod:`~dpaudit.auditors.blackbox.pairs`) and the pair search's local
moves visit the corners, faces and midpoint of the domain: a mechanism that misbehaves
only for inputs in a narrow interior interval, or for one category of many, is never
shown one of them.  This stage looks everywhere first, in the spirit of DP-Auditorium's
Vizier pair search (Kong et al., S&P 2024) and Delta-Siege's optuna search over inputs
(Lokna et al., CCS 2023), but with every choice made on samples of its own so the final
certification stays valid:

1. **Design.**  Up to :data:`DESIGN_POINTS` inputs: every point the audit's own pairs use,
   then a scrambled Sobol sequence over the box (seeded by the audit's seed; integer
   boxes round it), or every category of a categorical domain of up to that many
   categories.
2. **Screen.**  Each point is sampled once (``n`` outputs, stage key ``DESIGN``) and every
   pair of points is scored by the largest conservative log-ratio
   ``ln CP_lower(k_a) − ln CP_upper(k_b)`` over a family of output sets read from the
   pooled outputs: tails and bins at pooled quantiles of each output coordinate (and of
   the row sum), and the values that repeat (atoms).  One sample per point serves every
   pair among them, so the screen costs ``points × n`` outputs for ``points²/2`` pairs.
3. **Refine.**  The best screened pairs, their inputs moved by fractions of the design's
   spacing, and the audit's best own pair are re-scored on fresh outputs (``4n`` per
   point, stage key ``DESIGN_CONFIRM``): successive halving.
4. **Keep.**  At most :data:`DESIGN_KEEP` design pairs join the audit's pairs, and only
   those that beat the audit's own best pair in both rounds: where the leak is at the
   corners (an additive-noise mechanism), nothing is added and the rest of the search
   runs exactly as without this stage.

**It costs no confidence.**  Its outputs come from stage keys no other stage uses; the
pairs it keeps are trained, ranked and (if they win) certified on fresh final samples
like every other pair, and the ranking's multiplicity margin counts their sets.

**What it cannot see.**  A leak at one exact real input value (or in an interval far
narrower than the spacing ``1/points`` of the design) is visited only by luck; the
result says how many points were screened and that inputs not tried are not covered.
Imports nothing above ``auditors/``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dpaudit.auditors.blackbox.config import SearchConfig
from dpaudit.auditors.blackbox.pair_search import searchable
from dpaudit.auditors.blackbox.pairs import (
    InputPair,
    only_listed_are_neighbours,
    pattern_box,
    pattern_radius,
)
from dpaudit.auditors.blackbox.scores import TrainingData
from dpaudit.auditors.blackbox.shortlist import Budget, Shortlist
from dpaudit.auditors.core.statistics import clopper_pearson_lower, clopper_pearson_upper
from dpaudit.auditors.core.streams import StageKey

#: Inputs the design screens at most (every pair among them is scored).
DESIGN_POINTS = 128
#: Design pairs that may join the audit's pairs.
DESIGN_KEEP = 2
#: Pairs the first screen sends to the refinement, and points refined around.
DESIGN_REFINE_PAIRS, DESIGN_REFINE_POINTS = 8, 2
#: The design's first screen draws at most this share of the ranking's outputs of the
#: audit's own pairs, and at least this many outputs per point.
DESIGN_SHARE, DESIGN_MIN_SAMPLES = 0.25, 256
#: Standard errors by which a design pair must beat the audit's best own pair on the
#: refinement's outputs to join (near-copies of a corner pair add cost, not power).
DESIGN_Z = 3.0
#: Error of the screen's one-sided bounds: a shrinkage for ranking, not a confidence.
SCREEN_ERROR = 1e-3
#: Pooled quantile levels of the tails and bins each output coordinate is screened on.
QUANTILES = (0.001, 0.003, 0.01, 0.03, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
QUANTILES = QUANTILES + tuple(1.0 - q for q in reversed(QUANTILES[:4]))
#: Output coordinates screened (the first ones), and the most repeated values kept as atoms.
SCREEN_COORDINATES, SCREEN_ATOMS = 8, 16
#: Pooled outputs the set family is read from (a deterministic subsample beyond it).
POOL_ROWS = 1 << 18


@dataclass(frozen=True)
class OutputSets:
    """The screen's set family on outputs: per column, quantile edges and atoms."""

    edges: tuple[np.ndarray, ...]
    atoms: tuple[np.ndarray, ...]

    @classmethod
    def read(cls, columns: np.ndarray, weights: np.ndarray) -> OutputSets:
        """Edges at the pooled quantiles and the most repeated values of every column."""
        edges, atoms = [], []
        for c in range(columns.shape[1]):
            v = columns[:, c]
            ok = np.isfinite(v)
            values = np.unique(v[ok])
            w = np.bincount(np.searchsorted(values, v[ok]), weights[ok], len(values))
            if len(values) == 0:
                edges.append(np.zeros(0))
                atoms.append(np.zeros(0))
                continue
            cum = np.cumsum(w) / w.sum()
            idx = np.minimum(np.searchsorted(cum, QUANTILES), len(values) - 1)
            edges.append(np.unique(values[idx]))
            repeated = np.argsort(-w, kind="stable")[:SCREEN_ATOMS]
            atoms.append(np.sort(values[repeated[w[repeated] >= 3]]))
        return cls(tuple(edges), tuple(atoms))

    def count(self, columns: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """Weighted hits of every set, per column: ``{y < e}`` and ``{y ≥ e}`` at each edge ``e``,
        the bins between edges, each atom ``{y = a}``, then ``{y is NaN}``."""
        out = []
        for c, (e, a) in enumerate(zip(self.edges, self.atoms, strict=True)):
            v = columns[:, c]
            nan = np.isnan(v)
            bins = np.bincount(
                np.searchsorted(e, np.where(nan, -np.inf, v), side="right")[~nan],
                weights[~nan],
                len(e) + 1,
            )
            below = np.cumsum(bins)[:-1]
            total = float(weights[~nan].sum())
            hits = [below, total - below, bins]
            if len(a):
                pos = np.searchsorted(a, v)
                at = (pos < len(a)) & (a[np.minimum(pos, len(a) - 1)] == v)
                hits.append(np.bincount(pos[at], weights[at], len(a)))
            hits.append(np.array([float(weights[nan].sum())]))
            out.append(np.concatenate(hits))
        return np.concatenate(out)


def screen_columns(rows: np.ndarray) -> np.ndarray:
    """The output columns the screen reads: the first coordinates and, for more, the sum."""
    flat = np.asarray(rows, dtype=np.float64).reshape(len(rows), -1)
    cols = flat[:, :SCREEN_COORDINATES]
    if flat.shape[1] > 1:
        cols = np.column_stack([cols, flat.sum(axis=1)])
    return cols


def pair_scores(hits: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``S[a, b]``: the best ``ln CP_lower(hits_a) − ln CP_upper(hits_b)`` over the sets,
    and ``E[a, b]``: the standard error of that set's log-ratio estimate.

    ``hits[a]``: point ``a``'s weighted hits of every set, of ``n[a]`` outputs.
    """
    k = np.rint(hits).astype(np.int64)
    size = n[:, None] * np.ones_like(k)
    with np.errstate(divide="ignore"):
        lo = np.log(clopper_pearson_lower(k, size, SCREEN_ERROR))
        hi = np.log(clopper_pearson_upper(k, size, SCREEN_ERROR))
    inv = 1.0 / np.maximum(k, 1)
    scores = np.full((len(k), len(k)), -np.inf)
    errors = np.zeros((len(k), len(k)))
    for a in range(len(k)):
        gap = lo[a][None, :] - hi
        best = np.argmax(gap, axis=1)
        scores[a] = gap[np.arange(len(k)), best]
        errors[a] = np.sqrt(inv[a][best] + inv[np.arange(len(k)), best])
    np.fill_diagonal(scores, -np.inf)
    return scores, errors


@dataclass(frozen=True)
class Design:
    """Screen a space-filling design of inputs; add the pairs that beat the audit's own."""

    name: ClassVar[str] = "design"
    points: int
    keep: int
    floor: int
    fraction: int

    @classmethod
    def of(cls, search: SearchConfig) -> Design:
        points = DESIGN_POINTS if search.input_design else 0
        return cls(points, DESIGN_KEEP, search.train_floor, search.train_fraction)

    def applies(self, budget: Budget) -> bool:
        """On generated pairs of a box whose inputs are all neighbours (not dpsniper mode)."""
        cfg, mech = budget.config, budget.mechanism
        if cfg.mode != "dpaudit" or not cfg.use_patterns or self.points < 2:
            return False
        if only_listed_are_neighbours(mech):  # a dataset: only listed and design pairs are
            return bool(design_neighbours(mech))
        domain = mech.input_domain
        return searchable(mech) or (domain.integer and domain.size == 1)

    def screen_samples(self, budget: Budget, points: int) -> int:
        """Outputs per point in the first screen: a sixteenth of the training sample, but
        all points together at most :data:`DESIGN_SHARE` of what the ranking draws for the
        audit's own pairs (a slow mechanism pays for the design in proportion), and at
        least :data:`DESIGN_MIN_SAMPLES` (never more than the training sample)."""
        cfg = budget.config
        n_train = cfg.train_samples or min(
            cfg.samples, max(self.floor, cfg.samples // self.fraction)
        )
        share = int(DESIGN_SHARE * 2 * cfg.samples * max(1, len(budget.pairs)) / points)
        return min(n_train, max(DESIGN_MIN_SAMPLES, min(n_train // 16, share)))

    def run(self, state: Shortlist, budget: Budget) -> Shortlist:
        if not self.applies(budget):
            return state
        own = list(state.pairs or budget.pairs)
        # A dataset's inputs are not all neighbours: only its design pairs are screened.
        allowed = design_neighbours(budget.mechanism)
        if allowed:
            points = list(dict.fromkeys(p for q in own for p in (q.x, q.x_prime)))
            points += [p for a, b, _ in allowed for p in (a, b)]
            points = list(dict.fromkeys(points))
        else:
            points = design_points(budget.mechanism, own, self.points, budget.config.seed)
        if len(points) <= 2:
            return state
        n = self.screen_samples(budget, len(points))
        samples = {**state.samples, "design": n}
        state = dataclasses.replace(state, screened=len(allowed) if allowed else len(points))
        first = Screened.of(budget, points, n, StageKey.DESIGN)
        own_pairs = [(p.x, p.x_prime) for p in own if first.has(p.x) and first.has(p.x_prime)]
        best_own = max(own_pairs, key=first.score, default=None)
        bar = -np.inf if best_own is None else first.score(best_own)
        among = [(a, b) for a, b, _ in allowed] if allowed else None
        top = [ab for ab in first.best(DESIGN_REFINE_PAIRS, among) if first.score(ab) > bar]
        top = [ab for ab in top if ab not in own_pairs and ab[::-1] not in own_pairs]
        if not top:
            return dataclasses.replace(state, samples=samples)
        refined = (
            [] if allowed else _refined(budget.mechanism, len(points), top[:DESIGN_REFINE_POINTS])
        )
        candidates = top + refined
        inputs = [p for ab in [*candidates, *([best_own] if best_own else [])] for p in ab]
        second = Screened.of(budget, list(dict.fromkeys(inputs)), 4 * n, StageKey.DESIGN_CONFIRM)
        screened = f"{len(allowed)} screened pairs" if allowed else f"{len(points)} screened inputs"
        ranked = sorted(candidates, key=lambda ab: -second.score(ab))
        kept = [ab for ab in ranked if second.beats(ab, best_own, DESIGN_Z)][: self.keep]
        added = tuple(
            InputPair(x, y, f"design: rank {r} of {screened}")
            for r, (x, y) in enumerate(kept, start=1)
        )
        return dataclasses.replace(state, pairs=(*own, *added), samples=samples)


@dataclass(frozen=True)
class Screened:
    """Pair scores of a set of inputs on one sample of each (:func:`pair_scores`)."""

    inputs: tuple[tuple[float, ...], ...]
    scores: np.ndarray
    errors: np.ndarray

    @classmethod
    def of(cls, budget: Budget, inputs: list[tuple[float, ...]], n: int, stage: int) -> Screened:
        """Sample ``n`` outputs of every input (stream ``stage``) and score every pair."""
        data: list[TrainingData] = budget.sampler.outputs(inputs, n, stage, "input design")
        cols = [screen_columns(d.rows) for d in data]
        weights = [np.asarray(d.counts, dtype=np.float64) for d in data]
        head = max(1, POOL_ROWS // len(cols))
        sets = OutputSets.read(
            np.concatenate([c[:head] for c in cols]), np.concatenate([w[:head] for w in weights])
        )
        hits = np.stack([sets.count(c, w) for c, w in zip(cols, weights, strict=True)])
        totals = np.rint([w.sum() for w in weights]).astype(np.int64)
        return cls(tuple(inputs), *pair_scores(hits, totals))

    def has(self, x: tuple[float, ...]) -> bool:
        return x in self.inputs

    def score(self, pair: tuple[tuple[float, ...], tuple[float, ...]]) -> float:
        """The pair's score in its better direction."""
        a, b = self.inputs.index(pair[0]), self.inputs.index(pair[1])
        return float(max(self.scores[a, b], self.scores[b, a]))

    def error(self, pair: tuple[tuple[float, ...], tuple[float, ...]]) -> float:
        """The standard error behind :meth:`score` (its best set's log-ratio)."""
        a, b = self.inputs.index(pair[0]), self.inputs.index(pair[1])
        return float(
            self.errors[a, b] if self.scores[a, b] >= self.scores[b, a] else self.errors[b, a]
        )

    def beats(self, pair: tuple, rival: tuple | None, z: float) -> bool:
        """``pair`` scores above ``rival`` by more than ``z`` standard errors of the gap."""
        if rival is None:
            return math.isfinite(self.score(pair))
        gap = self.score(pair) - self.score(rival)
        return gap > z * math.hypot(self.error(pair), self.error(rival))

    def best(
        self, k: int, among: list[tuple[tuple[float, ...], tuple[float, ...]]] | None = None
    ) -> list[tuple[tuple[float, ...], tuple[float, ...]]]:
        """The ``k`` best-scored pairs (either direction), best first; only ``among`` if given."""
        if among is not None:
            return sorted(among, key=lambda ab: -self.score(ab))[:k]
        sym = np.maximum(self.scores, self.scores.T)
        iu = np.triu_indices(len(self.inputs), 1)
        order = np.argsort(-sym[iu], kind="stable")[:k]
        return [(self.inputs[iu[0][t]], self.inputs[iu[1][t]]) for t in order]


def design_points(
    mech: object, own: list[InputPair], limit: int, seed: int
) -> list[tuple[float, ...]]:
    """The audit's own pairs' points, then a scrambled Sobol design (or every category)."""
    domain = mech.input_domain  # type: ignore[attr-defined]
    low, high, _ = pattern_box(domain, pattern_radius(mech))  # type: ignore[arg-type]
    points = list(dict.fromkeys(p for pair in own for p in (pair.x, pair.x_prime)))
    d = domain.size
    if domain.integer and d == 1 and high - low + 1 <= limit:
        points += [(float(v),) for v in range(int(low), int(high) + 1)]
    else:
        from scipy.stats import qmc  # here, not at import: the CLI starts without scipy

        sobol = qmc.Sobol(d, scramble=True, rng=np.random.default_rng([seed, int(StageKey.DESIGN)]))
        u = sobol.random(1 << max(1, math.ceil(math.log2(limit))))
        x = low + u * (high - low)
        if domain.integer:
            x = np.clip(np.rint(x), low, high)
        points += [tuple(float(v) for v in row) for row in x]
    return list(dict.fromkeys(points))[:limit]


def _refined(
    mech: object, points: int, pairs: list[tuple[tuple[float, ...], tuple[float, ...]]]
) -> list[tuple[tuple[float, ...], tuple[float, ...]]]:
    """Each pair with one input moved by ±¼ and ±½ of the design's spacing, in the box."""
    domain = mech.input_domain  # type: ignore[attr-defined]
    low, high, _ = pattern_box(domain, pattern_radius(mech))  # type: ignore[arg-type]
    step = (high - low) / points ** (1.0 / domain.size)
    out = []
    for x, y in pairs:
        for moved, other, first in ((x, y, True), (y, x, False)):
            for f in (-0.5, -0.25, 0.25, 0.5):
                v = np.clip(np.asarray(moved) + f * step, low, high)
                if domain.integer:
                    v = np.rint(v)
                q = tuple(float(t) for t in v)
                if q != moved and q != other:
                    out.append((q, other) if first else (other, q))
    return list(dict.fromkeys(out))


def design_neighbours(mech: object) -> list[tuple[tuple[float, ...], tuple[float, ...], str]]:
    """A dataset mechanism's design pairs ``(x, x', origin)`` (``design_neighbours()``); else []."""
    hook = getattr(mech, "design_neighbours", None)
    listed = hook() if hook is not None else None
    return [(tuple(a), tuple(b), o) for a, b, o in listed] if listed else []
