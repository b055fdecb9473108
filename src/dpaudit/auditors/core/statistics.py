"""Exact (Clopper–Pearson) confidence bounds on binomial proportions, and ε bounds from them.

Every auditor states its result as a one-sided bound that holds with
probability at least ``1 − α``.  The building block is the exact binomial bound
of Clopper & Pearson (Biometrika 26(4), 1934): for ``k`` successes in ``n``
trials,

* lower bound at level ``α``: the ``α`` quantile of ``Beta(k, n − k + 1)``
  (exactly 0 when ``k = 0``);
* upper bound at level ``α``: the ``1 − α`` quantile of ``Beta(k + 1, n − k)``
  (exactly 1 when ``k = n``).

Each one-sided bound is wrong with probability at most ``α``; a two-sided
interval at confidence ``1 − α`` puts ``α/2`` in each tail.  Quantiles come from
:data:`scipy.stats.beta` (not hand-rolled).  All functions are vectorised:
``k`` and ``n`` broadcast against each other.

The ε bound for two estimated probabilities ``p1 = Pr[M(a) ∈ S]`` and
``p2 = Pr[M(a') ∈ S]`` is ``ln(p1_lower) − ln(p2_upper)``; with both bounds at
``α/2`` (union bound) it holds with probability ≥ ``1 − α``.  When ``p2`` has no
hit at all, ``p2_upper = 1 − (α/2)^(1/n2)`` is still positive, so the bound is
finite and grows like ``ln n2`` — the sample size, not the mechanism, limits it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpaudit.errors import InvalidArgumentError
from dpaudit.validation import check_probability_open


def _counts(k: Any, n: Any) -> tuple[np.ndarray, np.ndarray]:
    """Validate and broadcast counts: integers with ``0 ≤ k ≤ n`` and ``n ≥ 1``."""
    k_arr = np.asarray(k)
    n_arr = np.asarray(n)
    for name, arr in (("k", k_arr), ("n", n_arr)):
        if arr.dtype.kind not in "iu" and not (
            arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))
        ):
            raise InvalidArgumentError(name, arr.tolist(), "integer counts")
    k_arr, n_arr = np.broadcast_arrays(k_arr.astype(np.float64), n_arr.astype(np.float64))
    if np.any(n_arr < 1):
        raise InvalidArgumentError("n", n_arr.tolist(), "trial counts >= 1")
    if np.any(k_arr < 0) or np.any(k_arr > n_arr):
        raise InvalidArgumentError("k", k_arr.tolist(), "success counts in [0, n]")
    return k_arr, n_arr


def _scalar_or_array(x: np.ndarray) -> Any:
    return float(x) if x.ndim == 0 else x


def clopper_pearson_lower(k: Any, n: Any, alpha: float) -> Any:
    """One-sided lower bound on ``p`` from ``k`` successes in ``n`` trials.

    ``Pr[p < bound] ≤ alpha``.  Exactly 0 at ``k = 0``; ``alpha^(1/n)`` at ``k = n``.
    Returns a float for scalar input, else an array of the broadcast shape.
    """
    from scipy import stats  # lazy: keeps `import dpaudit` light

    alpha = check_probability_open("alpha", alpha)
    k_arr, n_arr = _counts(k, n)
    safe_k = np.where(k_arr > 0, k_arr, 1.0)  # Beta(0, ·) is undefined; masked below
    bound = stats.beta.ppf(alpha, safe_k, n_arr - k_arr + 1.0)
    return _scalar_or_array(np.where(k_arr > 0, bound, 0.0))


def clopper_pearson_upper(k: Any, n: Any, alpha: float) -> Any:
    """One-sided upper bound on ``p`` from ``k`` successes in ``n`` trials.

    ``Pr[p > bound] ≤ alpha``.  Exactly 1 at ``k = n``; ``1 − alpha^(1/n)`` at ``k = 0``.
    Returns a float for scalar input, else an array of the broadcast shape.
    """
    from scipy import stats  # lazy: keeps `import dpaudit` light

    alpha = check_probability_open("alpha", alpha)
    k_arr, n_arr = _counts(k, n)
    safe_b = np.where(k_arr < n_arr, n_arr - k_arr, 1.0)  # Beta(·, 0) is undefined
    bound = stats.beta.ppf(1.0 - alpha, k_arr + 1.0, safe_b)
    # At k = 0 the closed form −expm1(ln(alpha)/n) keeps full precision for tiny bounds.
    at_zero = -np.expm1(np.log(alpha) / n_arr)
    bound = np.where(k_arr == 0, at_zero, bound)
    return _scalar_or_array(np.where(k_arr < n_arr, bound, 1.0))


def clopper_pearson_interval(k: Any, n: Any, confidence: float = 0.95) -> tuple[Any, Any]:
    """Two-sided exact interval ``(lower, upper)`` at ``confidence`` (``α/2`` per tail)."""
    confidence = check_probability_open("confidence", confidence)
    half = (1.0 - confidence) / 2.0
    return clopper_pearson_lower(k, n, half), clopper_pearson_upper(k, n, half)


def log_ratio_lower_bound(k1: Any, n1: Any, k2: Any, n2: Any, alpha: float) -> Any:
    """Lower bound on ``ln(p1 / p2)`` holding with probability ≥ ``1 − alpha``.

    ``ln(p1_lower) − ln(p2_upper)`` with each one-sided Clopper–Pearson bound at
    ``alpha/2`` (union bound over the two estimates).  ``-inf`` when ``k1 = 0``;
    finite (limited by ``n2``) when ``k2 = 0``.  Vectorised.
    """
    alpha = check_probability_open("alpha", alpha)
    lo = np.asarray(clopper_pearson_lower(k1, n1, alpha / 2.0))
    hi = np.asarray(clopper_pearson_upper(k2, n2, alpha / 2.0))
    with np.errstate(divide="ignore"):
        out = np.log(lo) - np.log(hi)
    return _scalar_or_array(out)


def bonferroni(alpha: float, candidates: int) -> float:
    """Per-candidate level so that ``candidates`` simultaneous statements hold at ``1 − alpha``."""
    alpha = check_probability_open("alpha", alpha)
    if isinstance(candidates, bool) or not isinstance(candidates, int) or candidates < 1:
        raise InvalidArgumentError("candidates", candidates, "an integer >= 1")
    return alpha / candidates
