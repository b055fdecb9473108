"""Exact privacy of OME (Lyu et al., SIGIR 2020) and the bound printed by HoHo.

Output bits are independent given the input's code, so for clean bit vectors
``c`` (input x) and ``c'`` (input x') the log-likelihood ratio of an output
``y`` is a sum of per-bit terms, and its supremum over ``y`` is the sum of the
per-bit suprema.  Bits where ``c_j = c'_j`` contribute 0; otherwise, with
``P_j = Pr[1→1]`` at position ``j`` (``p1`` even, ``p2`` odd) and ``q = Pr[0→1]``:

* ``c_j = 1, c'_j = 0``: ``A_j = max(ln(P_j/q), ln((1−P_j)/(1−q)))``
* ``c_j = 0, c'_j = 1``: ``B_j = max(ln(q/P_j), ln((1−q)/(1−P_j)))``

so ``sup_y ln p(y|x)/p(y|x') = Σ_j c_j(1−c'_j)A_j + (1−c_j)c'_j B_j`` and the
pure-DP loss of the pair is the larger of the two directions.  The exact
worst-case ε over ``[low, high]^r`` is therefore a search over pairs of codes:
for one value, every integer ``k`` between ``round(32·low)`` and
``round(32·high)`` is the code of some input (rounding is monotone), at most
2047 codes, and the pairwise loss matrix is two matrix products of 0/1 code
matrices with the ``A``/``B`` tables.  For ``r`` values the loss is additive
over values and the box domain lets each value pick its own pair, so the worst
case is the sum of per-value maxima; value ``d`` occupies global indices
``11d … 11d+10``, so even-``d`` values see the parity pattern (even, odd, ...)
and odd-``d`` values the flipped one.

HoHo (Salem & Zanella-Béguelin 2021, §3.2, eqs. 3–4) prints the *ratio* bound
``Pr[B|v]/Pr[B|v'] ≤ λ^{rl}·e^{ε/2}``, i.e. ``ε ≤ r·l·ln λ + ε/2``.  Its
derivation multiplies ``p/(1−p)`` on even bits — ``Pr[1|1]/Pr[0|1]``, two
different outputs under the same input — so it is not the supremum of a
likelihood ratio and can fall on either side of the exact value; see
:func:`ome_worst_case`, which returns both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.analysis.ome_encoding import (
    BITS_PER_VALUE,
    SCALE,
    codes_to_bits,
    log_probability_tables,
    quantize,
)
from dpaudit.claims import AnalyticTruth, WitnessPair
from dpaudit.errors import InvalidArgumentError
from dpaudit.validation import check_epsilon, check_int, check_positive

METHOD = "exhaustive search over pairs of codes"


def bit_loss_tables(epsilon: float, lam: float, n_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-position suprema ``(A, B)`` of the log-ratio, each of shape ``(n_bits,)``.

    ``A_j``: clean bit 1 under x and 0 under x'; ``B_j``: 0 under x and 1 under x'.
    """
    l11, l01, l10, l00 = log_probability_tables(epsilon, lam, n_bits)
    a = np.maximum(l11 - l10, l01 - l00)
    b = np.maximum(l10 - l11, l00 - l01)
    return a, b


def directed_loss(bits: Any, bits_prime: Any, *, epsilon: float, lam: float) -> np.ndarray:
    """``sup_y ln Pr[y|c]/Pr[y|c']`` for clean bit vectors ``c``, ``c'`` (shape ``(..., L)``).

    Returns the broadcast shape without the last axis.
    """
    c = np.asarray(bits, dtype=np.float64)
    cp = np.asarray(bits_prime, dtype=np.float64)
    a, b = bit_loss_tables(epsilon, lam, c.shape[-1])
    return (c * (1.0 - cp) * a + (1.0 - c) * cp * b).sum(axis=-1)


