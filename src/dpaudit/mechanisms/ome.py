"""Optimized Multiple Encoding (OME), bit-exact with the authors' reference code.

Lyu, Li, He & Xiao, "Towards Differentially Private Text Representations",
SIGIR 2020 (Theorem 1, eqs. for p and q), as restated and attacked by Salem &
Zanella-Béguelin, "HoHo: A Hop-on Hop-off Attack Against Optimized Multiple
Encoding", PPML@CCS 2021 (Theorem 2.1, eqs. 1–2).

**Encoding** (reference code; the papers only describe it).  A real value ``x``
becomes ``k = round(x·2^5)`` (Python's ``round``: half to even), written as
``format(k, '011b')`` with the minus sign replaced by ``'1'``.  For
``|k| ≤ 1023`` that is exactly one sign bit (``1`` = negative) followed by the
10-bit magnitude ``|k|``, most significant bit first.  The reference calls this
``m = 6`` integer bits (sign included) and ``n = 5`` fraction bits,
``l = m + n = 11``; HoHo writes ``l = m + n + 1`` counting the sign separately
with ``m = 5`` — the same 11 bits.  A vector of ``r`` values is the
concatenation of its ``r`` codes: ``r·l`` bits.

*Encodable range.*  ``|k| ≥ 1024`` does not fit: ``1024 ≤ k ≤ 2047`` sets the
leading character, which collides with the sign bit, and larger ``|k|`` gives 12
characters.  Since ``x·32`` is exact in binary floating point and ties round to
even (``1023.5 → 1024``), ``x`` is encodable iff ``−1023.5 < 32·x < 1023.5``,
i.e. ``x ∈ (−31.984375, 31.984375)`` (open interval).  Values in
``[−1/64, 1/64]`` encode like 0 (``round(±0.5) = 0``; Python's ``int`` has no
negative zero, so there is no ``'-0000000000'`` code).

**Perturbation** (Lyu et al. Thm. 1; HoHo eqs. 1–2).  Bits are perturbed
independently.  With ``j`` the index in the whole ``r·l``-bit vector (parity is
*global*; since ``l`` is odd it alternates from one value to the next):

* a 1 at even ``j`` stays 1 with ``p1 = λ/(1+λ)``;
* a 1 at odd ``j`` stays 1 with ``p2 = 1/(1+λ³)``;
* a 0 (any ``j``) becomes 1 with ``q = 1/(1 + λ·e^{ε/(r·l)})``.

The claim (pure ε-LDP for every λ) is false; see :mod:`dpaudit.analysis.ome`
for the exact worst case.

**Stable interface** used by the text side (HoHo attacks): :func:`encode`,
:func:`decode`, :func:`perturb`, :func:`one_probabilities` and
:func:`bit_log_probabilities`.  Bit arrays are ``uint8`` with values 0/1 and
shape ``(..., r*11)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dpaudit.claims import AnalyticTruth, PrivacyClaim
from dpaudit.errors import EncodingError, InvalidArgumentError
from dpaudit.mechanisms.base import Mechanism, parameter
from dpaudit.mechanisms.domains import box_claim, check_box_domain
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_epsilon, check_int, check_positive

#: Bits of one encoded value: sign + 10-bit magnitude (reference: m = 6, n = 5, l = m + n).
BITS_PER_VALUE = 11
#: Integer bits including the sign, as the reference code counts them (m).
INTEGER_BITS = 6
#: Fraction bits (n): values are quantised to multiples of 2^-5.
FRACTION_BITS = 5
#: Quantisation factor 2^n.
SCALE = 2**FRACTION_BITS
#: Largest encodable magnitude |k| (10 magnitude bits).
MAX_CODE = 2 ** (BITS_PER_VALUE - 1) - 1
#: Encodable values satisfy |x| < ENCODABLE_BOUND (exclusive; 31.984375 itself rounds to 1024).
ENCODABLE_BOUND = (MAX_CODE + 0.5) / SCALE

# Weights of the 10 magnitude bits, most significant first.
_MAGNITUDE_SHIFTS = np.arange(BITS_PER_VALUE - 2, -1, -1, dtype=np.int64)
# Rows per chunk in perturb(): bounds the float64 scratch memory to ~8 MB per array.
_CHUNK_ELEMENTS = 1 << 20


# --------------------------------------------------------------------------- encoding
def quantize(values: Any) -> np.ndarray:
    """``k = round(x·2^5)`` (half to even) for every value, as int64; raises if not encodable.

    Raises :class:`~dpaudit.errors.EncodingError` naming the first offending
    value, its index and the encodable range ``−31.984375 < x < 31.984375``.
    """
    try:
        x = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise EncodingError(f"OME can only encode real numbers, got {values!r}") from exc
    scaled = x * SCALE  # exact: multiplying by a power of two
    with np.errstate(invalid="ignore"):
        ok = np.abs(scaled) < MAX_CODE + 0.5  # False for NaN/inf as well
    if not np.all(ok):
        bad = np.argwhere(~ok)
        index = tuple(int(i) for i in bad[0])
        where = f"[{', '.join(map(str, index))}]" if index else ""
        more = f" ({len(bad)} values in all)" if len(bad) > 1 else ""
        value = float(x[index])
        raise EncodingError(
            f"OME cannot encode value{where}={value!r}{more}: the 11-bit code (sign + 10-bit "
            f"magnitude of round(x·32)) holds |round(x·32)| ≤ {MAX_CODE}, i.e. finite x with "
            f"{-ENCODABLE_BOUND} < x < {ENCODABLE_BOUND}"
        )
    # np.rint rounds half to even, exactly like Python's round() on a float.
    return np.rint(scaled).astype(np.int64)


def codes_to_bits(codes: Any) -> np.ndarray:
    """Integer codes ``k`` (``|k| ≤ 1023``), shape ``(..., r)`` → bits ``(..., r*11)`` uint8."""
    k = np.asarray(codes, dtype=np.int64)
    if k.ndim == 0:
        k = k.reshape(1)
    if np.any(np.abs(k) > MAX_CODE):
        raise EncodingError(f"OME codes must satisfy |k| ≤ {MAX_CODE}")
    out = np.empty((*k.shape, BITS_PER_VALUE), dtype=np.uint8)
    out[..., 0] = k < 0
    out[..., 1:] = (np.abs(k)[..., None] >> _MAGNITUDE_SHIFTS) & 1
    return out.reshape(*k.shape[:-1], k.shape[-1] * BITS_PER_VALUE)


def bits_to_codes(bits: Any) -> np.ndarray:
    """Inverse of :func:`codes_to_bits` on any 0/1 array of shape ``(..., r*11)``.

    Every 11-bit pattern decodes: a set sign bit with magnitude 0 (never produced
    by :func:`encode`, but possible after perturbation) decodes to 0.
    """
    b = _check_bits("bits", bits)
    groups = b.reshape(*b.shape[:-1], b.shape[-1] // BITS_PER_VALUE, BITS_PER_VALUE)
    magnitude = (groups[..., 1:].astype(np.int64) << _MAGNITUDE_SHIFTS).sum(axis=-1)
    return np.where(groups[..., 0] == 1, -magnitude, magnitude)


def encode(values: Any) -> np.ndarray:
    """OME encoding of real values, bit-exact with the reference code.

    ``values`` of shape ``(..., r)`` (a scalar counts as ``r = 1``) → ``uint8``
    bits of shape ``(..., r*11)``: per value the sign bit, then the 10-bit
    magnitude of ``round(x·32)``, most significant first.  Raises
    :class:`~dpaudit.errors.EncodingError` for a value outside
    ``(−31.984375, 31.984375)`` or not finite, naming it and its index.

    >>> encode(1.0).tolist() == [0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0]
    True
    """
    return codes_to_bits(quantize(values))


def decode(bits: Any) -> np.ndarray:
    """Values ``k/32`` represented by bits of shape ``(..., r*11)`` → float64 ``(..., r)``.

    ``decode(encode(x))`` is ``x`` rounded to the grid ``2^-5`` (half to even).
    Works on perturbed bits too (every pattern is a valid code).
    """
    return bits_to_codes(bits) / SCALE


def _check_bits(name: str, bits: Any) -> np.ndarray:
    """``bits`` as a 0/1 array whose last axis is a positive multiple of 11."""
    b = np.asarray(bits)
    if b.dtype == np.bool_:
        b = b.view(np.uint8)
    elif not np.issubdtype(b.dtype, np.integer):
        if not np.issubdtype(b.dtype, np.floating) or np.any(b != np.round(b)):
            raise InvalidArgumentError(name, f"<array of dtype {b.dtype}>", "an array of 0/1 bits")
        b = b.astype(np.uint8)
    if b.ndim == 0 or b.shape[-1] == 0 or b.shape[-1] % BITS_PER_VALUE:
        raise InvalidArgumentError(
            name,
            f"<array of shape {b.shape}>",
            f"last axis a positive multiple of {BITS_PER_VALUE}",
        )
    if b.size and (b.min() < 0 or b.max() > 1):
        raise InvalidArgumentError(name, "<array with values other than 0/1>", "0/1 bits")
    return b


# ----------------------------------------------------------------------- perturbation
def _check_lambda(lam: float) -> float:
    return check_positive("lambda", lam)


def flip_probabilities(epsilon: float, lam: float, n_bits: int) -> tuple[float, float, float]:
    """``(p1, p2, q)`` of Lyu et al. Thm. 1 / HoHo eqs. 1–2 for an ``n_bits = r·l`` vector.

    ``p1 = Pr[1→1]`` at even global index, ``p2 = Pr[1→1]`` at odd index,
    ``q = Pr[0→1]`` everywhere.
    """
    eps = check_epsilon(epsilon)
    lam = _check_lambda(lam)
    n_bits = check_int("n_bits", n_bits, minimum=1)
    s = math.log(lam)
    # 1/(1+e^t) evaluated without overflow for large λ.
    p1 = _sigmoid(s)
    p2 = _sigmoid(-3.0 * s)
    q = _sigmoid(-(s + eps / n_bits))
    return p1, p2, q


def _sigmoid(t: float) -> float:
    return 1.0 / (1.0 + math.exp(-t)) if t >= 0 else math.exp(t) / (1.0 + math.exp(t))


def log_probability_tables(
    epsilon: float, lam: float, n_bits: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-position log-probabilities, accurate in log space, each of shape ``(n_bits,)``.

    Returns ``(log Pr[1|clean 1], log Pr[0|clean 1], log Pr[1|clean 0], log Pr[0|clean 0])``
    at every global index ``j`` (``p1`` at even ``j``, ``p2`` at odd ``j``).
    """
    eps = check_epsilon(epsilon)
    s = math.log(_check_lambda(lam))
    n_bits = check_int("n_bits", n_bits, minimum=1)
    a = eps / n_bits
    even = np.arange(n_bits) % 2 == 0

    def log_sigmoid(t: float) -> float:  # ln 1/(1+e^-t) = −softplus(−t)
        return -float(np.logaddexp(0.0, -t))

    log_one_given_one = np.where(even, log_sigmoid(s), log_sigmoid(-3.0 * s))
    log_zero_given_one = np.where(even, log_sigmoid(-s), log_sigmoid(3.0 * s))
    log_one_given_zero = np.full(n_bits, log_sigmoid(-(s + a)))
    log_zero_given_zero = np.full(n_bits, log_sigmoid(s + a))
    return log_one_given_one, log_zero_given_one, log_one_given_zero, log_zero_given_zero


