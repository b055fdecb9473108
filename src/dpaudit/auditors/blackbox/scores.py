"""Scores that separate ``M(x)`` from ``M(x')``, and the threshold sets built on them.

A *score* maps a chunk of outputs to one ``float32`` per output, high where the
output looks like it came from ``x``.  A threshold attack then uses the set
``S = {score > t}`` (or ``<``), with outputs *at* the threshold kept with a tie
probability ``q`` (DP-Sniper's randomised ties).  The families:

* ``likelihood-ratio`` — ``ln p(y|x) − ln p(y|x')`` from the mechanism's own
  :meth:`~dpaudit.mechanisms.base.Mechanism.log_prob`.  By the Neyman–Pearson
  lemma its threshold sets are the most powerful tests of ``x`` against ``x'``,
  so they give the tightest ε bound; nothing is trained.
* ``logistic`` — logistic regression trained on samples (Bichsel et al.,
  DP-Sniper, S&P 2021, §5.1).
* ``mlp`` — a small multi-layer perceptron with hidden layers (10, 5), as in
  DP-Sniper's neural-network variant.
* ``histogram`` — the empirical log-ratio of whole output rows, for discrete
  outputs (:mod:`dpaudit.auditors.blackbox.histogram`).
* ``split`` — logistic regression on the indicators ``1{y_i > m_i}``, ``m_i`` the
  median of coordinate ``i`` over both inputs' training outputs: an additive
  model ``Σ w_i·1{y_i > m_i}``.  A linear score ``Σ w_i y_i`` lets every
  coordinate's noise through at full scale; when each coordinate carries a
  small, bounded privacy loss (parallel composition of Laplace-type noise, whose
  log-ratio is a clipped step ``(|y_i − x'_i| − |y_i − x_i|)/b``) the indicators
  keep the loss and drop the noise.  For 20 coordinates of ``Lap(200)`` the best
  linear threshold set is worth ε ≈ 0.039 on 2·10⁸ final samples at confidence
  0.9, the indicator sum ≈ 0.065 (the exact log-ratio's own ceiling).

Classifiers are trained with scikit-learn and then *frozen* into plain numpy
weights, so work units evaluate them without scikit-learn and bit-identically in
every process.  Scores are rounded to ``float32``: this merges floating-point
noise (e.g. ``|y−1| − |y|`` is exactly 1 for ``y ≤ 0`` but not always in
float64) into exact ties, and it halves the cost of counting.  In DP-Sniper
mode the score is DP-Sniper's: ``P(x | y)`` rounded to 3 decimals, expressed in
thousandths (integers 0..1000).
"""

from __future__ import annotations

import functools
import math
import warnings
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union

import numpy as np

from dpaudit.auditors.blackbox.atoms import Atoms, encode_atoms, find_atoms
from dpaudit.errors import InvalidArgumentError, MechanismError, OptionalDependencyError
from dpaudit.mechanisms.base import Mechanism

if TYPE_CHECKING:  # both modules use this one for their candidates: imported for typing only
    from dpaudit.auditors.blackbox.histogram import HistogramScore
    from dpaudit.auditors.blackbox.rare import RareSetScore

#: Attack families a user can choose.
FAMILIES = ("likelihood-ratio", "logistic", "mlp", "split", "histogram")
#: MLP architecture of DP-Sniper's neural-network classifier.
MLP_HIDDEN = (10, 5)
#: Training epochs of the MLP (enough for the small network; more only costs time).
MLP_EPOCHS = 30
#: Most distinct training rows per input the MLP is fitted on (training cost, not validity).
MLP_MAX_ROWS = 1 << 15
#: Likelihood-ratio scores are rounded to this many decimals before the float32 cast:
#: an exact tie such as a zero log-ratio otherwise survives as ±1e-16 noise.
SCORE_DECIMALS = 9
#: Resolution of DP-Sniper's rounded probabilities (3 decimals).
DPSNIPER_LEVELS = 1000


