"""DP-Sniper's evaluation mechanisms as plain functions ``f(x, n, rng) -> (n, ...)``.

The mechanisms, parameters, claimed ε and input domains are those of DP-Sniper's
evaluation (Bichsel, Steffen, Bogunovic, Vechev, "DP-Sniper: Black-Box
Discovery of Differential Privacy Violations using Classifiers", IEEE S&P 2021,
§6; experiment list ``dpsniper/experiments/exp_default.py`` of
github.com/eth-sri/dp-sniper), which took most of them from StatDP (Ding, Wang,
Wang, Zhang, Kifer, "Detecting Violations of Differential Privacy", CCS 2018).
The code here is our own: vectorised over the ``n`` samples (a Python loop
runs over the at most 20 *columns* of SVT-style mechanisms, never over samples)
and drawing only from the ``rng`` dpaudit passes in.

Output encodings follow the originals, because they are part of what a
black-box auditor must cope with: SVT answers are ``1`` (above), ``0`` (below)
and ``-1`` (aborted); SVT3 releases the noisy value when above, ``-1000.0``
when below and ``-2000.0`` when aborted; NumericalSVT releases the noisy value
when above, ``0.0`` when below and ``-1000.0`` when aborted; ReportNoisyMax1/2
release an index, 3/4 a value.

Every mechanism claims ε = 0.1 (:data:`CLAIMED_EPSILON`) except RAPPOR and
one-time RAPPOR, whose own analysis gives their ε (see :data:`CLAIMS`).
"""

from __future__ import annotations

import math

import numpy as np

#: ε every StatDP/DP-Sniper mechanism is instantiated with (``eps=0.1`` in exp_default.py).
EPS = 0.1