def one_probabilities(clean_bits: Any, *, epsilon: float, lam: float) -> np.ndarray:
    """``Pr[output bit = 1]`` for every position, given the clean bits ``(..., r*11)``.

    Float64 of the same shape: ``p1``/``p2`` where the clean bit is 1 (by the
    parity of the global index), ``q`` where it is 0.  ``ε/(r·l)`` uses
    ``r·l = clean_bits.shape[-1]``.
    """
    b = _check_bits("clean_bits", clean_bits)
    p_one = _position_one_probabilities(epsilon, lam, b.shape[-1])
    q = flip_probabilities(epsilon, lam, b.shape[-1])[2]
    return np.where(b == 1, p_one, q)


def bit_log_probabilities(
    clean_bits: Any, *, epsilon: float, lam: float
) -> tuple[np.ndarray, np.ndarray]:
    """``(log Pr[out=1], log Pr[out=0])`` per position given clean bits, accurate in log space.

    For an exact log-likelihood of an output ``y``:
    ``(y * log_one + (1 − y) * log_zero).sum(-1)``; see :func:`log_likelihood`.
    """
    b = _check_bits("clean_bits", clean_bits)
    l11, l01, l10, l00 = log_probability_tables(epsilon, lam, b.shape[-1])
    ones = b == 1
    return np.where(ones, l11, l10), np.where(ones, l01, l00)


