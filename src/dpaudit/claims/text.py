"""What a text rewriter claims: ε per token, word or document, and who its neighbours are."""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dpaudit.analysis.privacy_conversions import approx_dp_profile, check_epsilon_grid
from dpaudit.claims.fields import check_kind, init_fields, jsonable_number
from dpaudit.errors import InvalidArgumentError, MissingArgumentError
from dpaudit.validation import check_delta, check_epsilon


class Unit(enum.StrEnum):
    """What one ε of a text claim pays for."""

    TOKEN = "token"  # each generated token ε-DP; a document of n tokens costs n·ε (DP-Prompt)
    WORD = "word"  # each replaced word ε-DP; a document of n words costs n·ε (DP-MLM)
    DOCUMENT = "document"  # the whole output (ε, δ)-DP (DP-BART)


class Neighbours(enum.StrEnum):
    """Which two input documents the claim protects against telling apart."""

    ANY = "any"  # any two documents (local DP on documents)
    EQUAL_LENGTH = "equal_length"  # documents with the same number of words
    ONE_WORD = "one_word"  # documents that differ in exactly one word


#: :attr:`TextClaim.neighbouring`: each relation in words.
NEIGHBOURING_WORDS = {
    Neighbours.ANY: "any two documents (local DP on documents)",
    Neighbours.EQUAL_LENGTH: "any two documents with the same number of words",
    Neighbours.ONE_WORD: "documents of the same length that differ in at most one word",
}


@dataclass(frozen=True)
class TextClaim:
    """A rewriter's privacy claim, as its paper or documentation states it.

    Attributes:
        epsilon: ε per :attr:`unit`.
        unit: token, word or document.
        delta: δ of an approximate claim (0 for pure DP).
        neighbours: the documents the claim covers.
        source: where the claim is stated (paper and section), for the report.
    """

    epsilon: float
    unit: Unit = Unit.TOKEN
    delta: float = 0.0
    neighbours: Neighbours = Neighbours.ANY
    source: str = ""

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_delta(self.delta)
        object.__setattr__(self, "unit", Unit(self.unit))
        object.__setattr__(self, "neighbours", Neighbours(self.neighbours))

    kind: ClassVar[str] = "text"

    @property
    def neighbouring(self) -> str:
        """Who the neighbours are, in words (from :attr:`neighbours`)."""
        return NEIGHBOURING_WORDS[self.neighbours]

    def allowed_loss(
        self, x: Any = None, x_prime: Any = None, *, units: int | None = None
    ) -> float:
        """The privacy loss the claim allows one output of ``x`` against ``x'``.

        A document claim allows ``ε`` whatever the output's length; a per-token
        (or per-word) claim composes over the units actually released, ``n·ε``
        with ``n = units`` (needed then).  With both documents given, a pair
        the claim does not cover (:meth:`covers`) is allowed ``inf``: the claim
        says nothing about it.
        """
        if x is not None and x_prime is not None and not self.covers(x, x_prime):
            return math.inf
        if self.unit is Unit.DOCUMENT:
            return self.epsilon
        if units is None:
            raise MissingArgumentError(
                "units",
                f"the {self.unit.value}s released: a per-{self.unit.value} claim allows n·ε",
            )
        if units < 0:
            raise InvalidArgumentError("units", units, "an integer >= 0")
        return self.epsilon * units

    def profile(
        self, epsilons: Any, x: Any = None, x_prime: Any = None, *, units: int | None = None
    ) -> np.ndarray:
        """The profile of the per-document guarantee (L, δ_doc), with L = :meth:`allowed_loss`.

        A document claim gives ``(ε, δ)``; a per-unit claim needs ``units``
        (the n units released) and gives ``(n·ε, min(1, n·δ))`` by basic
        composition (Dwork & Roth 2014, Thm. 3.16), whose dominating-pair
        profile (Kairouz, Oh & Viswanath, ICML 2015, Thm. 2.1) is returned.
        That is sound — every output the claim covers meets it — but not the
        tightest: the optimal composition (KOV 2015, Thm. 3.3) is lower at
        many ε.  1 everywhere for a pair the claim does not cover.
        """
        loss = self.allowed_loss(x, x_prime, units=units)
        if math.isinf(loss):
            return np.ones_like(check_epsilon_grid(epsilons))
        n = 1 if self.unit is Unit.DOCUMENT else int(units or 0)
        if n == 0:  # nothing released: the output says nothing of the document
            return np.zeros_like(check_epsilon_grid(epsilons))
        return approx_dp_profile(epsilons, loss, min(1.0, n * self.delta))

    def covers(self, document: str, other: str) -> bool:
        """True when the claim protects the pair ``(document, other)``."""
        a, b = document.split(), other.split()
        if self.neighbours is Neighbours.ANY:
            return True
        if len(a) != len(b):
            return False
        if self.neighbours is Neighbours.EQUAL_LENGTH:
            return True
        return sum(u != v for u, v in zip(a, b, strict=True)) <= 1

    def describe(self) -> str:
        """One line such as ``ε = 10 per token (any two documents)``."""
        d = f", δ = {self.delta:g}" if self.delta else ""
        who = self.neighbours.value.replace("_", " ")
        return f"ε = {self.epsilon:g} per {self.unit.value}{d} ({who} documents)"

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {
            "kind": self.kind,
            "epsilon": self.epsilon,
            "unit": self.unit.value,
            "delta": self.delta,
            "neighbours": self.neighbours.value,
            "source": self.source,
            "per_document_bound": jsonable_number(
                math.inf if self.unit is not Unit.DOCUMENT else self.epsilon
            ),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TextClaim:
        """The claim :meth:`to_dict` wrote (``per_document_bound`` is derived, so skipped)."""
        check_kind(cls, data)
        return cls(**init_fields(cls, data))
