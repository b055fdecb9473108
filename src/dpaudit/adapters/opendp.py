"""Adapters: OpenDP's Laplace and Gaussian measurements audited as black boxes (``opendp`` extra).

OpenDP (https://opendp.org) builds *measurements*: a function together with a
privacy map ``d_in ↦ ε`` that is the library's own, proven promise.  The
adapter

* builds ``opendp.measurements.make_laplace`` on vectors of f64 under the L1
  distance, with the scale OpenDP's own ``binary_search_param`` picks for the
  target ε at ``d_in = dim·(HIGH − LOW)`` (the largest L1 distance between two
  inputs of the box ``[LOW, HIGH]^dim``: local DP, every pair is neighbouring);
* reads the claim from the measurement's **privacy map**: ``ε = map(d_in)``;
* samples by **calling the measurement**.  The measurement is defined on vectors
  of any length and adds independent noise to every element, so one call on
  ``x`` repeated ``n`` times returns ``n`` independent outputs for ``x`` — the
  same measurement whose map gives the claim, called once per block instead of
  once per sample (≈4× faster than per-sample calls).

Randomness and reproducibility
------------------------------
OpenDP draws its noise from the operating system's CSPRNG and accepts no seed.
The adapter therefore **cannot be bit-reproducible from dpaudit's seed**; it
declares ``externally_seeded = True``.  The consequences:

* every audit statement still holds — the auditors' confidence levels assume
  independent samples, which a CSPRNG provides;
* the same seed gives statistically equivalent, not identical, results; runs
  with 1 and with 2 workers differ in the same way;
* the guard's non-determinism check (which flags mechanisms that ignore the
  generator they are given) skips mechanisms that declare themselves externally
  seeded;
* a resumed run (``--resume``) keeps the finished units' counts and draws fresh
  noise for the missing ones: valid, but not bit-identical to an uninterrupted run.

Throughput: OpenDP's exact Laplace sampler gives about 5·10⁴ outputs/s on one
core here, ~10³× below numpy's uniform fill rate in the same run
(``benchmarks/false_alarms.py --throughput``).

The Gaussian measurement (``opendp-gaussian``, ``make_gaussian`` on f64 vectors
under the L2 distance) is built the same way: OpenDP's ``binary_search_param``
picks the scale whose (ε, δ) map — ``make_fix_delta(make_zCDP_to_approxDP(·), δ)``,
OpenDP's own conversion — meets the target at ``d_in = √dim·(HIGH − LOW)``.

Whole claims: each adapter's ``profile_claim`` is the library's own promise
for the audited pair's distance, read by :func:`claim_from_measurement` from
the measurement's privacy map — ρ-zCDP for the Gaussian (its native measure),
ε-DP for the Laplace — for ``dpaudit audit ... --claim library``.

``noise_divisor`` exists for testing auditors: it samples from a measurement
with ``scale / noise_divisor`` while the claim still comes from the correctly
scaled one — a deliberately mis-calibrated wrapper.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dpaudit.adapters._support import library_available, require
from dpaudit.claims import (
    ApproxDP,
    PrivacyClaim,
    PrivacyProfile,
    ProfileClaim,
    PureDP,
    ZeroConcentratedDP,
)
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.base import Mechanism, parameter
from dpaudit.mechanisms.domains import box_claim, check_box_params
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_delta, check_positive

#: Values passed to the measurement per call (bounds the size of the Python lists exchanged).
_BLOCK = 1 << 16


def _opendp() -> Any:
    dp = require("opendp.prelude", "opendp", "the OpenDP adapter")
    dp.enable_features("contrib")  # make_laplace is a "contrib" component in OpenDP
    return dp


@functools.lru_cache(maxsize=64)
def laplace_measurement(scale: float) -> Any:
    """OpenDP's Laplace measurement on f64 vectors (any length) under the L1 distance."""
    dp = _opendp()
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    return dp.m.make_laplace(domain, dp.l1_distance(T=float), scale=scale)


@functools.lru_cache(maxsize=64)
def calibrated_scale(d_in: float, epsilon: float) -> float:
    """The scale OpenDP's ``binary_search_param`` chooses so that ``map(d_in) <= epsilon``."""
    dp = _opendp()
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    metric = dp.l1_distance(T=float)
    return float(
        dp.binary_search_param(
            lambda s: dp.m.make_laplace(domain, metric, scale=s), d_in=d_in, d_out=epsilon
        )
    )


