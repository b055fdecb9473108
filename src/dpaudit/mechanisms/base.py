"""The one small interface every mechanism implements.

A mechanism is an immutable value (a frozen dataclass) that knows

* how to **sample**: ``sample(x, n, rng)`` returns ``n`` independent outputs for
  one input ``x`` as an array of shape ``(n, *output_shape)``, vectorised, from
  the ``numpy.random.Generator`` it is given and nothing else;
* what it **claims**: :attr:`claim`, any :class:`~dpaudit.claims.Claim` — usually a
  :class:`~dpaudit.claims.PrivacyClaim` (ε or (ε, δ) over its input domain), but a
  mechanism may declare a whole curve instead (e.g. :class:`~dpaudit.claims.GaussianDP`
  for Gaussian noise), and then says its input domain itself (:attr:`input_domain`);
* where the maths is known, what is **true**: :meth:`truth` and
  :meth:`privacy_loss`, computed by :mod:`dpaudit.analysis`;
* where it exists, its **log-density or log-pmf**: :meth:`log_prob`, used by the
  likelihood-ratio attacks of the auditors.

Subclasses implement :meth:`_sample` on an input that has already been
validated; :meth:`sample` does the checking.  Parameters are dataclass fields
declared with :func:`parameter`, so the registry and the CLI can list and
validate them without any per-mechanism glue.

**Every optional hook is declared here**, with its default and contract, and
read as an attribute (never with ``getattr``): :meth:`log_prob`,
:meth:`noise_from_uniform`, :meth:`truth`, :meth:`privacy_loss`,
:meth:`analysis_extras`, :attr:`warning`, :attr:`allows_nan_output` and
:attr:`externally_seeded`.  A concrete mechanism must have a ``name``: a class
without one fails when it is defined, unless it declares itself a family base
(``class Family(Mechanism, abstract=True)``).

Imports only the basics (claims, errors, validation); nothing from
``adapters/``, ``auditors/`` or above.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from dpaudit.claims import AnalyticTruth, Claim, InputDomain, PrivacyClaim
from dpaudit.errors import InvalidTypeError, MechanismError
from dpaudit.validation import check_int

#: Output kinds of vector mechanisms: real vectors, bit vectors, or category indices.
VECTOR_OUTPUT_KINDS = ("real", "binary", "categorical")
#: Every output kind an auditor dispatches on: the vector kinds, and words from a vocabulary.
OUTPUT_KINDS = (*VECTOR_OUTPUT_KINDS, "word")


def parameter(
    default: Any = dataclasses.MISSING,
    *,
    doc: str,
    cli: str | None = None,
    choices: tuple[str, ...] | None = None,
) -> Any:
    """Declare a mechanism parameter.

    ``doc`` is shown by ``dpaudit mechanisms``; ``cli`` is the ``-p NAME=VALUE``
    name when it differs from the field name (``lambda`` is a Python keyword);
    ``choices`` restricts a string parameter.
    """
    meta = {"doc": doc, "cli": cli, "choices": choices}
    return dataclasses.field(default=default, metadata=meta)


def require_name(cls: type, abstract: bool, kind: str, base: str) -> None:
    """Raise ``TypeError`` for a concrete ``kind`` class without a ``name``."""
    if not abstract and not getattr(cls, "name", ""):
        raise TypeError(
            f"{kind} class {cls.__qualname__} has no name: set name: ClassVar[str] = ..., "
            f"or declare a family base with class X({base}, abstract=True)"
        )


class MechanismContract(ABC):
    """What every mechanism declares, whatever it takes and returns: one contract, one registry.

    Vector mechanisms (:class:`Mechanism`) and word mechanisms
    (:class:`~dpaudit.mechanisms.word.base.WordMechanism`) both derive from it,
    and the registry (:mod:`dpaudit.mechanisms.registry`) holds them together.
    :attr:`output_kind` tells an auditor what the outputs are, and so which
    auditor applies: ``"word"`` is audited pair by pair against a metric claim,
    the vector kinds (:data:`VECTOR_OUTPUT_KINDS`) black-box against a pure or
    (ε, δ) claim.
    """

    #: Registry name, e.g. ``"laplace"`` or ``"cmp"``.
    name: ClassVar[str] = ""
    #: Paper and equation the implementation follows.
    reference: ClassVar[str] = ""
    #: One-line summary for listings.
    summary: ClassVar[str] = ""
    #: True when the published guarantee is known to be false.
    known_flawed: ClassVar[bool] = False
    #: One of :data:`OUTPUT_KINDS`.
    output_kind: ClassVar[str] = "real"

    def __init_subclass__(cls, *, abstract: bool = False, **kwargs: Any) -> None:
        """Refuse a concrete mechanism class without a ``name`` (``abstract=True``: a family)."""
        super().__init_subclass__(**kwargs)
        base = next(b.__name__ for b in cls.__mro__[1:] if MechanismContract in b.__mro__)
        require_name(cls, abstract, "mechanism", base)

    def user_code(self) -> Any:
        """The user's own callable this mechanism runs, if it wraps one; else ``None``.

        The trust checks look for process-wide generators in its module
        (:func:`dpaudit.auditors.core.guard.process_generators`): code that ignores the
        ``rng`` it is given and draws from a module-level generator repeats one stream in
        every worker process.
        """
        return None

    @property
    @abstractmethod
    def claim(self) -> Claim:
        """What the mechanism promises: any :class:`~dpaudit.claims.Claim`.

        A point claim (:class:`~dpaudit.claims.PrivacyClaim`), a metric one
        (:class:`~dpaudit.claims.MetricClaim`), a text rewriter's
        (:class:`~dpaudit.claims.TextClaim`) or a whole curve
        (:class:`~dpaudit.claims.GaussianDP`, :class:`~dpaudit.claims.RenyiDP`,
        :class:`~dpaudit.claims.TradeoffDP`...): every auditor asks it the same
        question, :meth:`~dpaudit.claims.Claim.profile`.
        """

    @abstractmethod
    def spec(self) -> dict[str, Any]:
        """JSON-ready description: ``{"mechanism": name, ...parameters}``."""


@dataclasses.dataclass(frozen=True)
class Mechanism(MechanismContract, abstract=True):
    """Base class of vector mechanisms; see the module docstring for the contract."""

    #: NaN policy the mechanism declares itself (only DPText has one): outputs may
    #: contain NaN, which the attacks round to 0.  Otherwise NaN is a sampler bug.
    allows_nan_output: ClassVar[bool] = False
    #: True when the randomness comes from a source other than the ``rng`` given to
    #: :meth:`sample` (e.g. OpenDP's OS CSPRNG): results are valid but not
    #: bit-reproducible, and the rng-discipline check is skipped.
    externally_seeded: ClassVar[bool] = False
    #: Outputs per randomness probe of the trust checks: a mechanism whose every output
    #: costs a training run (:class:`~dpaudit.mechanisms.training.game.CanaryGame`) probes
    #: with a few.
    probe_rows: ClassVar[int] = 64

    epsilon: float

    # ----------------------------------------------------------------- contract
    @property
    @abstractmethod
    def claim(self) -> Claim:
        """What the mechanism promises: a :class:`~dpaudit.claims.PrivacyClaim`, or a curve.

        A curve claim (e.g. ``GaussianDP.from_sigma(sigma, sensitivity)``) names
        no input domain, so a mechanism declaring one overrides :attr:`input_domain`.
        """

    @property
    @abstractmethod
    def output_shape(self) -> tuple[int, ...]:
        """Shape of one output."""

    @abstractmethod
    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        """Draw ``n`` outputs for the validated input ``x``; shape ``(n, *output_shape)``."""

    # ---------------------------------------------------------- optional maths
    def log_prob(self, x: np.ndarray, outputs: np.ndarray) -> np.ndarray:
        """Log-density (continuous) or log-pmf (discrete) of each output row under input ``x``.

        Returns shape ``(len(outputs),)``; ``-inf`` outside the support.
        """
        raise NotImplementedError(f"{self.name} exposes no log-density")

    def noise_from_uniform(self, u: np.ndarray) -> np.ndarray:
        """The mechanism's own noise transform ``T`` for additive mechanisms.

        Mechanisms of the form ``M(x) = x + T(U)``, ``U ~ U(0, 1)`` i.i.d. per
        coordinate, implement this with *exactly* the transform their sampler
        uses (including any defect, e.g. DPText's NaN branch).  Auditors use it to
        fuse sampling with a per-coordinate threshold attack without building the
        ``N × n`` output array.  Elementwise on any shape.
        """
        raise NotImplementedError(f"{self.name} is not an additive-noise mechanism")

    def round_output(self, out: np.ndarray) -> np.ndarray:
        """An additive mechanism's last step: ``M(x) = round_output(x + T(U))`` (in place).

        The identity unless the mechanism rounds its float outputs to a grid its input
        cannot move (:mod:`dpaudit.mechanisms.output_grid`); the fused paths that use
        :meth:`noise_from_uniform` apply it too, so they compute what the sampler does.
        """
        return out

    @property
    def is_additive(self) -> bool:
        """Whether :meth:`noise_from_uniform` is implemented."""
        return type(self).noise_from_uniform is not Mechanism.noise_from_uniform

    @property
    def has_log_prob(self) -> bool:
        """Whether :meth:`log_prob` is implemented."""
        return type(self).log_prob is not Mechanism.log_prob

    def truth(self) -> AnalyticTruth | None:
        """Exact worst-case privacy over the claimed domain, or None if not known in closed form."""
        return None

    def privacy_loss(self, x: Any, x_prime: Any) -> float:
        """Exact ``sup_y |ln p(y|x) − ln p(y|x')|`` for one input pair (``inf`` if unbounded)."""
        raise NotImplementedError(f"{self.name} has no exact pairwise privacy loss")

    def analysis_extras(self) -> dict[str, Any]:
        """Extra JSON-ready entries for ``dpaudit analyze`` (e.g. a paper's example); {} if none."""
        return {}

    @property
    def warning(self) -> str | None:
        """A caveat about the claim or its calibration to show beside the analysis; None if none."""
        return None

    # ------------------------------------------------- inputs the auditor encodes
    def input_value(self, x: Any) -> Any:
        """The user's own input an encoded input ``x`` stands for; None when inputs are not encoded.

        A mechanism over a typed domain (integers, categories, datasets) is audited
        through numbers standing for its inputs; witnesses show the user's values.
        """
        return None

    @property
    def input_encoding(self) -> str:
        """The rule between the user's inputs and the numbers the auditor samples ("" if none)."""
        return ""

    @property
    def claim_text(self) -> str:
        """The claim in the user's terms (an encoded domain's claim is over indices)."""
        return self.claim.describe()

    # -------------------------------------------------------------- machinery
    @property
    def input_domain(self) -> InputDomain:
        """The claimed input domain: the :class:`~dpaudit.claims.PrivacyClaim`'s.

        A mechanism whose claim is a curve (no domain) overrides this property.
        """
        claim = self.claim
        if not isinstance(claim, PrivacyClaim):
            raise MechanismError(
                f"{self.name} claims {claim.describe()}, which names no input domain: "
                "a mechanism declaring a curve claim overrides input_domain"
            )
        return claim.domain

    @property
    def input_shape(self) -> tuple[int, ...]:
        """Shape of one input."""
        return self.input_domain.shape

    def validate_input(self, x: Any, name: str = "x") -> np.ndarray:
        """Check ``x`` against the input domain and return it as an array."""
        return self.input_domain.validate(x, name)

    def validate_pair(self, x: Any, x_prime: Any) -> tuple[np.ndarray, np.ndarray]:
        """Check both inputs of a pair (errors name ``x`` and ``x_prime``); return the arrays."""
        return self.validate_input(x), self.validate_input(x_prime, "x_prime")

    def sample(self, x: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        """Draw ``n`` independent outputs of the mechanism on input ``x``.

        ``rng`` must be a :class:`numpy.random.Generator`; it is the only source
        of randomness, so equal generator states give equal outputs.
        """
        arr = self.validate_input(x)
        n = check_int("n", n, minimum=1)
        if not isinstance(rng, np.random.Generator):
            raise InvalidTypeError("rng", rng, "a numpy.random.Generator")
        out = self._sample(arr, n, rng)
        expected = (n, *self.output_shape)
        if not isinstance(out, np.ndarray) or out.shape != expected:
            raise MechanismError(
                f"mechanism {self.name!r} returned shape "
                f"{getattr(out, 'shape', type(out).__name__)} for input {arr.tolist()}: "
                f"expected {expected}"
            )
        return out

    def params(self) -> dict[str, Any]:
        """The mechanism's parameters (including ε) as a dict keyed by CLI names."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            key = f.metadata.get("cli") or f.name
            out[key] = getattr(self, f.name)
        return out

    def spec(self) -> dict[str, Any]:
        """A JSON-ready description that :func:`dpaudit.mechanisms.from_spec` turns back."""
        return {"mechanism": self.name, "params": self.params()}


MechanismFactory = Callable[..., Mechanism]