def pair_privacy_loss(bits: Any, bits_prime: Any, *, epsilon: float, lam: float) -> float:
    """Exact pure-DP loss ``sup_y |ln Pr[y|c]/Pr[y|c']|`` of one pair of clean bit vectors."""
    c = np.asarray(bits)
    cp = np.asarray(bits_prime)
    if c.shape != cp.shape or c.ndim != 1:
        raise InvalidArgumentError(
            "bits_prime", f"<array of shape {cp.shape}>", f"a bit vector of shape {c.shape}"
        )
    forward = directed_loss(c, cp, epsilon=epsilon, lam=lam)
    backward = directed_loss(cp, c, epsilon=epsilon, lam=lam)
    return float(max(forward, backward))


def hoho_bound_epsilon(epsilon: float, lam: float, dim: int) -> float:
    """``ln(λ^{rl}·e^{ε/2}) = r·l·ln λ + ε/2``: HoHo §3.2 eq. 4, a bound on the ratio.

    ``l = 11`` (HoHo's ``m + n + 1`` with the sign counted apart; the
    reference's ``m + n`` with the sign among the ``m = 6`` integer bits).
    """
    eps = check_epsilon(epsilon)
    lam = check_positive("lambda", lam)
    dim = check_int("dim", dim, minimum=1)
    return dim * BITS_PER_VALUE * math.log(lam) + eps / 2.0


