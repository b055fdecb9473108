"""Adapters: IBM diffprivlib's Laplace and Gaussian mechanisms as black boxes (diffprivlib extra).

diffprivlib (Holohan et al., arXiv:1907.02444) exposes mechanisms as objects
with ``epsilon``, ``delta`` and ``sensitivity`` attributes and a scalar
``randomise(value)``.  The adapter

* reads the claim from the library object: ``(mech.epsilon, mech.delta)``-DP
  with the L1 sensitivity ``mech.sensitivity`` it is calibrated to, set to
  ``dim·(HIGH − LOW)``, the largest L1 distance between two inputs of the box
  (local DP: every pair of inputs is neighbouring);
* samples by calling ``randomise`` on every coordinate of every output — the
  library accepts scalars only, so this is a Python loop over ``map`` (2–3·10⁵
  values/s on one core here, 200–300× below numpy's fill rate in the same run,
  ``benchmarks/false_alarms.py --throughput``; the fastest honest way, since
  vectorising would mean re-implementing the library's sampler instead of
  calling it);
* passes the library a ``numpy.random.RandomState`` seeded from the work unit's
  generator (diffprivlib's documented ``random_state`` argument), so results are
  **reproducible from dpaudit's seed** and bit-identical across workers.

Compatibility: diffprivlib 0.6.6's package ``__init__`` imports its
scikit-learn models, which fail with scikit-learn >= 1.9 (``sklearn.tree._tree``
no longer exports ``DOUBLE``).  Its ``mechanisms`` sub-package needs only numpy
and ``sklearn.utils.check_random_state`` and is imported completely before the
models fail, so the adapter uses that fully initialised sub-package when the
package import fails for this reason.  The mechanism code that runs is the
library's own, unmodified.  The same work-around is public for users' own
wrappers: :func:`import_diffprivlib`.

The Gaussian adapter (``diffprivlib-gaussian``) calls ``GaussianAnalytic``
(``calibration=analytic``, the default) or ``Gaussian`` (``classic``, which
diffprivlib allows for ε ≤ 1 only) with the L2 sensitivity ``√dim·(HIGH − LOW)``.
Its whole claim (``profile_claim``, for ``--claim library``) is what the
library's calibration promises about its noise: ``Δ/σ``-GDP (Dong, Roth & Su
2022, Thm. 2.7) with σ computed by dpaudit from the object's public
``epsilon``, ``delta`` and ``sensitivity`` by the same calibration —
``Gaussian.__init__`` sets ``σ = √(2 ln(1.25/δ))·Δ/ε`` (Dwork & Roth 2014,
Thm. A.1), ``GaussianAnalytic._find_scale`` solves Balle & Wang's (ICML 2018,
Alg. 1) equation by bisection.  That curve implies the stated (ε, δ) exactly
(analytic) or for ε ≤ 1 (classic), and it is the curve a sampler drawing
``N(0, σ²)`` exactly must meet at every ε — the audit then tests the sampler
(diffprivlib draws ``(Z₁ + Z₂)/√2`` from two normals; Holohan & Braghin 2021).

``noise_divisor`` exists for testing auditors: the sampling object is built
with ``sensitivity / noise_divisor`` (diffprivlib's scale is proportional to
the sensitivity, so the noise scale is divided by ``noise_divisor``) while the
claim is read from the correctly configured object.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import sys
from dataclasses import dataclass
from types import ModuleType
from typing import Any, ClassVar

import numpy as np

from dpaudit.adapters._support import library_available, library_random_state
from dpaudit.analysis.gaussian import analytic_gaussian_sigma, classic_gaussian_sigma
from dpaudit.claims import GaussianDP, PrivacyClaim
from dpaudit.errors import InvalidArgumentError, OptionalDependencyError
from dpaudit.mechanisms.base import Mechanism, parameter
from dpaudit.mechanisms.domains import box_claim, check_box_domain
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_delta, check_epsilon, check_int, check_positive


@functools.lru_cache(maxsize=1)
def import_diffprivlib() -> ModuleType:
    """``import diffprivlib`` that also works with scikit-learn ≥ 1.9 — for your own wrappers.

    diffprivlib 0.6.6's ``__init__`` imports its models, which fail with
    scikit-learn ≥ 1.9; its ``mechanisms``, ``tools``, ``accountant``, ``utils``
    and ``validation`` sub-packages have finished importing by then and work.
    When the package import fails for that reason, this returns a package
    module holding those sub-packages, registered as ``diffprivlib`` so that
    ``from diffprivlib.mechanisms import Laplace`` works afterwards too; only
    ``diffprivlib.models`` stays unavailable (importing it raises the original
    error).  The library's code is used unmodified.  Example::

        from dpaudit.adapters.diffprivlib import import_diffprivlib

        dp = import_diffprivlib()
        lap = dp.mechanisms.Laplace(epsilon=1.0, sensitivity=1.0)

    Raises :class:`~dpaudit.errors.OptionalDependencyError` when diffprivlib is
    not installed or its mechanisms cannot be imported either.
    """
    try:
        import diffprivlib

        return diffprivlib
    except ImportError as exc:
        loaded = sys.modules.get("diffprivlib.mechanisms")
        if loaded is None or not hasattr(loaded, "Laplace"):
            if not library_available("diffprivlib"):
                raise OptionalDependencyError(
                    "diffprivlib", "diffprivlib", "the diffprivlib adapter"
                ) from None
            raise OptionalDependencyError(
                "diffprivlib", "diffprivlib", f"the diffprivlib adapter (import failed: {exc})"
            ) from None
        return _partial_package(exc)


def _partial_package(error: ImportError) -> ModuleType:
    """The ``diffprivlib`` package without its models, from the sub-packages already imported."""
    spec = importlib.util.find_spec("diffprivlib")
    package = ModuleType("diffprivlib", "diffprivlib without diffprivlib.models (dpaudit)")
    package.__path__ = list(spec.submodule_search_locations or []) if spec else []
    package.__spec__ = spec  # importlib.util.find_spec("diffprivlib") keeps working
    package.__file__ = spec.origin if spec else None
    package.__version__ = importlib.metadata.version("diffprivlib")
    package.__dict__["__dpaudit_import_error__"] = repr(error)
    for name, module in list(sys.modules.items()):
        parts = name.split(".")
        if len(parts) == 2 and parts[0] == "diffprivlib" and parts[1] != "models":
            setattr(package, parts[1], module)
    sys.modules["diffprivlib"] = package
    return package


def diffprivlib_mechanisms() -> Any:
    """The ``diffprivlib.mechanisms`` module (see :func:`import_diffprivlib`)."""
    return import_diffprivlib().mechanisms


class _LibraryBox:
    """What the Laplace and Gaussian adapters share: the library object and the claim it makes.

    A subclass names its library class (:meth:`_library_class`) and the norm its
    sensitivity is measured in (:attr:`_NORM`); the claim is read back from the
    constructed object, so it is the library's, not a re-derivation.
    """

    _NORM: ClassVar[str]

    def _library_class(self) -> Any:
        raise NotImplementedError

    def library_mechanism(self, random_state: Any = None, *, sampling: bool = False) -> Any:
        """The diffprivlib object: the claimed one, or (``sampling``) the one called."""
        sensitivity = self.sensitivity / (self.noise_divisor if sampling else 1.0)  # type: ignore[attr-defined]
        return self._library_class()(
            epsilon=self.epsilon,  # type: ignore[attr-defined]
            delta=self.delta,  # type: ignore[attr-defined]
            sensitivity=sensitivity,
            random_state=random_state,
        )

    @property
    def claim(self) -> PrivacyClaim:
        lib = self.library_mechanism()
        return box_claim(
            float(lib.epsilon),
            self.dim,  # type: ignore[attr-defined]
            self.domain,  # type: ignore[attr-defined]
            delta=float(lib.delta),
            sensitivity=float(lib.sensitivity),
            sensitivity_norm=self._NORM,
        )

    @property
    def output_shape(self) -> tuple[int, ...]:
        return (self.dim,)  # type: ignore[attr-defined]

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        """Each coordinate through the library's own ``randomise``, seeded from ``rng``."""
        state = library_random_state(rng)
        randomise = self.library_mechanism(state, sampling=True).randomise
        values = np.tile(x.astype(np.float64).ravel(), n).tolist()
        out = np.fromiter(map(randomise, values), dtype=np.float64, count=len(values))
        return out.reshape(n, self.dim)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class DiffprivlibLaplace(_LibraryBox, Mechanism):
    """diffprivlib ``Laplace`` applied to each coordinate of ``[low, high]^dim``."""

    name: ClassVar[str] = "diffprivlib-laplace"
    reference: ClassVar[str] = (
        "IBM diffprivlib, diffprivlib.mechanisms.Laplace (Holohan et al., arXiv:1907.02444); "
        "scale Δ/(ε − ln(1 − δ)) for (ε, δ)"
    )
    summary: ClassVar[str] = "diffprivlib's Laplace mechanism as a black box (diffprivlib extra)"

    delta: float = parameter(0.0, doc="claimed δ in [0, 1) (diffprivlib's relaxed Laplace)")
    dim: int = parameter(1, doc="number of coordinates n")
    domain: tuple[float, float] = parameter(
        (0.0, 1.0), doc="input range [LOW, HIGH] per coordinate"
    )
    noise_divisor: float = parameter(
        1.0,
        doc="test only: divide the noise scale by this while claiming the library's ε "
        "(a deliberately mis-calibrated wrapper when > 1)",
    )

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_delta(self.delta)
        check_int("dim", self.dim, minimum=1)
        check_box_domain(self.domain)
        check_positive("noise_divisor", self.noise_divisor)

    @property
    def sensitivity(self) -> float:
        """L1 sensitivity over the box: ``dim·(HIGH − LOW)``."""
        low, high = self.domain
        return self.dim * (high - low)

    _NORM: ClassVar[str] = "L1"

    def _library_class(self) -> Any:
        return diffprivlib_mechanisms().Laplace


