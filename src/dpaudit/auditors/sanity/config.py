"""The options of one sanity check, as one value for ``dpaudit.audit(..., method="sanity")``."""

from __future__ import annotations

from dataclasses import dataclass

from dpaudit.auditors.sanity.check import PATHS, TIE_RULES
from dpaudit.errors import InvalidArgumentError
from dpaudit.validation import check_int, check_probability_open, check_seed


@dataclass(frozen=True)
class SanityConfig:
    """Runs per input, root seed, confidence, tie rule and path of :func:`sanity_check`.

    The defaults are :func:`~dpaudit.auditors.sanity.check.sanity_check`'s, and the values
    are checked here with the same messages, so a bad option is refused before anything
    is sampled.
    """

    runs: int = 1_000_000
    seed: int = 0
    confidence: float = 0.95
    tie_rule: str = "half-even"
    path: str = "auto"

    def __post_init__(self) -> None:
        check_int("runs", self.runs, minimum=1)
        check_seed(self.seed)
        check_probability_open("confidence", self.confidence)
        if self.tie_rule not in TIE_RULES:
            raise InvalidArgumentError("tie_rule", self.tie_rule, f"one of {', '.join(TIE_RULES)}")
        if self.path not in PATHS:
            raise InvalidArgumentError("path", self.path, f"one of {', '.join(PATHS)}")


__all__ = ["SanityConfig"]