# ----------------------------------------------------------------------- scores
@dataclass(frozen=True)
class LikelihoodRatioScore:
    """``ln p(y|x) − ln p(y|x')`` from the mechanism's log-density/pmf (Neyman–Pearson)."""

    mechanism: Mechanism
    x: tuple[float, ...]
    x_prime: tuple[float, ...]

    family = "likelihood-ratio"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        shape = self.mechanism.input_shape
        a = np.asarray(self.x, dtype=np.float64).reshape(shape)
        b = np.asarray(self.x_prime, dtype=np.float64).reshape(shape)
        with np.errstate(invalid="ignore"):
            score = np.subtract(
                self.mechanism.log_prob(a, outputs), self.mechanism.log_prob(b, outputs)
            )
        if np.isnan(score).any():
            raise MechanismError(
                f"mechanism {self.mechanism.name!r}: log_prob is -inf under both inputs "
                f"{list(self.x)} and {list(self.x_prime)} for one of its own outputs "
                "(log_prob and sampler disagree)"
            )
        return np.round(score, SCORE_DECIMALS, out=score).astype(np.float32)

    def describe(self) -> str:
        """Formula of the score."""
        return "ln p(y|a) − ln p(y|b) (mechanism's exact log-density/pmf; a, b = score_inputs)"

    def parameters(self) -> dict[str, Any] | None:
        """Trained parameters (none: the score is exact)."""
        return None


@dataclass(frozen=True)
class ClassifierScore:
    """A frozen classifier: features → atom flags → (split) → standardised → (MLP) → logit.

    The logit is that of ``P(x' | y)``; with ``cuts`` (the ``split`` family) the
    features are first replaced by ``1{feature_i > cuts_i}``.

    The score is ``−logit`` (high where ``x`` is likely).  With
    ``dpsniper_rounding`` it is instead ``round(1000·P(x | y))`` — DP-Sniper's
    probability rounded to 3 decimals, in thousandths.
    """

    family: str
    mean: np.ndarray
    inv_std: np.ndarray
    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]
    categories: int = 0
    dpsniper_rounding: bool = False
    nan_indicators: bool = False
    cuts: np.ndarray | None = None
    atoms: Atoms = ()

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        h = encode_atoms(features(outputs, self.categories, self.nan_indicators), self.atoms)
        if self.cuts is not None:
            h = (h > self.cuts).astype(np.float32)
        h -= self.mean
        h *= self.inv_std
        with _one_blas_thread():
            for w, b in zip(self.weights[:-1], self.biases[:-1], strict=True):
                h = h @ w
                h += b
                np.maximum(h, 0.0, out=h)  # ReLU
            logit = (h @ self.weights[-1]).ravel() + self.biases[-1][0]
        if self.dpsniper_rounding:
            # P(x | y) = 1 − sigmoid(logit) = sigmoid(−logit), rounded to 3 decimals.
            with np.errstate(over="ignore"):
                prob = 1.0 / (1.0 + np.exp(logit.astype(np.float64)))
            return np.rint(prob * DPSNIPER_LEVELS).astype(np.float32)
        return (-logit).astype(np.float32)

    def describe(self) -> str:
        """Formula of the score."""
        if self.cuts is not None:
            return (
                "logistic regression on 1{y_i > m_i} (m_i: training median of coordinate i) "
                "trained on M(a) vs M(b): −logit P(b | y); a, b = score_inputs"
            )
        if self.dpsniper_rounding:
            return (
                f"{self.family} classifier trained on M(a) vs M(b): round(P(a | y), 3) "
                "in thousandths (DP-Sniper); a, b = score_inputs"
            )
        return (
            f"{self.family} classifier trained on M(a) vs M(b): −logit P(b | y), high where "
            "a is likely; a, b = score_inputs"
        )

    def parameters(self) -> dict[str, Any]:
        """The frozen weights, for the witness."""
        return {
            "family": self.family,
            "feature_mean": self.mean.tolist(),
            "feature_inv_std": self.inv_std.tolist(),
            "weights": [w.tolist() for w in self.weights],
            "biases": [b.tolist() for b in self.biases],
            "one_hot_categories": self.categories,
            "nan_indicator_columns": self.nan_indicators,
            "dpsniper_rounding": self.dpsniper_rounding,
            "split_cuts": None if self.cuts is None else self.cuts.tolist(),
            "atom_flags": [[j, list(v)] for j, v in self.atoms],
        }