#: diffprivlib Gaussian classes by calibration.
GAUSSIAN_CLASSES = {"analytic": "GaussianAnalytic", "classic": "Gaussian"}


@dataclass(frozen=True)
class DiffprivlibGaussian(_LibraryBox, Mechanism):
    """diffprivlib ``GaussianAnalytic`` or ``Gaussian`` applied to each coordinate."""

    name: ClassVar[str] = "diffprivlib-gaussian"
    reference: ClassVar[str] = (
        "IBM diffprivlib, diffprivlib.mechanisms.GaussianAnalytic (Balle & Wang, ICML 2018) and "
        "Gaussian (Dwork & Roth 2014, Thm. A.1; ε ≤ 1)"
    )
    summary: ClassVar[str] = "diffprivlib's Gaussian mechanisms as a black box (diffprivlib extra)"

    delta: float = parameter(1e-5, doc="claimed δ, in (0, 1)")
    dim: int = parameter(1, doc="number of coordinates n")
    domain: tuple[float, float] = parameter(
        (0.0, 1.0), doc="input range [LOW, HIGH] per coordinate"
    )
    calibration: str = parameter(
        "analytic",
        doc="analytic (GaussianAnalytic) or classic (Gaussian, ε ≤ 1)",
        choices=tuple(GAUSSIAN_CLASSES),
    )
    noise_divisor: float = parameter(
        1.0,
        doc="test only: divide the noise scale by this while claiming the library's calibration "
        "(a deliberately mis-calibrated wrapper when > 1)",
    )

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        if not 0.0 < check_delta(self.delta) < 1.0:
            raise InvalidArgumentError("delta", self.delta, "a number in (0, 1) for Gaussian")
        check_int("dim", self.dim, minimum=1)
        check_box_domain(self.domain)
        check_positive("noise_divisor", self.noise_divisor)
        if self.calibration not in GAUSSIAN_CLASSES:
            raise InvalidArgumentError("calibration", self.calibration, "analytic or classic")
        if self.calibration == "classic" and self.epsilon > 1.0:
            raise InvalidArgumentError(
                "epsilon", self.epsilon, "at most 1 for diffprivlib's classic Gaussian"
            )

    @property
    def sensitivity(self) -> float:
        """L2 sensitivity over the box: ``√dim·(HIGH − LOW)``."""
        low, high = self.domain
        return float(np.sqrt(self.dim) * (high - low))

    _NORM: ClassVar[str] = "L2"

    def _library_class(self) -> Any:
        return getattr(diffprivlib_mechanisms(), GAUSSIAN_CLASSES[self.calibration])

    @property
    def calibrated_sigma(self) -> float:
        """σ of the library's calibration from its public ε, δ, Δ (see the module docstring)."""
        lib = self.library_mechanism()
        sigma_of = (
            analytic_gaussian_sigma if self.calibration == "analytic" else (classic_gaussian_sigma)
        )
        return sigma_of(float(lib.epsilon), float(lib.delta), float(lib.sensitivity))

    @property
    def profile_claim(self) -> GaussianDP:
        """``Δ/σ``-GDP: the curve of exact Gaussian noise at the library's calibration."""
        return GaussianDP.from_sigma(self.calibrated_sigma, self.sensitivity)

    @property
    def profile_claim_source(self) -> str:
        """Where :attr:`profile_claim` comes from (printed with the audit)."""
        lib = self.library_mechanism()
        return (
            f"diffprivlib {type(lib).__name__}(epsilon={lib.epsilon:g}, delta={lib.delta:g}, "
            f"sensitivity={lib.sensitivity:g}): Gaussian noise of σ = {self.calibrated_sigma:.6g} "
            f"({self.calibration} calibration) is Δ/σ-GDP"
        )


if library_available("diffprivlib"):
    register(DiffprivlibLaplace)
    register(DiffprivlibGaussian)
