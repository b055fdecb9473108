"""Adapters: pure-ldp frequency-oracle clients audited as black boxes (``pureldp`` extra).

pure-ldp (Cormode, Maddock & Maple, VLDB 2021, "Frequency Estimation under
Local Differential Privacy") implements LDP protocols as *clients* whose
``privatise(item)`` perturbs one user's item.  Two clients are adapted:

* ``pureldp-de`` — ``DEClient``, direct encoding (generalised randomised
  response, Wang et al., USENIX Security 2017, §4.1) over ``{0..k−1}``;
  output: the reported category, shape ``(1,)``;
* ``pureldp-ue`` — ``UEClient``, unary encoding (Wang et al. 2017, §4.3):
  symmetric (SUE, ``p = e^{ε/2}/(e^{ε/2}+1)``) or optimised (OUE, ``p = 1/2``,
  ``q = 1/(e^ε+1)``); output: ``k`` bits.

The claim is read from the client object: ``client.epsilon``-LDP on the
domain of its ``d`` categories (every pair of items is neighbouring).  Items
are passed as indices ``0..k−1`` (``index_mapper=int``; pure-ldp's default
mapper expects items ``1..k``).

Randomness: pure-ldp draws from Python's global ``random`` and numpy's legacy
global generator.  The adapter seeds both from the work unit's generator
before each batch and restores them afterwards (see
:func:`dpaudit.adapters._support.seeded_global_random`), so results are
reproducible from dpaudit's seed.  ``privatise`` is called once per output (a
Python loop, as the library offers no batch call): about 2·10⁶ outputs/s for
direct encoding and 8·10⁴ for unary encoding with k = 4 on one core here
(``benchmarks/false_alarms.py --throughput``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dpaudit.adapters._support import library_available, require, seeded_global_random
from dpaudit.claims import PrivacyClaim
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.base import Mechanism, parameter
from dpaudit.mechanisms.domains import category_claim, check_category_params
from dpaudit.mechanisms.registry import register

UE_VARIANTS = ("sue", "oue")


def _oracles() -> Any:
    return require("pure_ldp.frequency_oracles", "pureldp", "the pure-ldp adapters")


@dataclass(frozen=True)
class PureLDPDirectEncoding(Mechanism):
    """pure-ldp ``DEClient`` (k-ary randomised response) over ``{0..k−1}``."""

    name: ClassVar[str] = "pureldp-de"
    reference: ClassVar[str] = (
        "pure-ldp DEClient (Cormode et al., VLDB 2021); direct encoding of "
        "Wang et al., USENIX Security 2017, §4.1"
    )
    summary: ClassVar[str] = "pure-ldp direct encoding (GRR) client as a black box (pureldp extra)"
    output_kind: ClassVar[str] = "categorical"

    k: int = parameter(4, doc="number of categories (items 0..k−1)")

    def __post_init__(self) -> None:
        check_category_params(self.epsilon, self.k)

    def client(self) -> Any:
        """The library's client object."""
        return _oracles().DEClient(epsilon=self.epsilon, d=self.k, index_mapper=int)

    @property
    def claim(self) -> PrivacyClaim:
        return category_claim(float(self.client().epsilon), self.k)

    @property
    def output_shape(self) -> tuple[int, ...]:
        return (1,)

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        privatise = self.client().privatise
        item = int(x[0])
        with seeded_global_random(rng):
            out = np.fromiter((privatise(item) for _ in range(n)), dtype=np.int64, count=n)
        return out.reshape(n, 1)


@dataclass(frozen=True)
class PureLDPUnaryEncoding(Mechanism):
    """pure-ldp ``UEClient`` (SUE or OUE) over ``{0..k−1}``; output ``k`` bits."""

    name: ClassVar[str] = "pureldp-ue"
    reference: ClassVar[str] = (
        "pure-ldp UEClient (Cormode et al., VLDB 2021); unary encoding of "
        "Wang et al., USENIX Security 2017, §4.3 (SUE, OUE)"
    )
    summary: ClassVar[str] = "pure-ldp unary encoding (SUE/OUE) client as a black box"
    output_kind: ClassVar[str] = "binary"

    k: int = parameter(4, doc="number of categories (items 0..k−1)")
    variant: str = parameter("oue", doc="sue or oue", choices=UE_VARIANTS)

    def __post_init__(self) -> None:
        check_category_params(self.epsilon, self.k)
        if self.variant not in UE_VARIANTS:
            raise InvalidArgumentError("variant", self.variant, "sue or oue")

    def client(self) -> Any:
        """The library's client object."""
        return _oracles().UEClient(
            epsilon=self.epsilon, d=self.k, use_oue=self.variant == "oue", index_mapper=int
        )

    @property
    def claim(self) -> PrivacyClaim:
        return category_claim(float(self.client().epsilon), self.k)

    @property
    def output_shape(self) -> tuple[int, ...]:
        return (self.k,)

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        privatise = self.client().privatise
        item = int(x[0])
        out = np.empty((n, self.k), dtype=np.int8)
        with seeded_global_random(rng):
            for i in range(n):
                out[i] = privatise(item)
        return out


if library_available("pure_ldp"):
    register(PureLDPDirectEncoding)
    register(PureLDPUnaryEncoding)