def domain_codes(domain: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Every code ``k`` reachable from ``[low, high]`` and one input in the domain that has it.

    Returns ``(codes, representatives)``; ``representatives[i]`` is ``k/32``
    clipped into the domain (the clipped end still rounds to ``k`` because
    rounding is monotone).  Raises ``EncodingError`` if an end is not encodable.
    """
    low, high = (float(v) for v in domain)
    if not low < high:
        raise InvalidArgumentError("domain", domain, "LOW,HIGH with LOW < HIGH")
    k_low, k_high = (int(k) for k in quantize([low, high]))
    codes = np.arange(k_low, k_high + 1, dtype=np.int64)
    reps = np.clip(codes / SCALE, low, high)
    return codes, reps


@dataclass(frozen=True)
class OMEWorstCase:
    """Exact worst-case ε of OME over ``[low, high]^r`` next to HoHo's printed bound.

    ``x``/``x_prime`` attain ``true_epsilon`` (``sup_y ln p(y|x)/p(y|x')``).
    ``per_value_epsilon`` holds the worst case of one value at an even and at an
    odd position ``d`` (the parity pattern differs); ``differing_bits`` counts
    the bits that differ in the witness.
    """

    epsilon: float
    lam: float
    dim: int
    domain: tuple[float, float]
    true_epsilon: float
    x: tuple[float, ...]
    x_prime: tuple[float, ...]
    per_value_epsilon: tuple[float, float]
    differing_bits: int
    n_codes: int
    hoho_bound_epsilon: float

    def comparison(self) -> str:
        """One honest sentence comparing the exact value with HoHo's bound."""
        t, h = self.true_epsilon, self.hoho_bound_epsilon
        if math.isclose(t, h, rel_tol=1e-12):
            rel = "equals"
        elif h < t:
            rel = "is BELOW (so it is not a valid upper bound here)"
        else:
            rel = "is above (a valid but loose upper bound here)"
        return (
            f"HoHo's printed bound ln(λ^(r·l)·e^(ε/2)) = {h:.6g} {rel} the exact "
            f"worst-case ε = {t:.6g} (ratio {t / h:.4g}) for λ = {self.lam:g}, ε = "
            f"{self.epsilon:g}, r = {self.dim}, domain [{self.domain[0]:g}, {self.domain[1]:g}]"
        )


def _worst_pair(codes: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[float, int, int]:
    """Max over ordered code pairs of the directed loss for one value's tables ``a``, ``b``."""
    ones = codes_to_bits(codes[:, None]).astype(np.float64)  # (K, 11)
    zeros = 1.0 - ones
    # loss[i, k] = Σ_j ones[i,j]·zeros[k,j]·a_j + zeros[i,j]·ones[k,j]·b_j
    loss = (ones * a) @ zeros.T + (zeros * b) @ ones.T
    flat = int(np.argmax(loss))
    i, k = divmod(flat, loss.shape[1])
    return float(loss[i, k]), i, k


def ome_worst_case(
    epsilon: float, lam: float, dim: int = 1, domain: tuple[float, float] = (-10.0, 10.0)
) -> OMEWorstCase:
    """Exact worst-case pure ε of OME over ``domain^dim`` and HoHo's printed bound beside it."""
    eps = check_epsilon(epsilon)
    lam = check_positive("lambda", lam)
    dim = check_int("dim", dim, minimum=1)
    codes, reps = domain_codes(domain)
    n_bits = dim * BITS_PER_VALUE
    a, b = bit_loss_tables(eps, lam, n_bits)
    # Value d starts at global index 11·d: only the parity of d matters.
    per_parity = []
    for d in range(min(dim, 2)):
        sl = slice(d * BITS_PER_VALUE, (d + 1) * BITS_PER_VALUE)
        per_parity.append(_worst_pair(codes, a[sl], b[sl]))
    x = np.empty(dim)
    x_prime = np.empty(dim)
    for d in range(dim):
        _, i, k = per_parity[d % 2]
        x[d], x_prime[d] = reps[i], reps[k]
    n_even, n_odd = (dim + 1) // 2, dim // 2
    total = n_even * per_parity[0][0] + (n_odd * per_parity[1][0] if n_odd else 0.0)
    pair_codes = quantize(np.stack([x, x_prime]))
    differing = int(np.count_nonzero(codes_to_bits(pair_codes[0]) != codes_to_bits(pair_codes[1])))
    odd_value = per_parity[1][0] if dim > 1 else float("nan")
    return OMEWorstCase(
        epsilon=eps,
        lam=lam,
        dim=dim,
        domain=(float(domain[0]), float(domain[1])),
        true_epsilon=float(total),
        x=tuple(float(v) for v in x),
        x_prime=tuple(float(v) for v in x_prime),
        per_value_epsilon=(per_parity[0][0], odd_value),
        differing_bits=differing,
        n_codes=len(codes),
        hoho_bound_epsilon=hoho_bound_epsilon(eps, lam, dim),
    )


def ome_truth(
    epsilon: float, lam: float, dim: int = 1, domain: tuple[float, float] = (-10.0, 10.0)
) -> AnalyticTruth:
    """:func:`ome_worst_case` as an :class:`~dpaudit.claims.AnalyticTruth` with notes."""
    wc = ome_worst_case(epsilon, lam, dim, domain)
    witness = WitnessPair(
        wc.x,
        wc.x_prime,
        wc.true_epsilon,
        f"codes differ in {wc.differing_bits} of {dim * BITS_PER_VALUE} bits; "
        "sup over outputs of ln p(y|x)/p(y|x') attained bit by bit",
    )
    notes = (
        f"{wc.n_codes} codes per value in the domain; worst case per value "
        f"{wc.per_value_epsilon[0]:.6g} at even positions"
        + (f", {wc.per_value_epsilon[1]:.6g} at odd positions" if dim > 1 else ""),
        wc.comparison(),
        "HoHo's bound multiplies p/(1-p) = Pr[1|1]/Pr[0|1] (two outputs, one input) on even "
        "bits; the exact per-bit supremum is max(ln P/q, ln (1-q)/(1-P)) or its reverse.",
    )
    return AnalyticTruth(
        true_epsilon=wc.true_epsilon,
        method=METHOD,
        true_sensitivity=float(dim * BITS_PER_VALUE),
        sensitivity_norm="Hamming (bits)",
        witness=witness,
        notes=notes,
    )
