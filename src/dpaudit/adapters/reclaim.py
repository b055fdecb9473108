"""A mechanism audited against a claim the caller gives: ``as_mechanism``, the one resolver.

``dpaudit.audit``, ``assert_no_violation`` and the command line all turn what the user hands
them — a dpaudit mechanism, a mechanism with another claim, a plain function ``f(x, n, rng)``
with a :class:`~dpaudit.claims.PrivacyClaim` — into one :class:`~dpaudit.mechanisms.base.
Mechanism` here, so the rules (a number replaces the mechanism's ε, a function needs a claim
with its input domain) are written once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dpaudit.adapters.callable import FunctionMechanism
from dpaudit.claims import PrivacyClaim
from dpaudit.errors import InvalidTypeError
from dpaudit.mechanisms.base import Mechanism
from dpaudit.validation import check_epsilon


@dataclass(frozen=True)
class ReclaimedMechanism(Mechanism):
    """``inner`` sampled unchanged, audited against another claim ``claimed``."""

    name: ClassVar[str] = "reclaimed"
    reference: ClassVar[str] = "a mechanism audited against a claim given by the caller"
    summary: ClassVar[str] = "any mechanism with a replaced claim"

    inner: Mechanism | None = None
    claimed: PrivacyClaim | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.inner, Mechanism):
            raise InvalidTypeError("mechanism", self.inner, "a dpaudit Mechanism")
        if not isinstance(self.claimed, PrivacyClaim):
            raise InvalidTypeError("claim", self.claimed, "a PrivacyClaim")

    def _inner(self) -> Mechanism:
        assert self.inner is not None  # checked in __post_init__
        return self.inner

    @property
    def claim(self) -> PrivacyClaim:
        assert self.claimed is not None
        return self.claimed

    @property
    def output_shape(self) -> tuple[int, ...]:
        return self._inner().output_shape

    @property
    def output_kind(self) -> str:  # type: ignore[override]
        return self._inner().output_kind

    @property
    def allows_nan_output(self) -> bool:  # type: ignore[override]
        return self._inner().allows_nan_output

    @property
    def externally_seeded(self) -> bool:
        """Delegated to the wrapped mechanism."""
        return self._inner().externally_seeded

    @property
    def has_log_prob(self) -> bool:
        return self._inner().has_log_prob

    @property
    def is_additive(self) -> bool:
        return False  # the fused paths are not routed through the wrapper

    def log_prob(self, x: np.ndarray, outputs: np.ndarray) -> np.ndarray:
        return self._inner().log_prob(x, outputs)

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return self._inner().sample(x, n, rng)


def as_mechanism(mechanism: Mechanism | Callable[..., Any], claim: Any = None) -> Mechanism:
    """A dpaudit :class:`Mechanism` for ``mechanism`` audited against ``claim``.

    ``mechanism``: a dpaudit mechanism (``claim`` None: its own claim; a number:
    its claim with that ε; a :class:`PrivacyClaim`: that claim), or a function
    ``f(x, n, rng)`` (``claim`` must then be a :class:`PrivacyClaim`, which
    carries the input domain).  With a typed domain of :mod:`dpaudit.domains`
    (an int range, booleans, categories, words, vectors, datasets) ``f``
    receives a value of that type.  On any domain it returns an array or a
    sequence of ``n`` outputs of any type, encoded once by
    :mod:`dpaudit.adapters.encoding`.
    """
    if isinstance(mechanism, Mechanism):
        if claim is None:
            return mechanism
        if isinstance(claim, (int, float)) and not isinstance(claim, bool):
            claim = dataclasses.replace(mechanism.claim, epsilon=check_epsilon(claim, "claim"))
        if not isinstance(claim, PrivacyClaim):
            raise InvalidTypeError("claim", claim, "None, a number ε or a PrivacyClaim")
        return ReclaimedMechanism(epsilon=claim.epsilon, inner=mechanism, claimed=claim)
    if callable(mechanism):
        if not isinstance(claim, PrivacyClaim):
            raise InvalidTypeError(
                "claim", claim, "a PrivacyClaim (with its input domain) for a plain function"
            )
        return FunctionMechanism(epsilon=claim.epsilon, function=mechanism, claimed=claim)
    raise InvalidTypeError("mechanism", mechanism, "a dpaudit Mechanism or a function f(x, n, rng)")


__all__ = ["ReclaimedMechanism", "as_mechanism"]
