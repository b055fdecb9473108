"""Exact sensitivity of norm clipping, the step ADePT got wrong.

ADePT (Krishna et al., EACL 2021, Eq. 9; Habernal, EMNLP 2021, Eq. 13) clips a
latent vector with ``f(r) = r · min(1, C / ‖r‖_p)`` before adding noise.  The
image of ``f`` over all of ``ℝⁿ`` is exactly the closed ``L_p`` ball ``B_p(C)``
(every point of the ball is its own image), so its ``L_q`` sensitivity is the
``L_q`` diameter of that ball::

    Δ_q = sup_{a, b ∈ B_p(C)} ‖a − b‖_q = 2 · max_{‖v‖_p ≤ C} ‖v‖_q

(``≤`` by the triangle inequality, ``=`` at ``a = v*, b = −v*`` because the ball
is symmetric).  The inner maximum is the norm-equivalence constant
``C · n^{max(0, 1/q − 1/p)}`` (Hölder's inequality for ``q < p``, attained at the
constant vector ``C·n^{−1/p}·(1, …, 1)``; monotonicity of ``L_q`` norms in ``q``
for ``q ≥ p``, attained at ``C·e₁``), with ``1/∞ = 0``.  Hence

    Δ_q = 2 C · n^{max(0, 1/q − 1/p)}

which for ``p = 2, q = 1`` is Habernal's Theorem 5.1: ``2C√n``, not the ``2C``
that ADePT's Theorem 3.2 claims.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.errors import InvalidArgumentError
from dpaudit.validation import check_int, check_positive

#: The norms supported for clipping (``p``) and for measuring sensitivity (``q``).
NORMS: tuple[float, ...] = (1.0, 2.0, math.inf)


def parse_norm(name: str, value: Any) -> float:
    """Return ``value`` as one of :data:`NORMS` (accepts ``1``, ``2``, ``inf``, ``"inf"``)."""
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("inf", "infinity", "∞", "max"):
            return math.inf
        try:
            value = float(text)
        except ValueError:
            raise InvalidArgumentError(name, value, "one of 1, 2, inf") from None
    if isinstance(value, bool):
        raise InvalidArgumentError(name, value, "one of 1, 2, inf")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InvalidArgumentError(name, value, "one of 1, 2, inf") from None
    if v not in NORMS:
        raise InvalidArgumentError(name, value, "one of 1, 2, inf")
    return v


def norm_label(p: float) -> str:
    """``"L1"``, ``"L2"`` or ``"Linf"``."""
    return "Linf" if math.isinf(p) else f"L{int(p)}"


def lp_norm(v: np.ndarray, p: float) -> np.ndarray:
    """``L_p`` norm along the last axis (``p ∈ {1, 2, ∞}``)."""
    a = np.abs(np.asarray(v, dtype=np.float64))
    if p == 1.0:
        return a.sum(axis=-1)
    if p == 2.0:
        return np.sqrt(np.einsum("...i,...i->...", a, a))
    return a.max(axis=-1, initial=0.0)


def clip_to_norm(r: np.ndarray, bound: float, p: float) -> np.ndarray:
    """``f(r) = r · min(1, C / ‖r‖_p)`` row-wise along the last axis (Habernal 2021, Eq. 13).

    The zero vector is left unchanged (the factor is 1 when ``‖r‖_p ≤ C``).
    Computed as ``u · min(m, C/‖u‖_p)`` with ``m = max|r_i|`` and ``u = r/m`` so
    that vectors whose norm overflows a float (entries near 1e308) still clip
    to the right point.
    """
    r = np.asarray(r, dtype=np.float64)
    m = np.abs(r).max(axis=-1, initial=0.0)
    safe_m = np.where(m > 0.0, m, 1.0)
    u = r / safe_m[..., np.newaxis]
    u_norm = np.where(m > 0.0, lp_norm(u, p), 1.0)  # in [1, n] for non-zero rows
    limit = bound / u_norm
    clipped = u * np.minimum(m, limit)[..., np.newaxis]
    # Inside the ball return r itself, bit for bit (u·m may differ from r in the last ulp).
    return np.where((m <= limit)[..., np.newaxis], r, clipped)


@dataclass(frozen=True)
class ClippingSensitivity:
    """The exact ``L_q`` sensitivity of ``L_p`` clipping to radius ``C`` in ``n`` dimensions.

    ``r1``/``r2`` are inputs attaining it: ``‖f(r1) − f(r2)‖_q == sensitivity``.
    ``claimed`` is ADePT's value ``2C`` for comparison.
    """

    sensitivity: float
    clip_norm: float
    norm: float
    dim: int
    bound: float
    r1: tuple[float, ...]
    r2: tuple[float, ...]
    witness_distance: float
    formula: str

    @property
    def claimed(self) -> float:
        """ADePT's claimed sensitivity ``2C`` (Krishna et al. 2021, Theorem 3.2 as quoted)."""
        return 2.0 * self.bound

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (norms as ``1``, ``2``, ``"inf"``)."""
        return {
            "sensitivity": self.sensitivity,
            "clip_norm": _norm_json(self.clip_norm),
            "norm": _norm_json(self.norm),
            "dim": self.dim,
            "bound": self.bound,
            "formula": self.formula,
            "witness": {
                "r1": list(self.r1),
                "r2": list(self.r2),
                "f_r1": clip_to_norm(np.array(self.r1), self.bound, self.clip_norm).tolist(),
                "f_r2": clip_to_norm(np.array(self.r2), self.bound, self.clip_norm).tolist(),
                "distance": self.witness_distance,
            },
            "claimed_by_adept": self.claimed,
            "ratio_to_claimed": self.sensitivity / self.claimed,
        }


def _norm_json(p: float) -> Any:
    return "inf" if math.isinf(p) else int(p)


def max_norm_ratio(p: float, q: float, n: int) -> float:
    """``max_{‖v‖_p ≤ 1} ‖v‖_q = n^{max(0, 1/q − 1/p)}`` (norm equivalence in ℝⁿ)."""
    exponent = max(0.0, _inverse(q) - _inverse(p))
    if exponent == 0.0:
        return 1.0
    if exponent == 0.5:
        return math.sqrt(n)  # correctly rounded, unlike a generic pow
    return float(n) ** exponent


def _inverse(t: float) -> float:
    return 0.0 if math.isinf(t) else 1.0 / t


def extremal_vector(p: float, q: float, n: int, bound: float) -> np.ndarray:
    """A vector ``v`` with ``‖v‖_p = C`` maximising ``‖v‖_q`` (see module docstring)."""
    if q < p:
        # Spread the mass evenly: all coordinates C·n^{-1/p}.
        # q < p leaves p ∈ {2, ∞}: level C/√n on the L2 sphere, C on the L∞ sphere.
        level = bound if math.isinf(p) else bound / math.sqrt(n)
        return np.full(n, level)
    v = np.zeros(n)
    v[0] = bound
    return v


def clipping_sensitivity(clip_norm: Any, norm: Any, dim: Any, bound: Any) -> ClippingSensitivity:
    """Exact ``L_norm`` sensitivity of ``L_clip_norm`` clipping to ``bound`` in ``dim`` dimensions.

    ``Δ = 2C · n^{max(0, 1/q − 1/p)}`` over all inputs in ``ℝⁿ``, with a witness pair
    ``r1 = v*``, ``r2 = −v*`` attaining it (derivation in the module docstring).
    """
    p = parse_norm("clip_norm", clip_norm)
    q = parse_norm("norm", norm)
    n = check_int("dim", dim, minimum=1)
    c = check_positive("bound", bound)
    sens = 2.0 * c * max_norm_ratio(p, q, n)
    v = extremal_vector(p, q, n, c)
    r1, r2 = v, -v
    dist = float(lp_norm(clip_to_norm(r1, c, p) - clip_to_norm(r2, c, p), q))
    expo = "max(0, 1/q − 1/p)"
    formula = f"2·C·n^{expo} with p={_norm_json(p)}, q={_norm_json(q)}"
    return ClippingSensitivity(
        sensitivity=sens,
        clip_norm=p,
        norm=q,
        dim=n,
        bound=c,
        r1=tuple(float(t) for t in r1),
        r2=tuple(float(t) for t in r2),
        witness_distance=dist,
        formula=formula,
    )
