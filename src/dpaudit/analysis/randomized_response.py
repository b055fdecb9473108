"""Exact privacy of randomised response and unary encoding (Wang et al., USENIX Security 2017).

All of these mechanisms have finitely many outputs (per block), so the pure
privacy loss of an input pair is the largest absolute log-ratio of the two
pmfs, attained at a single output.

* Binary randomised response (Warner 1965): report the true bit with
  ``p = e^ε/(1+e^ε)``; loss ``ln(p/(1−p)) = ε``.
* Generalised RR / direct encoding (Wang et al. 2017, §4.1): report the true
  category with ``p = e^ε/(e^ε+k−1)`` and each other one with
  ``q = 1/(e^ε+k−1)``; loss ``ln(p/q) = ε`` for any two distinct categories.
* Unary encoding (Wang et al. 2017, §4.2): one-hot encode, then keep a 1 with
  ``p`` and turn a 0 into 1 with ``q``.  Two distinct categories differ in two
  bits; the worst output has a 1 where the first input's bit is and a 0 where
  the second's is, so the loss is ``ln(p(1−q) / ((1−p)q))`` (Wang et al. 2017,
  Theorem 2).  Symmetric UE (SUE, basic RAPPOR) takes ``p = e^{ε/2}/(1+e^{ε/2})``,
  ``q = 1 − p``; optimised UE (OUE) ``p = 1/2``, ``q = 1/(e^ε+1)``; both give ε.
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.validation import check_epsilon, check_int


def rr_keep_probability(epsilon: float) -> float:
    """Probability ``e^ε/(1+e^ε)`` that binary randomised response reports the true bit."""
    from scipy import special  # lazy: keeps `import dpaudit` light

    return float(special.expit(check_epsilon(epsilon)))


def grr_probabilities(epsilon: float, k: int) -> tuple[float, float]:
    """``(p, q)`` of k-ary randomised response (Wang et al. 2017, §4.1, Eq. for DE)."""
    eps = check_epsilon(epsilon)
    k = check_int("k", k, minimum=2)
    # Divide by e^ε to stay finite for large ε.
    denom = 1.0 + (k - 1) * math.exp(-eps)
    p = 1.0 / denom
    q = math.exp(-eps) / denom
    return p, q


def sue_probabilities(epsilon: float) -> tuple[float, float]:
    """``(p, q)`` of symmetric unary encoding (Wang et al. 2017, §4.2.1; basic RAPPOR)."""
    from scipy import special  # lazy: keeps `import dpaudit` light

    half = check_epsilon(epsilon) / 2.0
    # q = 1 − p, computed directly so that it keeps full precision when tiny.
    return float(special.expit(half)), float(special.expit(-half))


def oue_probabilities(epsilon: float) -> tuple[float, float]:
    """``(p, q)`` of optimised unary encoding (Wang et al. 2017, §4.2.2): ``(1/2, 1/(e^ε+1))``."""
    from scipy import special  # lazy: keeps `import dpaudit` light

    return 0.5, float(special.expit(-check_epsilon(epsilon)))


def safe_log(v: float) -> float:
    """``ln v`` with ``ln 0 = −inf`` (a probability that rounded to 0 in floating point)."""
    return math.log(v) if v > 0.0 else -math.inf


def log_ratio(p: float, q: float) -> float:
    """``ln(p/q)``: the exact loss of GRR / binary RR for two distinct inputs.

    ``inf`` when ``q`` underflowed to 0 (ε beyond ~700): the floating-point
    sampler then really never produces that output.
    """
    return safe_log(p) - safe_log(q)


def unary_block_loss(p: float, q: float) -> float:
    """``ln(p(1−q) / ((1−p)q))``: exact loss of one unary-encoded block whose inputs differ.

    ``inf`` when ``p`` rounded to 1 or ``q`` to 0 (very large ε): the sampler then
    really never flips that bit.
    """
    return safe_log(p) + safe_log(1.0 - q) - safe_log(1.0 - p) - safe_log(q)


def max_abs_log_ratio(log_p: np.ndarray, log_p_prime: np.ndarray) -> float:
    """``max_y |ln P(y) − ln P'(y)|`` over enumerated outputs (``inf`` on differing supports).

    The exact pure privacy loss of a pair for any mechanism with a finite output
    set, given the full pmfs.
    """
    a = np.asarray(log_p, dtype=np.float64)
    b = np.asarray(log_p_prime, dtype=np.float64)
    both_impossible = np.isneginf(a) & np.isneginf(b)
    with np.errstate(invalid="ignore"):
        diff = np.abs(a - b)
    diff[both_impossible] = 0.0
    return float(diff.max(initial=0.0))