#: Every score type: a callable from outputs to scores with ``family``, ``describe()`` and
#: ``parameters()`` (``HistogramScore`` lives in :mod:`dpaudit.auditors.blackbox.histogram`,
#: the rare-event proposer's ``RareSetScore`` in :mod:`dpaudit.auditors.blackbox.rare`).
Score = Union[LikelihoodRatioScore, ClassifierScore, "HistogramScore", "RareSetScore"]


@functools.cache
def _blas_controller() -> Any:
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # no scikit-learn stack: numpy's BLAS keeps its own setting
        return None
    return ThreadpoolController()


def _one_blas_thread() -> AbstractContextManager[Any]:
    """Single-threaded BLAS for the small products of a frozen classifier.

    A (block × 10) @ (10 × 5) product is far too small to share out: on a busy
    machine BLAS threads make the MLP score ~10× slower per row (and a unit
    already owns its core).  A cached controller makes the switch cost ~2 µs.
    """
    ctl = _blas_controller()
    return nullcontext() if ctl is None else ctl.limit(limits=1, user_api="blas")


def features(outputs: np.ndarray, categories: int = 0, nan_indicators: bool = False) -> np.ndarray:
    """Outputs as a float32 feature matrix; categorical outputs one-hot encoded.

    With ``nan_indicators`` (mechanisms that declare a NaN policy) every
    coordinate gets a second column ``isnan(y_i)`` and NaN values become 0, so a
    linear model can weigh "missing" freely (the usual missing-indicator encoding).
    """
    y = np.asarray(outputs)
    y = y.reshape(len(y), -1)
    if categories:
        codes = y[:, 0].astype(np.int64)
        out = np.zeros((len(y), categories), dtype=np.float32)
        ok = (codes >= 0) & (codes < categories)
        out[np.nonzero(ok)[0], codes[ok]] = 1.0
        return out
    out = y.astype(np.float32, copy=True)
    if nan_indicators:
        missing = np.isnan(out)
        out[missing] = 0.0
        return np.concatenate([out, missing.astype(np.float32)], axis=1)
    return out