def claim_from_measurement(measurement: Any, d_in: float) -> ProfileClaim:
    """The whole claim an OpenDP measurement makes at input distance ``d_in``: its privacy map.

    By output measure (OpenDP's names): ``ZeroConcentratedDivergence`` → ρ-zCDP
    (ρ = ``map(d_in)``; Bun & Steinke 2016); ``MaxDivergence`` → ε-DP;
    ``SmoothedMaxDivergence`` → the privacy profile ``ε ↦ curve.delta(ε)``
    OpenDP returns; ``Approximate(MaxDivergence)`` → (ε, δ)-DP.  Anything else
    (e.g. a Rényi measure, whose map is a function) is refused by name.
    """
    measure = str(measurement.output_measure)
    value = measurement.map(d_in)
    if measure == "ZeroConcentratedDivergence":
        return ZeroConcentratedDP(float(value))
    if measure == "MaxDivergence":
        return PureDP(float(value))
    if measure == "Approximate(MaxDivergence)":
        return ApproxDP(float(value[0]), float(value[1]))
    if measure == "SmoothedMaxDivergence":
        curve = value
        return PrivacyProfile(
            lambda e: min(1.0, float(curve.delta(float(e)))),
            f"OpenDP privacy profile of the measurement at d_in = {d_in:g}",
        )
    raise InvalidArgumentError(
        "measurement",
        measure,
        "an OpenDP measurement whose output measure is ZeroConcentratedDivergence, "
        "MaxDivergence, SmoothedMaxDivergence or Approximate(MaxDivergence)",
    )


@dataclass(frozen=True)
class OpenDPLaplace(Mechanism):
    """OpenDP ``make_laplace`` on ``[low, high]^dim``; claim from its privacy map."""

    name: ClassVar[str] = "opendp-laplace"
    reference: ClassVar[str] = (
        "OpenDP Library, opendp.measurements.make_laplace (vector f64, L1 distance); "
        "Laplace mechanism of Dwork et al., TCC 2006"
    )
    summary: ClassVar[str] = "OpenDP's Laplace measurement as a black box (opendp extra)"
    #: OpenDP samples from the OS CSPRNG: not reproducible from dpaudit's seed.
    externally_seeded: ClassVar[bool] = True

    dim: int = parameter(1, doc="number of coordinates n")
    domain: tuple[float, float] = parameter(
        (0.0, 1.0), doc="input range [LOW, HIGH] per coordinate"
    )
    noise_divisor: float = parameter(
        1.0,
        doc="test only: sample with scale/divisor but claim the full-scale measurement's ε "
        "(a deliberately mis-calibrated wrapper when > 1)",
    )

    def __post_init__(self) -> None:
        check_box_params(self.epsilon, self.dim, self.domain)
        check_positive("noise_divisor", self.noise_divisor)

    @property
    def d_in(self) -> float:
        """Largest L1 distance between two inputs of the box: the map's input distance."""
        low, high = self.domain
        return self.dim * (high - low)

    @property
    def scale(self) -> float:
        """The noise scale of the *claimed* measurement (OpenDP's calibration for ε)."""
        return calibrated_scale(self.d_in, float(self.epsilon))

    @property
    def claimed_measurement(self) -> Any:
        """The measurement whose privacy map states the claim."""
        return laplace_measurement(self.scale)

    @property
    def sampling_measurement(self) -> Any:
        """The measurement that is called (differs only when ``noise_divisor != 1``)."""
        return laplace_measurement(self.scale / self.noise_divisor)

    @property
    def claim(self) -> PrivacyClaim:
        epsilon = float(self.claimed_measurement.map(self.d_in))
        return box_claim(
            epsilon, self.dim, self.domain, sensitivity=self.d_in, sensitivity_norm="L1"
        )

    @property
    def profile_claim(self) -> ProfileClaim:
        """ε-DP with ε = the privacy map at ``d_in`` (:func:`claim_from_measurement`)."""
        return claim_from_measurement(self.claimed_measurement, self.d_in)

    @property
    def profile_claim_source(self) -> str:
        """Where :attr:`profile_claim` comes from (printed with the audit)."""
        return f"OpenDP make_laplace(scale={self.scale:.6g}): ε = map(d_in = {self.d_in:g})"

    @property
    def output_shape(self) -> tuple[int, ...]:
        return (self.dim,)

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        # rng is not used: OpenDP takes no seed (see the module docstring).
        return call_on_rows(self.sampling_measurement, x, n, self.dim)