def log_likelihood(outputs: Any, clean_bits: Any, *, epsilon: float, lam: float) -> np.ndarray:
    """Exact ``ln Pr[outputs | clean_bits]`` (sum of independent Bernoulli log-pmfs).

    Broadcasts ``outputs (..., r*11)`` against ``clean_bits (..., r*11)``; returns
    the broadcast shape without the last axis.
    """
    y = _check_bits("outputs", outputs)
    log_one, log_zero = bit_log_probabilities(clean_bits, epsilon=epsilon, lam=lam)
    if y.shape[-1] != log_one.shape[-1]:
        raise InvalidArgumentError(
            "outputs", f"<array of shape {y.shape}>", f"last axis of length {log_one.shape[-1]}"
        )
    return np.where(y == 1, log_one, log_zero).sum(axis=-1)


def _position_one_probabilities(epsilon: float, lam: float, n_bits: int) -> np.ndarray:
    p1, p2, _ = flip_probabilities(epsilon, lam, n_bits)
    return np.where(np.arange(n_bits) % 2 == 0, p1, p2)


def perturb(bits: Any, rng: np.random.Generator, *, epsilon: float, lam: float) -> np.ndarray:
    """Perturb clean OME bits ``(..., r*11)`` independently; returns uint8 of the same shape.

    Each output bit is ``u < Pr[1]`` with ``u`` a float64 ``rng.random()`` draw
    (resolution 2^-53, so even ``p2 = 10^-6`` at λ = 100 is exact to ~1e-16).
    Draws are consumed in row-major order and processed in chunks of about 1M
    bits, so the result does not depend on the chunking and memory stays flat.
    """
    b = _check_bits("bits", bits)
    n_bits = b.shape[-1]
    p_one = _position_one_probabilities(epsilon, lam, n_bits)
    q = flip_probabilities(epsilon, lam, n_bits)[2]
    rows = b.reshape(-1, n_bits)
    out = np.empty(rows.shape, dtype=np.uint8)
    step = max(1, _CHUNK_ELEMENTS // n_bits)
    for start in range(0, rows.shape[0], step):
        chunk = rows[start : start + step]
        threshold = np.where(chunk == 1, p_one, q)
        u = rng.random(chunk.shape)
        np.less(u, threshold, out=out[start : start + step].view(np.bool_))
    return out.reshape(b.shape)


def _sample_rows(p_one: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` independent rows of Bernoulli(p_one) bits (same probabilities in every row)."""
    n_bits = p_one.shape[0]
    out = np.empty((n, n_bits), dtype=np.uint8)
    step = max(1, _CHUNK_ELEMENTS // n_bits)
    for start in range(0, n, step):
        stop = min(n, start + step)
        u = rng.random((stop - start, n_bits))
        np.less(u, p_one, out=out[start:stop].view(np.bool_))
    return out


# -------------------------------------------------------------------------- mechanism
@register
@dataclass(frozen=True)
class OMEMechanism(Mechanism):
    """OME on ``[low, high]^r``: encode each value in 11 bits, flip bits independently."""

    name: ClassVar[str] = "ome"
    reference: ClassVar[str] = (
        "Lyu, Li, He & Xiao, SIGIR 2020, Thm. 1 (reference code's 11-bit encoding); "
        "Salem & Zanella-Béguelin, PPML@CCS 2021 (HoHo), Thm. 2.1 eqs. 1-2"
    )
    summary: ClassVar[str] = (
        "Optimized Multiple Encoding: 11-bit codes, parity-dependent bit flips (claim false)"
    )
    known_flawed: ClassVar[bool] = True
    output_kind: ClassVar[str] = "binary"

    dim: int = parameter(1, doc="number of values r encoded together (r·11 output bits)")
    lam: float = parameter(
        100.0, doc="randomisation factor λ > 0 (reference default 100)", cli="lambda"
    )
    domain: tuple[float, float] = parameter(
        (-10.0, 10.0),
        doc="input range [LOW, HIGH] per value, inside (-31.984375, 31.984375) "
        "(HoHo's DP-Sniper experiment: [-10, 10])",
    )

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_int("dim", self.dim, minimum=1)
        _check_lambda(self.lam)
        low, high = check_box_domain(self.domain, finite=False)
        if not (low > -ENCODABLE_BOUND and high < ENCODABLE_BOUND):
            raise InvalidArgumentError(
                "domain",
                self.domain,
                f"LOW,HIGH inside OME's encodable range ({-ENCODABLE_BOUND}, {ENCODABLE_BOUND})",
            )

    @property
    def n_bits(self) -> int:
        """Output length ``r·l``."""
        return self.dim * BITS_PER_VALUE

    @property
    def claim(self) -> PrivacyClaim:
        return box_claim(
            self.epsilon,
            self.dim,
            self.domain,
            sensitivity=float(self.n_bits),
            sensitivity_norm="Hamming (bits)",
        )

    @property
    def output_shape(self) -> tuple[int, ...]:
        return (self.n_bits,)

    def encode(self, x: Any) -> np.ndarray:
        """Clean bits ``(r*11,)`` of a validated input."""
        return encode(self.validate_input(x))

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        p_one = one_probabilities(encode(x), epsilon=self.epsilon, lam=self.lam)
        return _sample_rows(p_one, n, rng)

    def log_prob(self, x: Any, outputs: np.ndarray) -> np.ndarray:
        y = np.asarray(outputs)
        if y.ndim != 2 or y.shape[1] != self.n_bits:
            raise InvalidArgumentError(
                "outputs", f"<array of shape {y.shape}>", f"shape (m, {self.n_bits})"
            )
        return log_likelihood(y, self.encode(x), epsilon=self.epsilon, lam=self.lam)

    def privacy_loss(self, x: Any, x_prime: Any) -> float:
        # The analysis layer builds on the encoding defined here, hence the local import.
        from dpaudit.analysis.ome import pair_privacy_loss

        return pair_privacy_loss(
            self.encode(x), self.encode(x_prime), epsilon=self.epsilon, lam=self.lam
        )

    def truth(self) -> AnalyticTruth:
        from dpaudit.analysis.ome import ome_truth

        return ome_truth(self.epsilon, self.lam, self.dim, self.domain)