# ------------------------------------------------------------------- training
def train_classifier(
    family: str,
    mechanism: Mechanism,
    data_x: TrainingData,
    data_x_prime: TrainingData,
    *,
    seed: int,
    dpsniper_rounding: bool = False,
) -> ClassifierScore:
    """Train ``family`` on outputs of ``M(x)`` (label 0) and ``M(x')`` (label 1) and freeze it.

    Discrete outputs arrive compressed (unique rows with counts) and are fitted
    with sample weights — the same objective as the full sample, much faster.
    The MLP sees at most :data:`MLP_MAX_ROWS` distinct rows per input.  Training
    runs single-threaded (deterministic, and no oversubscription of the cores
    the work units use).
    """
    try:
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.linear_model import LogisticRegression
        from sklearn.neural_network import MLPClassifier
        from threadpoolctl import threadpool_limits
    except ImportError:
        raise OptionalDependencyError("scikit-learn", "audit", f"the {family} attack") from None
    if family not in ("logistic", "mlp", "split"):
        raise InvalidArgumentError("classifier", family, "logistic, mlp or split")
    if family == "mlp":
        data_x, data_x_prime = data_x.head(MLP_MAX_ROWS), data_x_prime.head(MLP_MAX_ROWS)
    categories, nan_cols, X, y, w = _labelled_features(mechanism, data_x, data_x_prime)
    # Symbols mixed into numeric outputs (SVT's -1 "aborted", -1000 "below") become flags.
    atoms = () if categories else find_atoms(X, w)
    X = encode_atoms(X, atoms)
    cuts = None
    if family == "split":
        cuts = weighted_median(X, w)
        X = (cuts < X).astype(np.float32)
    mean = np.average(X, axis=0, weights=w).astype(np.float32)
    std = np.sqrt(np.average((X - mean) ** 2, axis=0, weights=w))
    inv_std = (1.0 / np.where(std > 0, std, 1.0)).astype(np.float32)
    Xs = (X - mean) * inv_std
    # Normalise weights to mean 1 so the regularisation strength does not depend on N.
    w = w * (len(w) / w.sum())
    with threadpool_limits(limits=1), warnings.catch_warnings():
        # A not-quite-converged classifier is still a valid attack: the bound is
        # computed on fresh samples, so training quality affects power, not validity.
        warnings.simplefilter("ignore", ConvergenceWarning)
        if family in ("logistic", "split"):
            model = LogisticRegression(C=1.0, max_iter=1000, tol=1e-6)
            model.fit(Xs, y, sample_weight=w)
            weights = (model.coef_.T.astype(np.float32),)
            biases = (model.intercept_.astype(np.float32),)
        else:
            model = MLPClassifier(
                hidden_layer_sizes=MLP_HIDDEN,
                random_state=seed,
                max_iter=MLP_EPOCHS,
                tol=1e-5,
                n_iter_no_change=5,
                batch_size=min(4096, len(y)),
                learning_rate_init=0.01,
            )
            model.fit(Xs, y, sample_weight=w)
            weights = tuple(c.astype(np.float32) for c in model.coefs_)
            biases = tuple(b.astype(np.float32) for b in model.intercepts_)
    return ClassifierScore(
        family=family,
        mean=mean,
        inv_std=inv_std,
        weights=weights,
        biases=biases,
        categories=categories,
        dpsniper_rounding=dpsniper_rounding,
        nan_indicators=nan_cols,
        cuts=cuts,
        atoms=atoms,
    )


def _labelled_features(
    mechanism: Mechanism, data_x: TrainingData, data_x_prime: TrainingData
) -> tuple[int, bool, np.ndarray, np.ndarray, np.ndarray]:
    """``(categories, nan_indicators, X, y, w)``: features, labels 0/1 and row counts of both sides.

    ``categories`` is the number of one-hot categories (0 for non-categorical
    outputs); ``nan_indicators`` whether NaN flags are added (a declared NaN policy).
    """
    categories = 0
    if mechanism.output_kind == "categorical":
        top = max(int(np.max(data_x.rows)), int(np.max(data_x_prime.rows)))
        categories = top + 1
    nan_cols = bool(mechanism.allows_nan_output)
    X = np.concatenate(
        [
            features(data_x.rows, categories, nan_cols),
            features(data_x_prime.rows, categories, nan_cols),
        ]
    )
    y = np.concatenate([np.zeros(len(data_x.rows)), np.ones(len(data_x_prime.rows))])
    w = np.concatenate([data_x.counts, data_x_prime.counts]).astype(np.float64)
    return categories, nan_cols, X, y, w