def call_on_rows(measurement: Any, x: np.ndarray, n: int, dim: int) -> np.ndarray:
    """``n`` outputs of a vector measurement on ``x``: ``x`` repeated, in blocks of calls."""
    out = np.empty(n * dim, dtype=np.float64)
    rows_per_call = max(1, _BLOCK // dim)
    row = x.astype(np.float64).ravel()
    for start in range(0, n, rows_per_call):
        rows = min(rows_per_call, n - start)
        block = np.tile(row, rows).tolist()
        out[start * dim : (start + rows) * dim] = measurement(block)
    return out.reshape(n, dim)


@functools.lru_cache(maxsize=64)
def gaussian_measurement(scale: float) -> Any:
    """OpenDP's Gaussian measurement on f64 vectors under the L2 distance (ρ-zCDP)."""
    dp = _opendp()
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    return dp.m.make_gaussian(domain, dp.l2_distance(T=float), scale=scale)


def approx_gaussian_measurement(scale: float, delta: float) -> Any:
    """The Gaussian measurement with OpenDP's zCDP → (ε, δ) conversion at fixed δ."""
    dp = _opendp()
    profile = dp.c.make_zCDP_to_approxDP(gaussian_measurement(scale))
    return dp.c.make_fix_delta(profile, delta)


@functools.lru_cache(maxsize=64)
def calibrated_gaussian_scale(d_in: float, epsilon: float, delta: float) -> float:
    """The scale ``binary_search_param`` picks so that the (ε, δ) map at ``d_in`` is on target."""
    dp = _opendp()
    return float(
        dp.binary_search_param(
            lambda s: approx_gaussian_measurement(s, delta), d_in=d_in, d_out=(epsilon, delta)
        )
    )


@dataclass(frozen=True)
class OpenDPGaussian(Mechanism):
    """OpenDP ``make_gaussian`` on ``[low, high]^dim``; claims from its privacy maps."""

    name: ClassVar[str] = "opendp-gaussian"
    reference: ClassVar[str] = (
        "OpenDP Library, opendp.measurements.make_gaussian (vector f64, L2 distance, zCDP); "
        "Bun & Steinke, TCC 2016 (zCDP); OpenDP's make_zCDP_to_approxDP conversion"
    )
    summary: ClassVar[str] = "OpenDP's Gaussian (zCDP) measurement as a black box (opendp extra)"
    externally_seeded: ClassVar[bool] = True

    delta: float = parameter(1e-5, doc="claimed δ, in (0, 1), for the (ε, δ) calibration")
    dim: int = parameter(1, doc="number of coordinates n")
    domain: tuple[float, float] = parameter(
        (0.0, 1.0), doc="input range [LOW, HIGH] per coordinate"
    )
    noise_divisor: float = parameter(
        1.0,
        doc="test only: sample with scale/divisor but claim the full-scale measurement's map "
        "(a deliberately mis-calibrated wrapper when > 1)",
    )

    def __post_init__(self) -> None:
        check_box_params(self.epsilon, self.dim, self.domain)
        if not 0.0 < check_delta(self.delta) < 1.0:
            raise InvalidArgumentError("delta", self.delta, "a number in (0, 1) for Gaussian")
        check_positive("noise_divisor", self.noise_divisor)

    @property
    def d_in(self) -> float:
        """Largest L2 distance between two inputs of the box: ``√dim·(HIGH − LOW)``."""
        low, high = self.domain
        return float(np.sqrt(self.dim) * (high - low))

    @property
    def scale(self) -> float:
        """The noise scale of the *claimed* measurement (OpenDP's calibration for (ε, δ))."""
        return calibrated_gaussian_scale(self.d_in, float(self.epsilon), float(self.delta))

    @property
    def claim(self) -> PrivacyClaim:
        eps, delta = approx_gaussian_measurement(self.scale, self.delta).map(self.d_in)
        return box_claim(
            float(eps),
            self.dim,
            self.domain,
            delta=float(delta),
            sensitivity=self.d_in,
            sensitivity_norm="L2",
        )

    @property
    def profile_claim(self) -> ProfileClaim:
        """ρ-zCDP with ρ = the Gaussian measurement's own map at ``d_in``."""
        return claim_from_measurement(gaussian_measurement(self.scale), self.d_in)

    @property
    def profile_claim_source(self) -> str:
        """Where :attr:`profile_claim` comes from (printed with the audit)."""
        return f"OpenDP make_gaussian(scale={self.scale:.6g}): ρ = map(d_in = {self.d_in:g})"

    @property
    def output_shape(self) -> tuple[int, ...]:
        return (self.dim,)

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        # rng is not used: OpenDP takes no seed (see the module docstring).
        sampling = gaussian_measurement(self.scale / self.noise_divisor)
        return call_on_rows(sampling, x, n, self.dim)


if library_available("opendp"):
    register(OpenDPLaplace)
    register(OpenDPGaussian)
