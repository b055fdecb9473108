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
shape ``(..., r*11)``.  The encoding and the flip probabilities are pure maths
shared with the analysis and live in :mod:`dpaudit.analysis.ome_encoding`; this
module re-exports them and adds the sampler (:func:`perturb`) and the
mechanism.  Import direction: mechanisms → analysis, never the reverse.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dpaudit.analysis.ome import ome_truth, pair_privacy_loss
from dpaudit.analysis.ome_encoding import (
    BITS_PER_VALUE,
    ENCODABLE_BOUND,
    FRACTION_BITS,
    INTEGER_BITS,
    MAX_CODE,
    SCALE,
    bit_log_probabilities,
    bits_to_codes,
    check_bits,
    check_lambda,
    codes_to_bits,
    decode,
    encode,
    flip_probabilities,
    log_likelihood,
    log_probability_tables,
    one_probabilities,
    position_one_probabilities,
    quantize,
)
from dpaudit.claims import AnalyticTruth, PrivacyClaim
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.base import Mechanism, parameter
from dpaudit.mechanisms.domains import box_claim, check_box_domain
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_epsilon, check_int

__all__ = [
    "BITS_PER_VALUE",
    "ENCODABLE_BOUND",
    "FRACTION_BITS",
    "INTEGER_BITS",
    "MAX_CODE",
    "SCALE",
    "OMEMechanism",
    "bit_log_probabilities",
    "bits_to_codes",
    "codes_to_bits",
    "decode",
    "encode",
    "flip_probabilities",
    "log_likelihood",
    "log_probability_tables",
    "one_probabilities",
    "perturb",
    "quantize",
]

# Rows per chunk in perturb(): bounds the float64 scratch memory to ~8 MB per array.
_CHUNK_ELEMENTS = 1 << 20


def perturb(bits: Any, rng: np.random.Generator, *, epsilon: float, lam: float) -> np.ndarray:
    """Perturb clean OME bits ``(..., r*11)`` independently; returns uint8 of the same shape.

    Each output bit is ``u < Pr[1]`` with ``u`` a float64 ``rng.random()`` draw
    (resolution 2^-53, so even ``p2 = 10^-6`` at λ = 100 is exact to ~1e-16).
    Draws are consumed in row-major order and processed in chunks of about 1M
    bits, so the result does not depend on the chunking and memory stays flat.
    """
    b = check_bits("bits", bits)
    n_bits = b.shape[-1]
    p_one = position_one_probabilities(epsilon, lam, n_bits)
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
        check_lambda(self.lam)
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
        return pair_privacy_loss(
            self.encode(x), self.encode(x_prime), epsilon=self.epsilon, lam=self.lam
        )

    def truth(self) -> AnalyticTruth:
        return ome_truth(self.epsilon, self.lam, self.dim, self.domain)
