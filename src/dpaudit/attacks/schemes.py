"""Bit-vector privatisation schemes of sentence vectors, as the attacks see them.

A :class:`BitScheme` wraps one registered mechanism (its claim and analytic
truth stay the mechanism's) and exposes what the attacks need, vectorised over
many sentences:

* :meth:`~BitScheme.encode` — clean bits ``(N, L)`` of ``N`` sentence vectors;
* :meth:`~BitScheme.perturb` — one independent privatised copy of each row;
* :meth:`~BitScheme.bit_log_probabilities` — exact ``ln Pr[y_j = 1 | clean]`` and
  ``ln Pr[y_j = 0 | clean]`` per position (the mechanism's flip probabilities);
* :attr:`~BitScheme.hoho_positions` — the bits HoHo's attack looks at.

Schemes (HoHo, Salem & Zanella-Béguelin 2021, §3.1 and Fig. 1):

* ``ome`` — Optimized Multiple Encoding (:mod:`dpaudit.mechanisms.ome`): 11 bits
  per value, ``L = 11·r``; HoHo "hops on" the even global positions.
* ``sue`` / ``oue`` — symmetric / optimised unary encoding of ``int(v)`` per value
  (:mod:`dpaudit.mechanisms.unary_encoding`, mechanisms ``sue-embedding`` and
  ``oue-embedding``), ``k = int(max value) + 1`` slots, budget ``ε/r`` per value.
  Their bits are perturbed alike at every position, so there is no privileged
  subset: the HoHo analogue looks at *all* bits (matching score = fraction of
  equal bits; reconstruction = every bit copied).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.errors import EncodingError, InvalidArgumentError
from dpaudit.mechanisms import make_mechanism
from dpaudit.mechanisms import ome as ome_module
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.unary_encoding import slots_for_max, unary_encode
from dpaudit.validation import check_epsilon

#: Scheme names accepted by :func:`build_scheme` and the CLI's ``--scheme``.
SCHEME_NAMES = ("ome", "sue", "oue")

#: Registered mechanism behind each unary scheme.
_UNARY_MECHANISMS = {"sue": "sue-embedding", "oue": "oue-embedding"}

#: Rows perturbed per batch (bounds the float64 scratch of the unary sampler).
_CHUNK_ROWS = 4096


@dataclass(frozen=True)
class BitScheme(ABC):
    """One configured privatisation of ``r``-dimensional sentence vectors into ``L`` bits."""

    mechanism: Mechanism

    @property
    def name(self) -> str:
        """Scheme name (``ome``, ``sue`` or ``oue``)."""
        raise NotImplementedError

    @property
    def n_bits(self) -> int:
        """Length ``L`` of one encoding."""
        return int(self.mechanism.output_shape[0])

    @property
    def epsilon(self) -> float:
        """The claimed ε."""
        return float(self.mechanism.epsilon)

    @property
    @abstractmethod
    def hoho_positions(self) -> np.ndarray:
        """Boolean mask ``(L,)`` of the positions HoHo's attack uses."""

    @abstractmethod
    def encode(self, vectors: np.ndarray) -> np.ndarray:
        """Clean bits ``(N, L)`` uint8 of sentence vectors ``(N, r)``."""

    @abstractmethod
    def perturb(self, clean: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One privatised copy ``(N, L)`` uint8 of every row of ``clean``.

        Random draws are consumed row by row, so splitting ``clean`` into
        consecutive batches gives the same bits.
        """

    @abstractmethod
    def bit_log_probabilities(self, clean: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(ln Pr[y=1 | clean], ln Pr[y=0 | clean])`` per position, each shaped like ``clean``."""

    def params(self) -> dict[str, Any]:
        """The scheme's parameters for reports (mechanism parameters, ε included)."""
        return {"scheme": self.name, **self.mechanism.params()}


@dataclass(frozen=True)
class OMEScheme(BitScheme):
    """OME (Lyu et al. SIGIR 2020, Thm. 1) through :mod:`dpaudit.mechanisms.ome`."""

    @property
    def name(self) -> str:
        return "ome"

    @property
    def lam(self) -> float:
        """Randomisation factor λ."""
        return float(self.mechanism.lam)  # type: ignore[attr-defined]

    @property
    def hoho_positions(self) -> np.ndarray:
        # HoHo Alg. 1: even indices of the whole r·l-bit vector.
        return np.arange(self.n_bits) % 2 == 0

    def encode(self, vectors: np.ndarray) -> np.ndarray:
        x = _check_vectors(vectors, self.mechanism.input_shape[0])
        bits = ome_module.encode(x)  # raises for values OME cannot encode at all
        low, high = self.mechanism.domain  # type: ignore[attr-defined]
        if x.size and (x.min() < low or x.max() > high):
            # The claim (and its exact ε) is about the domain: refuse data outside it.
            raise EncodingError(
                f"sentence vectors span [{x.min():g}, {x.max():g}], outside the OME domain "
                f"[{low:g}, {high:g}] the claim refers to (set -p domain=LOW,HIGH)"
            )
        return bits

    def perturb(self, clean: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return ome_module.perturb(clean, rng, epsilon=self.epsilon, lam=self.lam)

    def bit_log_probabilities(self, clean: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return ome_module.bit_log_probabilities(clean, epsilon=self.epsilon, lam=self.lam)


@dataclass(frozen=True)
class UnaryScheme(BitScheme):
    """SUE/OUE of ``int(v)`` per value (Wang et al. 2017, §4.2), via ``*-embedding`` mechanisms."""

    @property
    def name(self) -> str:
        return self.mechanism.name.removesuffix("-embedding")

    @property
    def k(self) -> int:
        """Slots per value."""
        return int(self.mechanism.k)  # type: ignore[attr-defined]

    @property
    def hoho_positions(self) -> np.ndarray:
        # No position is perturbed differently from another: the analogue uses all bits.
        return np.ones(self.n_bits, dtype=bool)

    def _pq(self) -> tuple[float, float]:
        return float(self.mechanism.p), float(self.mechanism.q)  # type: ignore[attr-defined]

    def encode(self, vectors: np.ndarray) -> np.ndarray:
        x = _check_vectors(vectors, self.mechanism.input_shape[0])
        if x.size and (x.min() < 0 or x.max() >= self.k):
            raise EncodingError(
                f"{self.name.upper()} one-hot encodes int(v) in k={self.k} slots: every value "
                f"must satisfy 0 <= v < {self.k} (got values in [{x.min():g}, {x.max():g}])"
            )
        return unary_encode(np.floor(x).astype(np.int64), self.k)

    def perturb(self, clean: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        p, q = self._pq()
        rows = np.asarray(clean, dtype=np.uint8).reshape(-1, self.n_bits)
        out = np.empty(rows.shape, dtype=np.uint8)
        for start in range(0, rows.shape[0], _CHUNK_ROWS):
            chunk = rows[start : start + _CHUNK_ROWS]
            u = rng.random(chunk.shape)
            np.less(u, np.where(chunk == 1, p, q), out=out[start : start + len(chunk)].view(bool))
        return out.reshape(np.shape(clean))

    def bit_log_probabilities(self, clean: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p, q = self._pq()
        ones = np.asarray(clean) == 1
        log_one = np.where(ones, math.log(p), math.log(q))
        log_zero = np.where(ones, math.log1p(-p), math.log1p(-q))
        return log_one, log_zero


def _check_vectors(vectors: Any, dim: int) -> np.ndarray:
    x = np.asarray(vectors, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != dim:
        raise InvalidArgumentError("vectors", f"<array of shape {x.shape}>", f"shape (N, {dim})")
    if not np.all(np.isfinite(x)):
        raise EncodingError("sentence vectors contain NaN or infinite values")
    return x


def data_domain(vectors: np.ndarray) -> tuple[float, float]:
    """The OME input domain used for a corpus: whole numbers around the data's range.

    ``[floor(min), ceil(max)]`` (at least ``[0, 1]``), clipped to OME's encodable
    range; the claim and the exact ε of :meth:`Mechanism.truth` refer to it.
    """
    low = float(min(0.0, math.floor(float(np.min(vectors)))))
    high = float(max(1.0, math.ceil(float(np.max(vectors)))))
    bound = ome_module.ENCODABLE_BOUND
    if low <= -bound or high >= bound:
        # Values beyond ±31 are caught by the encoder; clip the domain just inside the bound.
        low = max(low, math.nextafter(-bound, 0.0))
        high = min(high, math.nextafter(bound, 0.0))
    return (low, high)


def build_scheme(
    name: str,
    epsilon: float,
    vectors: np.ndarray,
    params: dict[str, Any] | None = None,
) -> BitScheme:
    """The scheme ``name`` at claimed ``epsilon`` for sentence vectors ``(N, r)``.

    ``params`` are mechanism parameters named as on the CLI (``lambda`` for OME;
    ``k`` for SUE/OUE); ``dim`` is the vectors' ``r`` and, unless given, OME's
    ``domain`` is :func:`data_domain` and the unary ``k`` is ``int(max) + 1``.
    """
    if name not in SCHEME_NAMES:
        raise InvalidArgumentError("scheme", name, f"one of {', '.join(SCHEME_NAMES)}")
    check_epsilon(epsilon)
    x = np.asarray(vectors, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] == 0:
        raise InvalidArgumentError("vectors", f"<array of shape {x.shape}>", "shape (N, r), N >= 1")
    extra = dict(params or {})
    if "dim" in extra and int(extra["dim"]) != x.shape[1]:
        raise InvalidArgumentError("dim", extra["dim"], f"{x.shape[1]} (the embedding size)")
    extra["dim"] = x.shape[1]
    if name == "ome":
        extra.setdefault("domain", data_domain(x))
        return OMEScheme(make_mechanism("ome", epsilon=epsilon, **extra))
    if "k" not in extra:
        extra["k"] = max(2, slots_for_max(max(0.0, float(np.max(x)))))
    return UnaryScheme(make_mechanism(_UNARY_MECHANISMS[name], epsilon=epsilon, **extra))
