"""The DP-SGD accountant: Rényi DP of the Poisson-subsampled Gaussian mechanism, composed.

One step of DP-SGD (Abadi et al., CCS 2016, Alg. 1) releases ``Σ_{i∈B} clip(g_i) + N(0, σ²C²I)``
where each record joins the batch ``B`` independently with probability ``q`` (Poisson
sampling).  For add/remove neighbours it is the *sampled Gaussian mechanism* of Mironov,
Talwar & Zhang (2019, "Rényi Differential Privacy of the Sampled Gaussian Mechanism",
arXiv:1908.10530), whose Rényi divergence at an integer order ``α ≥ 2`` has the exact
binomial expansion of their §3.3::

    A_α = Σ_{k=0}^{α} C(α, k) (1 − q)^{α−k} q^k exp((k² − k)/(2σ²)),
    ε_step(α) = ln A_α / (α − 1).

``T`` steps compose additively in RDP (Mironov, CSF 2017, Prop. 1), and the RDP curve
converts to (ε, δ) by Canonne, Kamath & Steinke (NeurIPS 2020, Prop. 12), minimised over
the orders::

    ε(δ) = min_α [T·ε_step(α) + ln((α − 1)/α) − (ln δ + ln α)/(α − 1)].

This is the conversion Opacus' ``get_privacy_spent`` applies.  Only *integer* orders are
evaluated here (:data:`DEFAULT_ORDERS` = 2, 3, …, 256): the binomial sum is then finite and
exact, but a fractional order between two integers can be a little better, so ε is
slightly *above* (never below) Opacus' RDP accountant, whose default orders also include
fractional ones (1.1 … 10.9).  :class:`DPSGDEvent` is an immutable description of one
training run's privacy cost, in the style of dp_accounting's ``DpEvent``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import gammaln, logsumexp

from dpaudit.claims.curves import ApproxDP, RenyiDP
from dpaudit.errors import InvalidArgumentError
from dpaudit.validation import check_int, check_positive, check_real

#: Integer Rényi orders 2, 3, …, 256: where the binomial expansion is exact.  No fractional
#: orders, so ε is slightly above Opacus' accountant (which adds 1.1, 1.2, … 10.9).
DEFAULT_ORDERS: tuple[int, ...] = tuple(range(2, 257))

#: Batch sampling schemes an event may record; only ``poisson`` is analysed.
SAMPLINGS = ("poisson", "shuffle")


def _check_rate(name: str, value: object) -> float:
    q = check_real(name, value)
    if not 0.0 < q <= 1.0:
        raise InvalidArgumentError(name, value, "a sampling rate in (0, 1]")
    return q


def _check_orders(orders: Any) -> np.ndarray:
    values = list(orders) if not isinstance(orders, numbers.Real) else [orders]
    bad = [
        a
        for a in values
        if isinstance(a, bool)
        or not isinstance(a, numbers.Real)
        or not math.isfinite(float(a))
        or float(a) != int(a)
        or int(a) < 2
    ]
    if not values or bad:
        raise InvalidArgumentError(
            "orders", orders, "a non-empty list of integer Rényi orders >= 2"
        )
    return np.asarray([int(a) for a in values], dtype=np.int64)


def subsampled_gaussian_rdp(
    sampling_rate: float, noise_multiplier: float, orders: Any = DEFAULT_ORDERS
) -> np.ndarray:
    """Per-step RDP ``ε(α)`` of the Poisson-subsampled Gaussian at integer orders ``α ≥ 2``.

    The exact binomial expansion of Mironov, Talwar & Zhang (2019, §3.3):
    ``ln A_α/(α − 1)`` with ``A_α = Σ_k C(α,k)(1−q)^{α−k} q^k exp((k² − k)/(2σ²))``, summed
    in log space (``gammaln`` for the binomial coefficients, ``logsumexp`` for the sum),
    so large orders and small σ do not overflow.  ``q = 1`` is the Gaussian mechanism's
    ``α/(2σ²)`` exactly (Mironov 2017, Prop. 7).  ``noise_multiplier`` is σ, the noise
    standard deviation in units of the clipping norm.
    """
    q = _check_rate("sampling_rate", sampling_rate)
    sigma = check_positive("noise_multiplier", noise_multiplier)
    alphas = _check_orders(orders)
    if q == 1.0:
        return alphas / (2.0 * sigma**2)
    top = int(alphas.max())
    k = np.arange(top + 1, dtype=np.float64)
    a = alphas.astype(np.float64)[:, None]
    valid = k[None, :] <= a
    log_binom = gammaln(a + 1.0) - gammaln(k + 1.0) - gammaln(np.maximum(a - k, 0.0) + 1.0)
    terms = log_binom + (a - k) * math.log1p(-q) + k * math.log(q) + (k * k - k) / (2.0 * sigma**2)
    terms = np.where(valid, terms, -np.inf)
    log_a = logsumexp(terms, axis=1)
    # ln A_α ≥ 0 (A_α is a Rényi moment ≥ 1); clip rounding just below 0.
    return np.maximum(log_a, 0.0) / (alphas - 1.0)


def rdp_to_epsilon(rdp: Any, orders: Any, delta: float) -> tuple[float, int]:
    """Best ``(ε, α)`` of the CKS conversion over the orders (Canonne, Kamath & Steinke 2020).

    ``ε = rdp(α) + ln((α − 1)/α) − (ln δ + ln α)/(α − 1)`` (Prop. 12 solved for ε), the
    minimum over the listed orders, never below 0.
    """
    d = check_real("delta", delta)
    if not 0.0 < d < 1.0:
        raise InvalidArgumentError("delta", delta, "a number in the open interval (0, 1)")
    alphas = _check_orders(orders).astype(np.float64)
    values = np.asarray(rdp, dtype=np.float64).reshape(-1)
    if values.shape != alphas.shape:
        raise InvalidArgumentError("rdp", "<array>", f"one value per order ({alphas.size})")
    eps = values + np.log1p(-1.0 / alphas) - (math.log(d) + np.log(alphas)) / (alphas - 1.0)
    eps = np.where(np.isnan(eps), np.inf, eps)
    best = int(np.argmin(eps))
    return max(float(eps[best]), 0.0), int(alphas[best])


@dataclass(frozen=True)
class DPSGDEvent:
    """``steps`` compositions of the subsampled Gaussian: what a DP-SGD accountant analyses.

    ``noise_multiplier`` σ (noise std over clipping norm), ``sampling_rate`` q, ``steps`` T,
    and ``sampling``, the batch sampling the accountant *assumes*: only ``"poisson"``
    (each record in each batch independently with probability q) is analysed; an event
    recording ``"shuffle"`` (fixed-size batches of a permutation) has no bound here, and
    :meth:`epsilon` refuses it rather than report the Poisson number for it.
    """

    noise_multiplier: float
    sampling_rate: float
    steps: int
    sampling: str = "poisson"

    def __post_init__(self) -> None:
        check_positive("noise_multiplier", self.noise_multiplier)
        _check_rate("sampling_rate", self.sampling_rate)
        check_int("steps", self.steps, minimum=1)
        if self.sampling not in SAMPLINGS:
            raise InvalidArgumentError("sampling", self.sampling, f"one of {SAMPLINGS}")

    def _check_analysed(self) -> None:
        if self.sampling != "poisson":
            raise InvalidArgumentError(
                "sampling",
                self.sampling,
                "'poisson': only Poisson subsampling is analysed by this accountant; "
                "fixed-size shuffled batches have no subsampled-Gaussian RDP bound here",
            )

    def rdp(self, orders: Any = DEFAULT_ORDERS) -> np.ndarray:
        """``T · ε_step(α)`` at each order (RDP composition, Mironov 2017, Prop. 1)."""
        self._check_analysed()
        per_step = subsampled_gaussian_rdp(self.sampling_rate, self.noise_multiplier, orders)
        return int(self.steps) * per_step

    def epsilon(self, delta: float, orders: Any = DEFAULT_ORDERS) -> float:
        """ε at ``delta``: the CKS 2020 conversion, best over ``orders``, never below 0."""
        return rdp_to_epsilon(self.rdp(orders), orders, delta)[0]

    def renyi_claim(self, orders: Any = DEFAULT_ORDERS) -> RenyiDP:
        """The composed RDP curve as a :class:`~dpaudit.claims.curves.RenyiDP` claim.

        Orders whose ε(α) overflows to infinity are dropped (they bound nothing).
        """
        alphas = _check_orders(orders)
        values = self.rdp(alphas)
        keep = np.isfinite(values)
        if not np.any(keep):
            raise InvalidArgumentError(
                "noise_multiplier", self.noise_multiplier, "a noise level with finite RDP"
            )
        order_idx = np.argsort(alphas[keep])
        kept = alphas[keep][order_idx]
        return RenyiDP(tuple(float(a) for a in kept), tuple(values[keep][order_idx]))

    def approx_claim(self, delta: float, orders: Any = DEFAULT_ORDERS) -> ApproxDP:
        """``ApproxDP(epsilon(delta), delta)``: the (ε, δ) point the accountant reports."""
        eps = self.epsilon(delta, orders)
        # ApproxDP needs ε > 0; an accountant's ε is 0 only when δ is already vacuous.
        return ApproxDP(max(eps, np.finfo(np.float64).tiny), delta)

    def gdp_mu(self) -> float:
        """μ ≈ q·√(T(e^{1/σ²} − 1)): the CLT approximation of Bu, Dong, Long & Su (2020, Thm. 5).

        An asymptotic approximation (T → ∞, q√T fixed), not a sound bound: use it to
        compare with the μ-GDP literature, not to certify.
        """
        self._check_analysed()
        q, sigma, steps = self.sampling_rate, self.noise_multiplier, int(self.steps)
        return q * math.sqrt(steps * math.expm1(1.0 / sigma**2))

    def describe(self) -> str:
        """One line, e.g. ``DP-SGD: 1000 steps, poisson sampling q=0.01, σ=1.1``."""
        return (
            f"DP-SGD: {self.steps} steps, {self.sampling} sampling q={self.sampling_rate:g}, "
            f"σ={self.noise_multiplier:g} (subsampled-Gaussian RDP at integer orders, "
            "Mironov, Talwar & Zhang 2019)"
        )


__all__ = [
    "DEFAULT_ORDERS",
    "SAMPLINGS",
    "DPSGDEvent",
    "rdp_to_epsilon",
    "subsampled_gaussian_rdp",
]