def weighted_median(X: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Column-wise median of the rows of ``X`` with multiplicities ``w`` (float32)."""
    out = np.empty(X.shape[1], dtype=np.float32)
    half = 0.5 * float(w.sum())
    for j in range(X.shape[1]):
        order = np.argsort(X[:, j], kind="stable")
        k = int(np.searchsorted(np.cumsum(w[order]), half))
        out[j] = X[order[min(k, len(order) - 1)], j]
    return out


@dataclass(frozen=True)
class TrainingData:
    """Training outputs for one input: rows and their multiplicities (1 unless compressed)."""

    rows: np.ndarray
    counts: np.ndarray

    def head(self, rows: int) -> TrainingData:
        """The first ``rows`` rows (a deterministic subsample)."""
        return TrainingData(self.rows[:rows], self.counts[:rows])

    @staticmethod
    def merge(parts: list[TrainingData], compress: bool) -> TrainingData:
        """Concatenate chunk results (re-compressing discrete rows)."""
        rows = np.concatenate([p.rows for p in parts])
        counts = np.concatenate([p.counts for p in parts])
        if compress:
            return compress_rows(rows, counts)
        return TrainingData(rows, counts)


def compress_rows(rows: np.ndarray, counts: np.ndarray | None = None) -> TrainingData:
    """Unique rows of a discrete output sample with their total counts.

    Integer-valued rows are packed into one int64 key each (mixed radix over the
    observed range of every column), so a 1-D ``np.unique`` does the work; other
    rows fall back to the much slower ``np.unique(axis=0)``.
    """
    flat = np.ascontiguousarray(rows.reshape(len(rows), -1))
    if counts is None:
        counts = np.ones(len(flat), dtype=np.int64)
    packed = _pack_rows(flat)
    if packed is None:
        uniq, inverse = np.unique(flat, axis=0, return_inverse=True)
    else:
        keys, low, span = packed
        ukeys, inverse = np.unique(keys, return_inverse=True)
        uniq = _unpack_rows(ukeys, low, span).astype(flat.dtype)
    totals = np.bincount(inverse.ravel(), weights=counts, minlength=len(uniq))
    return TrainingData(uniq, np.rint(totals).astype(np.int64))


def _pack_rows(flat: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    if len(flat) == 0 or flat.dtype.kind not in "biuf":
        return None
    if flat.dtype.kind == "f" and not np.all(flat == np.round(flat)):
        return None
    ints = flat.astype(np.int64)
    low = ints.min(axis=0)
    span = ints.max(axis=0) - low + 1
    if np.sum(np.log2(span.astype(np.float64))) >= 62:
        return None
    radix = _radix(span)
    ints -= low
    return ints @ radix, low, span


def _radix(span: np.ndarray) -> np.ndarray:
    # First column most significant, so keys sort like rows (lexicographically).
    return np.concatenate([np.cumprod(span[::-1])[::-1][1:], [1]]).astype(np.int64)


def _unpack_rows(keys: np.ndarray, low: np.ndarray, span: np.ndarray) -> np.ndarray:
    radix = _radix(span)
    return (keys[:, None] // radix) % span + low


# ------------------------------------------------------------- threshold sets
def count_at_thresholds(
    scores: np.ndarray, thresholds: np.ndarray, weights: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """For sorted ``thresholds`` T: ``#{s > T_j}`` and ``#{s = T_j}`` for every j (int64).

    ``weights`` are row multiplicities (compressed discrete samples).  Sorts the
    scores once and binary-searches the few thresholds into them: O(n log n)
    with a small constant (much faster than searching every score), no n×m array.
    """
    if weights is None:
        ordered = np.sort(scores)
        lo = np.searchsorted(ordered, thresholds, side="left")
        hi = np.searchsorted(ordered, thresholds, side="right")
        return (len(ordered) - hi).astype(np.int64), (hi - lo).astype(np.int64)
    order = np.argsort(scores, kind="stable")
    ordered = scores[order]
    cum = np.concatenate([[0], np.cumsum(np.asarray(weights, dtype=np.int64)[order])])
    lo = np.searchsorted(ordered, thresholds, side="left")
    hi = np.searchsorted(ordered, thresholds, side="right")
    return (cum[-1] - cum[hi]).astype(np.int64), (cum[hi] - cum[lo]).astype(np.int64)


#: Log-ratio scores are clipped to ±this before exponentiation in importance weights.
WEIGHT_CLIP = 300.0


def weighted_sums_at_thresholds(
    scores: np.ndarray, thresholds: np.ndarray, sign: int, weights: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, float]:
    """Sums of ``w = e^{−sign·s}`` (times row multiplicities) over ``s > T_j``, ``s = T_j``, all.

    For the likelihood-ratio score ``s = ln p(y|x) − ln p(y|x')`` and outputs
    ``y ~ M(x)``, ``E[w·1{y ∈ S}]`` with ``sign = +1`` is exactly ``Pr[M(x') ∈ S]``
    (change of measure: ``p(y|x') = p(y|x)·e^{−s(y)}``); with ``sign = −1`` and
    ``y ~ M(x')`` it is ``Pr[M(x) ∈ S]``.  On the sets where these weights are
    bounded this importance-sampling estimate of the *other* input's probability
    is far less noisy than counting its rare hits, so the selection can rank
    small-mass sets without a winner's curse.  Used for ranking only.
    """
    s = np.clip(scores.astype(np.float64), -WEIGHT_CLIP, WEIGHT_CLIP)
    w = np.exp(-sign * s)
    if weights is not None:
        w *= weights
    order = np.argsort(scores, kind="stable")
    ordered = scores[order]
    # Suffix sums (largest scores first), so small upper-tail sums are not differences
    # of two large totals.
    suffix = np.concatenate([np.cumsum(w[order][::-1])[::-1], [0.0]])
    lo = np.searchsorted(ordered, thresholds, side="left")
    hi = np.searchsorted(ordered, thresholds, side="right")
    return suffix[hi], suffix[lo] - suffix[hi], float(suffix[0])


def candidate_thresholds(
    scores: list[np.ndarray], *, max_levels: int = 512, masses: int = 40
) -> np.ndarray:
    """Thresholds worth trying, from training scores of both inputs (sorted, float32).

    Every distinct value when there are at most ``max_levels`` of them (discrete
    outputs); otherwise the quantiles at a geometric grid of tail masses from
    ``1/n`` to ``1/2`` in both tails of every sample, plus the extremes.  There
    is no lower limit on the mass other than the sample size: this is what
    removes DP-Sniper's ``ln(1/c)`` ceiling.
    """
    allv = np.concatenate([np.asarray(s, dtype=np.float32) for s in scores])
    uniq = np.unique(allv)
    if len(uniq) <= max_levels:
        return uniq
    picks = [uniq[0], uniq[-1]]
    for s in scores:
        srt = np.sort(np.asarray(s, dtype=np.float32))
        n = len(srt)
        grid = np.unique(np.geomspace(1.0, n / 2.0, masses).astype(np.int64))
        picks.extend(srt[n - grid])  # upper tail: at least `grid` values are ≥ it
        picks.extend(srt[grid - 1])  # lower tail
    return np.unique(np.asarray(picks, dtype=np.float32))


def dpsniper_threshold(
    greater: np.ndarray, equal: np.ndarray, n: int, target_mass: float
) -> tuple[int, float]:
    """DP-Sniper's threshold rule (Bichsel et al. 2021, §5.2) from counts on ``n`` samples of M(x').

    Sorting the scores in descending order, the threshold is the value at rank
    ``floor(c·n)`` and ties at it are kept with probability ``q`` so that the
    expected number of kept samples is exactly ``c·n``.  ``greater``/``equal``
    are the counts at every candidate level; returns (level index, q).
    """
    rank = math.floor(target_mass * n)
    # The threshold level j satisfies #{s > T_j} ≤ rank < #{s ≥ T_j}.
    ge = greater + equal
    ok = np.nonzero((greater <= rank) & (ge > rank))[0]
    if len(ok) == 0:  # rank beyond every sample (c·n ≥ n): keep everything
        j = 0
        return j, 1.0
    j = int(ok[-1])
    q = (target_mass * n - greater[j]) / equal[j]
    return j, float(min(max(q, 0.0), 1.0))
