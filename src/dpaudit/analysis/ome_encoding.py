"""OME's encoding and bit-flip probabilities: the maths both the mechanism and its analysis use.

The 11-bit code of a real value and the per-position flip probabilities of
Optimized Multiple Encoding (Lyu et al., SIGIR 2020, Thm. 1; HoHo, Salem &
Zanella-Béguelin 2021, eqs. 1–2), bit-exact with the authors' reference code;
see :mod:`dpaudit.mechanisms.ome` for the full description.  Pure functions
on arrays: imports nothing from ``mechanisms/`` (which builds the sampler on
them) or above.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpaudit.errors import EncodingError, InvalidArgumentError
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
    b = check_bits("bits", bits)
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


def check_bits(name: str, bits: Any) -> np.ndarray:
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
def check_lambda(lam: float) -> float:
    """The randomisation factor λ, checked to be > 0."""
    return check_positive("lambda", lam)


def flip_probabilities(epsilon: float, lam: float, n_bits: int) -> tuple[float, float, float]:
    """``(p1, p2, q)`` of Lyu et al. Thm. 1 / HoHo eqs. 1–2 for an ``n_bits = r·l`` vector.

    ``p1 = Pr[1→1]`` at even global index, ``p2 = Pr[1→1]`` at odd index,
    ``q = Pr[0→1]`` everywhere.
    """
    eps = check_epsilon(epsilon)
    lam = check_lambda(lam)
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
    s = math.log(check_lambda(lam))
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
    b = check_bits("clean_bits", clean_bits)
    p_one = position_one_probabilities(epsilon, lam, b.shape[-1])
    q = flip_probabilities(epsilon, lam, b.shape[-1])[2]
    return np.where(b == 1, p_one, q)


def bit_log_probabilities(
    clean_bits: Any, *, epsilon: float, lam: float
) -> tuple[np.ndarray, np.ndarray]:
    """``(log Pr[out=1], log Pr[out=0])`` per position given clean bits, accurate in log space.

    For an exact log-likelihood of an output ``y``:
    ``(y * log_one + (1 − y) * log_zero).sum(-1)``; see :func:`log_likelihood`.
    """
    b = check_bits("clean_bits", clean_bits)
    l11, l01, l10, l00 = log_probability_tables(epsilon, lam, b.shape[-1])
    ones = b == 1
    return np.where(ones, l11, l10), np.where(ones, l01, l00)


def log_likelihood(outputs: Any, clean_bits: Any, *, epsilon: float, lam: float) -> np.ndarray:
    """Exact ``ln Pr[outputs | clean_bits]`` (sum of independent Bernoulli log-pmfs).

    Broadcasts ``outputs (..., r*11)`` against ``clean_bits (..., r*11)``; returns
    the broadcast shape without the last axis.
    """
    y = check_bits("outputs", outputs)
    log_one, log_zero = bit_log_probabilities(clean_bits, epsilon=epsilon, lam=lam)
    if y.shape[-1] != log_one.shape[-1]:
        raise InvalidArgumentError(
            "outputs", f"<array of shape {y.shape}>", f"last axis of length {log_one.shape[-1]}"
        )
    return np.where(y == 1, log_one, log_zero).sum(axis=-1)


def position_one_probabilities(epsilon: float, lam: float, n_bits: int) -> np.ndarray:
    """``Pr[1 → 1]`` at every position: ``p1`` at even global indices, ``p2`` at odd."""
    p1, p2, _ = flip_probabilities(epsilon, lam, n_bits)
    return np.where(np.arange(n_bits) % 2 == 0, p1, p2)
