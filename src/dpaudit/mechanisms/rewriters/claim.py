"""What a text rewriter claims: ε per token, word or document, and who its neighbours are."""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from dpaudit.errors import InvalidArgumentError
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

    def allowed_loss(self, units_released: int) -> float:
        """The privacy loss the claim allows one output that released ``units_released`` units.

        Composition over the tokens (or words) actually generated: ``n·ε``; a
        document claim allows ``ε`` whatever its length.
        """
        if units_released < 0:
            raise InvalidArgumentError("units_released", units_released, "an integer >= 0")
        if self.unit is Unit.DOCUMENT:
            return self.epsilon
        return self.epsilon * units_released

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
            "epsilon": self.epsilon,
            "unit": self.unit.value,
            "delta": self.delta,
            "neighbours": self.neighbours.value,
            "source": self.source,
            "per_document_bound": math.inf if self.unit is not Unit.DOCUMENT else self.epsilon,
        }