# ------------------------------------------------------------------ Laplace family
def laplace(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Laplace mechanism ``x + Lap(1/ε)`` (Dwork & Roth 2014, Def. 3.3); ε = 0.1, correct."""
    return x[0] + rng.laplace(0.0, 1.0 / EPS, size=(n, 1))


def laplace_parallel(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """20 independent ``x + Lap(1/0.005)`` releases of one scalar (DP-Sniper's LaplaceParallel).

    Sequential composition: 20 × 0.005 = ε 0.1 in all; correct.
    """
    return x[0] + rng.laplace(0.0, 1.0 / 0.005, size=(n, 20))


def noisy_hist1(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """NoisyHist1 (Ding et al. 2018, Alg. 9): histogram ``x + Lap(1/ε)``; correct."""
    return x + rng.laplace(0.0, 1.0 / EPS, size=(n, x.size))


def noisy_hist2(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """NoisyHist2 (Ding et al. 2018, Alg. 10): noise scale ε, not 1/ε — broken (true ε = 10)."""
    return x + rng.laplace(0.0, EPS, size=(n, x.size))


def prefix_sum(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """PrefixSum (Wang et al., PLDI 2019): running sums of ``x_i + Lap(1/ε)``.

    Under DP-Sniper's component-wise neighbourhood (every query may move by 1)
    the releases carry ``n·ε`` (1.0 for 10 queries): the ε = 0.1 claim fails.
    """
    return np.cumsum(x + rng.laplace(0.0, 1.0 / EPS, size=(n, x.size)), axis=1)


# ---------------------------------------------------------- report noisy max
def rnm1(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """ReportNoisyMax1 (Ding et al. 2018, Alg. 5): argmax of ``x + Lap(2/ε)``; correct."""
    return np.argmax(x + rng.laplace(0.0, 2.0 / EPS, size=(n, x.size)), axis=1)


def rnm2(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """ReportNoisyMax2 (Ding et al. 2018, Alg. 6): argmax of ``x + Exp(2/ε)``; correct."""
    return np.argmax(x + rng.exponential(2.0 / EPS, size=(n, x.size)), axis=1)


def rnm3(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """ReportNoisyMax3 (Ding et al. 2018, Alg. 7): releases the noisy *max value* — broken."""
    return np.max(x + rng.laplace(0.0, 2.0 / EPS, size=(n, x.size)), axis=1)


def rnm4(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """ReportNoisyMax4 (Ding et al. 2018, Alg. 8): noisy max value with Exp noise — broken."""
    return np.max(x + rng.exponential(2.0 / EPS, size=(n, x.size)), axis=1)


# ------------------------------------------------------------ sparse vector
def _abort_after(above: np.ndarray, c: int) -> np.ndarray:
    """Per sample and column: has the answer already said "above" ``c`` times before it?"""
    before = np.cumsum(above, axis=1) - above
    return before >= c


def _svt_bits(above: np.ndarray, c: int) -> np.ndarray:
    out = above.astype(np.int64)
    out[_abort_after(above, c)] = -1
    return out


def svt1(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """SVT1 (Lyu, Su, Li, VLDB 2017, Alg. 1), c = 1, T = 0.5: correct (ε = 0.1)."""
    c, t, e1 = 1, 0.5, EPS / 2
    rho = rng.laplace(0.0, 1.0 / e1, size=(n, 1))
    nu = rng.laplace(0.0, 2.0 * c / (EPS - e1), size=(n, x.size))
    return _svt_bits(x + nu >= rho + t, c)


def svt2(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """SVT2 (Lyu et al. 2017, Alg. 2), c = 1, T = 1: threshold re-drawn after "above"; correct."""
    c, t, e1 = 1, 1.0, EPS / 2
    rho = rng.laplace(0.0, c / e1, size=n)
    noisy = x + rng.laplace(0.0, 2.0 * c / (EPS - e1), size=(n, x.size))
    above = np.empty(noisy.shape, dtype=bool)
    for j in range(x.size):  # columns (≤ 10), each vectorised over the samples
        above[:, j] = noisy[:, j] >= rho + t
        hit = np.nonzero(above[:, j])[0]
        rho[hit] = rng.laplace(0.0, c / e1, size=hit.size)
    return _svt_bits(above, c)


def svt3(x: np.ndarray, n: int, rng: np.random.Generator, c: int = 1) -> np.ndarray:
    """SVT3 (Lyu et al. 2017, Alg. 3), T = 1: releases the noisy value when above — broken.

    ``-1000.0`` = below, ``-2000.0`` = aborted.
    """
    t, e1 = 1.0, EPS / 2
    rho = rng.laplace(0.0, 1.0 / e1, size=(n, 1))
    noisy = x + rng.laplace(0.0, c / (EPS - e1), size=(n, x.size))
    above = noisy >= rho + t
    out = np.where(above, noisy, -1000.0)
    out[_abort_after(above, c)] = -2000.0
    return out


def svt4(x: np.ndarray, n: int, rng: np.random.Generator, c: int = 1) -> np.ndarray:
    """SVT4 (Lyu et al. 2017, Alg. 4), T = 1: ε/4 to the threshold, query noise 1/ε₂ — broken.

    True ε = (1 + 6c)/4 · ε (0.175 for c = 1).
    """
    t, e1 = 1.0, EPS / 4
    rho = rng.laplace(0.0, 1.0 / e1, size=(n, 1))
    nu = rng.laplace(0.0, 1.0 / (EPS - e1), size=(n, x.size))
    return _svt_bits(x + nu >= rho + t, c)


def svt5(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """SVT5 (Lyu et al. 2017, Alg. 5), T = 1: no query noise, no abort — broken (ε = ∞)."""
    rho = rng.laplace(0.0, 1.0 / (EPS / 2), size=(n, 1))
    return (x >= rho + 1.0).astype(np.int64)


def svt6(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """SVT6 (Lyu et al. 2017, Alg. 6), T = 1: query noise 1/ε₂ and no abort — broken (ε = ∞)."""
    e1 = EPS / 2
    rho = rng.laplace(0.0, 1.0 / e1, size=(n, 1))
    nu = rng.laplace(0.0, 1.0 / (EPS - e1), size=(n, x.size))
    return (x + nu >= rho + 1.0).astype(np.int64)


def svt34_parallel(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """SVT3 and SVT4 (c = 2, T = 1) run side by side on the same queries (DP-Sniper) — broken."""
    return np.concatenate([svt3(x, n, rng, c=2), svt4(x, n, rng, c=2)], axis=1)


def numerical_svt(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Numerical SVT (Wang et al., PLDI 2019), c = 2, T = 1: correct (ε = 0.1).

    Releases a fresh noisy value ``x_i + Lap(3c/ε)`` when above, ``0.0`` when
    below, ``-1000.0`` once ``c`` answers were above.
    """
    c, t = 2, 1.0
    rho1 = rng.laplace(0.0, 3.0 / EPS, size=(n, 1))
    rho2 = rng.laplace(0.0, 6.0 * c / EPS, size=(n, x.size))
    rho3 = rng.laplace(0.0, 3.0 * c / EPS, size=(n, x.size))
    above = x + rho2 >= t + rho1
    out = np.where(above, x + rho3, 0.0)
    out[_abort_after(above, c)] = -1000.0
    return out


# --------------------------------------------------------- truncated geometric
def _geo_cdf(count: int, eps: float = EPS, people: int = 5) -> tuple[np.ndarray, int]:
    """``F`` of GeoSample (Balcer & Vadhan 2018, Alg. 4.8, step 2) and its range ``d``."""
    k = math.ceil(math.log(2.0 / eps))
    d = (2 ** (k + 1) + 1) * (2**k + 1) ** (people - 1)
    f = np.empty(people + 1, dtype=np.int64)
    for z in range(people):
        if z < count:
            f[z] = 2 ** (k * (count - z)) * (2**k + 1) ** (people - (count - z))
        else:
            f[z] = d - 2 ** (k * (z - count + 1)) * (2**k + 1) ** (people - 1 - (z - count))
    f[people] = d
    return f, d


def truncated_geometric(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """GeoSample (Balcer & Vadhan 2018, Alg. 4.8), ε parameter 0.1, 5 people.

    Thm 4.7 gives ``ln(1 + 2^−⌈ln(2/ε)⌉)`` = ln(9/8) ≈ 0.1178 > 0.1: the ε = 0.1
    it is instantiated with does not hold.  Output: the smallest ``z`` with
    ``F(z) ≥ u``, ``u`` uniform on ``1..d``.
    """
    f, d = _geo_cdf(round(float(x[0])))
    u = rng.integers(1, d + 1, size=n)
    return np.searchsorted(f, u, side="left").astype(np.int64)


# -------------------------------------------------------------------- RAPPOR
def murmur3_32(data: bytes, seed: int) -> int:
    """MurmurHash3 x86 32-bit, signed as ``mmh3.hash``: DP-Sniper's RAPPOR Bloom-filter hash."""
    c1, c2, mask = 0xCC9E2D51, 0x1B873593, 0xFFFFFFFF

    def rotl(v: int, r: int) -> int:
        return ((v << r) | (v >> (32 - r))) & mask

    h = seed & mask
    full = len(data) // 4 * 4
    for i in range(0, full, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = rotl((k * c1) & mask, 15) * c2 & mask
        h = (rotl(h ^ k, 13) * 5 + 0xE6546B64) & mask
    tail = data[full:]
    if tail:
        k = int.from_bytes(tail, "little")
        h ^= rotl((k * c1) & mask, 15) * c2 & mask
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & mask
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & mask
    h ^= h >> 16
    return h - (1 << 32) if h & 0x80000000 else h


def bloom_bits(value: int, hashes: int = 4, size: int = 20) -> np.ndarray:
    """Bloom filter of ``value`` (``str(value)`` hashed with seeds 0..hashes−1, as DP-Sniper)."""
    bits = np.zeros(size, dtype=np.int64)
    for i in range(hashes):
        bits[murmur3_32(str(value).encode(), i) % size] = 1
    return bits


def _prr(x: np.ndarray, n: int, rng: np.random.Generator, f: float) -> np.ndarray:
    """Permanent randomised response on the Bloom filter: 1 w.p. f/2, 0 w.p. f/2, else keep."""
    bits = np.broadcast_to(bloom_bits(round(float(x[0]))), (n, 20))
    u = rng.random((n, 20))
    return np.where(u < f / 2, 1, np.where(u < f, 0, bits))


def rappor(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """RAPPOR steps 1–3 (Erlingsson, Pihur, Korolova, CCS 2014), h 4, k 20, f 0.75, p 0.45, q 0.55.

    One report: ε₁ = h·ln(q*(1−p*)/(p*(1−q*))) with q* = ½f(p+q) + (1−f)q,
    p* = ½f(p+q) + (1−f)p (ibid. §3.2) = 0.400; correct.
    """
    b = _prr(x, n, rng, 0.75)
    return (rng.random((n, 20)) < np.where(b == 1, 0.55, 0.45)).astype(np.int64)


def one_time_rappor(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """One-time RAPPOR (steps 1–2, permanent response only), f = 0.95.

    ε∞ = 2h·ln((1 − f/2)/(f/2)) (Erlingsson et al. 2014, §3.2) = 0.801; correct.
    """
    return _prr(x, n, rng, 0.95)


def _rappor_eps1(f: float = 0.75, p: float = 0.45, q: float = 0.55, h: int = 4) -> float:
    qs = 0.5 * f * (p + q) + (1 - f) * q
    ps = 0.5 * f * (p + q) + (1 - f) * p
    return h * math.log(qs * (1 - ps) / (ps * (1 - qs)))


#: Claimed ε per mechanism (the ε the mechanism is instantiated with or its own analysis gives).
CLAIMS: dict[str, float] = {
    "rappor": _rappor_eps1(),
    "one_time_rappor": 2 * 4 * math.log((1 - 0.95 / 2) / (0.95 / 2)),
}
CLAIMED_EPSILON = EPS
