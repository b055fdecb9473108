"""Unary encoding: symmetric (SUE) and optimised (OUE), Wang et al., USENIX Security 2017, §4.2.

A category ``v ∈ {0..k−1}`` is one-hot encoded into ``k`` bits; every bit is
then perturbed independently: a 1 stays 1 with probability ``p``, a 0 becomes
1 with probability ``q``.

* SUE (§4.2.1, basic RAPPOR): ``p = e^{ε/2}/(1+e^{ε/2})``, ``q = 1/(1+e^{ε/2})``;
* OUE (§4.2.2, Eq. 11): ``p = 1/2``, ``q = 1/(1+e^ε)``.

Both are exactly ε-LDP: two categories differ in two bits and the worst-case
log-ratio is ``ln(p(1−q)/((1−p)q)) = ε`` (Theorem 2 of the paper).

Several values
--------------
With ``dim = r > 1`` the input is ``r`` independent values, each encoded into
its own block of ``k`` bits with budget ``ε/r`` (sequential composition), so
the output has ``r·k`` bits and the whole vector is ε-LDP.

Embeddings (``sue-embedding``, ``oue-embedding``)
------------------------------------------------
The OME reference code (Lyu et al., SIGIR 2020; attacked in Salem &
Zanella-Béguelin 2021, "HoHo") applied SUE/OUE to a sentence embedding of
``r = 50`` non-negative reals by one-hot encoding each value's integer part
``int(v)``.  The ``*-embedding`` mechanisms do exactly that for real inputs
in ``[0, k]`` (category ``int(v)``; ``k = int(max value) + 1`` covers a data
range ``[0, max]``; the single point ``v = k`` shares the top slot ``k − 1``),
with the standard per-value budget ``ε/r``.  How the
reference differs, and what is deliberately *not* reproduced:

* SUE: the reference uses ``p = e^{ε/2r}/(1+e^{ε/2r})``, ``q = 1/(1+e^{ε/2r})``
  (the standard SUE with ``ε/r`` per value, as here) but a block of only
  ``int(max)`` slots, so a value whose integer part equals ``int(max)`` has no
  slot of its own (an off-by-one: the maximal value falls off its block).
  Here every value has its slot; use ``k = int(max) + 1``.
* OUE: the reference uses ``p = 1/2`` but ``q = 1/(1+e^{ε/2r})`` over 11 slots;
  standard OUE with budget ``ε/r`` per value has ``q = 1/(1+e^{ε/r})`` (as here).
  The reference's q spends only ε/2 in total — more noise than claimed, so it
  is private but not the mechanism it is named after.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dpaudit.analysis.randomized_response import (
    oue_probabilities,
    safe_log,
    sue_probabilities,
    unary_block_loss,
)
from dpaudit.claims import AnalyticTruth, Definition, InputDomain, PrivacyClaim, WitnessPair
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.base import Mechanism, parameter
from dpaudit.mechanisms.registry import register
from dpaudit.validation import as_finite_array, check_epsilon, check_int


def unary_encode(categories: Any, k: int) -> np.ndarray:
    """One-hot encode integer categories in ``{0..k−1}`` along the last axis.

    ``categories`` of shape ``(..., r)`` gives ``uint8`` bits of shape
    ``(..., r·k)``: block ``j`` (bits ``j·k .. j·k+k−1``) has a single 1 at
    position ``categories[..., j]``.
    """
    k = check_int("k", k, minimum=1)
    cats = np.asarray(categories)
    if cats.ndim == 0:
        cats = cats.reshape(1)
    if not np.issubdtype(cats.dtype, np.integer):
        as_float = as_finite_array("categories", cats)
        if np.any(as_float != np.round(as_float)):
            raise InvalidArgumentError("categories", _preview(as_float), "integers")
        cats = as_float.astype(np.int64)
    if cats.size and (cats.min() < 0 or cats.max() >= k):
        raise InvalidArgumentError(
            "categories", _preview(cats.astype(np.float64)), f"integers in 0..{k - 1}"
        )
    bits = np.zeros((*cats.shape, k), dtype=np.uint8)
    np.put_along_axis(bits, cats[..., np.newaxis].astype(np.intp), 1, axis=-1)
    return bits.reshape(*cats.shape[:-1], cats.shape[-1] * k)


def _preview(arr: np.ndarray) -> str:
    flat = np.ravel(arr)
    head = ", ".join(f"{v:g}" for v in flat[:4])
    return f"[{head}{', ...' if flat.size > 4 else ''}]"


def slots_for_max(max_value: float) -> int:
    """Number of slots ``int(max) + 1`` that gives every value of ``[0, max]`` its slot.

    The OME reference used ``int(max)`` slots for SUE (its off-by-one).
    """
    if not math.isfinite(max_value) or max_value < 0:
        raise InvalidArgumentError("max_value", max_value, "a finite number >= 0")
    return int(max_value) + 1


@dataclass(frozen=True)
class UnaryEncoding(Mechanism, abstract=True):
    """Shared machinery of SUE and OUE; subclasses choose ``(p, q)`` and the input type."""

    output_kind: ClassVar[str] = "binary"
    #: Whether inputs are reals whose integer part is the category.
    real_input: ClassVar[bool] = False

    k: int = parameter(4, doc="categories per value (k bits per block)")
    dim: int = parameter(1, doc="number of values r; each gets budget ε/r")

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_int("k", self.k, minimum=2)
        check_int("dim", self.dim, minimum=1)

    # ----------------------------------------------------------- probabilities
    def _probabilities(self, epsilon: float) -> tuple[float, float]:
        raise NotImplementedError

    @property
    def epsilon_per_value(self) -> float:
        """Budget ``ε/r`` of each block."""
        return self.epsilon / self.dim

    @property
    def p(self) -> float:
        """Probability that the 1 bit of a block stays 1."""
        return self._probabilities(self.epsilon_per_value)[0]

    @property
    def q(self) -> float:
        """Probability that a 0 bit becomes 1."""
        return self._probabilities(self.epsilon_per_value)[1]

    @property
    def block_loss(self) -> float:
        """Exact loss ``ln(p(1−q)/((1−p)q))`` of one block whose categories differ."""
        p, q = self._probabilities(self.epsilon_per_value)
        return unary_block_loss(p, q)

    # --------------------------------------------------------------- contract
    @property
    def claim(self) -> PrivacyClaim:
        if self.real_input:
            domain = InputDomain((self.dim,), 0.0, float(self.k))
        else:
            domain = InputDomain((self.dim,), 0, self.k - 1, integer=True)
        return PrivacyClaim(definition=Definition.PURE, epsilon=self.epsilon, domain=domain)

    @property
    def output_shape(self) -> tuple[int, ...]:
        return (self.dim * self.k,)

    def categories(self, x: Any) -> np.ndarray:
        """The category of each value: the value itself, or ``min(int(v), k−1)`` for reals."""
        return self._categories(self.validate_input(x))

    def _categories(self, arr: np.ndarray) -> np.ndarray:
        # int(v) = floor(v) on the non-negative domain; v = k shares the top slot.
        return np.minimum(np.floor(arr), self.k - 1).astype(np.int64)

    def encode(self, x: Any) -> np.ndarray:
        """The clean (unperturbed) ``r·k`` bits of input ``x``."""
        return unary_encode(self.categories(x), self.k)

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        p, q = self._probabilities(self.epsilon_per_value)
        one_hot = unary_encode(self._categories(x), self.k)
        prob_one = np.where(one_hot == 1, p, q)
        return (rng.random((n, prob_one.size)) < prob_one).astype(np.uint8)

    def log_prob(self, x: Any, outputs: np.ndarray) -> np.ndarray:
        p, q = self._probabilities(self.epsilon_per_value)
        one_hot = self.encode(x).astype(bool)
        y = np.asarray(outputs, dtype=np.float64).reshape(len(outputs), -1)
        # log P(y) = Σ_bits log P(bit); safe_log keeps probabilities that rounded to 0/1 exact.
        log_one = np.where(one_hot, safe_log(p), safe_log(q))
        log_zero = np.where(one_hot, safe_log(1.0 - p), safe_log(1.0 - q))
        out = np.where(y == 1, log_one, log_zero).sum(axis=1)
        valid = np.all((y == 0) | (y == 1), axis=1)
        return np.where(valid, out, -math.inf)

    def privacy_loss(self, x: Any, x_prime: Any) -> float:
        """``(number of values whose category differs) · ln(p(1−q)/((1−p)q))``."""
        a = self.categories(x)
        b = self.categories(x_prime)
        return float(np.count_nonzero(a != b)) * self.block_loss

    def truth(self) -> AnalyticTruth:
        x = np.zeros(self.dim)
        x_prime = np.ones(self.dim)
        loss = self.privacy_loss(x, x_prime)
        return AnalyticTruth(
            true_epsilon=loss,
            method=(
                "closed form: r blocks × ln(p(1−q)/((1−p)q)) (Wang et al. 2017, Thm. 2), "
                "worst output has the 1 of x and not the 1 of x' in every block"
            ),
            witness=WitnessPair(
                x, x_prime, loss, "category 0 vs category 1 in every block (any two differ)"
            ),
            notes=(f"per-block p = {self.p:.6g}, q = {self.q:.6g}, budget ε/r each",),
        )


_SUE_REF = "Wang et al., USENIX Security 2017, §4.2.1 (SUE / basic RAPPOR)"
_OUE_REF = "Wang et al., USENIX Security 2017, §4.2.2, Eq. 11 (OUE)"
_EMB_REF = "; applied to embeddings as in Lyu et al. SIGIR 2020 code (see module docs)"


@register
@dataclass(frozen=True)
class SymmetricUnaryEncoding(UnaryEncoding):
    """SUE: ``p = e^{ε/2}/(1+e^{ε/2})``, ``q = 1 − p`` per block of ``k`` bits."""

    name: ClassVar[str] = "sue"
    reference: ClassVar[str] = _SUE_REF + ": p = e^{ε/2}/(1+e^{ε/2}), q = 1/(1+e^{ε/2})"
    summary: ClassVar[str] = "symmetric unary encoding of r categorical values"

    def _probabilities(self, epsilon: float) -> tuple[float, float]:
        return sue_probabilities(epsilon)


@register
@dataclass(frozen=True)
class OptimizedUnaryEncoding(UnaryEncoding):
    """OUE: ``p = 1/2``, ``q = 1/(1+e^ε)`` per block of ``k`` bits."""

    name: ClassVar[str] = "oue"
    reference: ClassVar[str] = _OUE_REF + ": p = 1/2, q = 1/(1+e^ε)"
    summary: ClassVar[str] = "optimised unary encoding of r categorical values"

    def _probabilities(self, epsilon: float) -> tuple[float, float]:
        return oue_probabilities(epsilon)


@register
@dataclass(frozen=True)
class SymmetricUnaryEmbedding(SymmetricUnaryEncoding):
    """SUE of ``int(v)`` for each of ``r`` real values in ``[0, k]`` (no off-by-one)."""

    name: ClassVar[str] = "sue-embedding"
    reference: ClassVar[str] = _SUE_REF + _EMB_REF
    summary: ClassVar[str] = "SUE on an embedding: one-hot of int(v) per value, ε/r each"
    real_input: ClassVar[bool] = True

    k: int = parameter(11, doc="slots per value; values in [0, k], slot min(int(v), k−1)")
    dim: int = parameter(50, doc="embedding size r; each value gets budget ε/r")


@register
@dataclass(frozen=True)
class OptimizedUnaryEmbedding(OptimizedUnaryEncoding):
    """OUE of ``int(v)`` for each of ``r`` real values in ``[0, k]`` (standard q)."""

    name: ClassVar[str] = "oue-embedding"
    reference: ClassVar[str] = _OUE_REF + _EMB_REF
    summary: ClassVar[str] = "OUE on an embedding: one-hot of int(v) per value, ε/r each"
    real_input: ClassVar[bool] = True

    k: int = parameter(11, doc="slots per value; values in [0, k], slot min(int(v), k−1)")
    dim: int = parameter(50, doc="embedding size r; each value gets budget ε/r")
