"""Declarations are hints, never trusted: check them against the real sampler.

A mechanism may declare its density (:meth:`~dpaudit.mechanisms.base.Mechanism.log_prob`)
or its noise transform (:meth:`~dpaudit.mechanisms.base.Mechanism.noise_from_uniform`)
so that auditors run faster.  A declaration that disagrees with the code that
really samples (``_sample``) would make an audit check the description instead
of the code — the DPText class of bug, a right formula next to a wrong sampler.
Each check below is a two-sample test between the real sampler and what the
declaration implies, at a fixed error :data:`DECLARATION_ALPHA` (Bonferroni
over everything it tries), so a correct declaration is flagged with
probability at most that.  A mismatch is returned as a
:class:`DeclarationFinding` carrying the evidence.

``log_prob`` — a density-ratio bound test
-----------------------------------------
There is no sampler of the declared density to compare with, but the
declaration makes a testable promise about the real sampler at two inputs
``x, x'``: with ``L(y) = ln p(y|x) − ln p(y|x')`` the declared log-ratio, every
set ``S ⊆ {y : L(y) ≤ c}`` satisfies

    Pr[M(x) ∈ S] = ∫_S e^{L} p(·|x') ≤ e^c · Pr[M(x') ∈ S].

and likewise ``Pr[M(x) ∈ S] ≥ e^c·Pr[M(x') ∈ S]`` for every
``S ⊆ {y : L(y) ≥ c}``.  For sets ``S_k`` of the form ``{ln p(y|x) ≤ t_k}``
(the outputs the declaration calls improbable — where a leaking sampler puts
its stray mass) and ``{ln p(y|x) ≥ t_k}`` (the declared bulk — where a
sampler of the wrong scale over- or under-fills), each cut to the band
``L ≤ c`` or ``L ≥ c``, the test counts fresh real outputs of ``M(x)`` and
``M(x')`` in the set and flags the declaration when exact one-sided
Clopper–Pearson bounds contradict the inequality of its band.
The thresholds ``t_k`` are quantiles of ``ln p(·|x)`` on a separate calibration
sample of ``M(x')``, fixed before the test samples are drawn; ``c`` is the
claimed ε (the ratio cap a correct mechanism lives under).  Both orders of the
pair (the two corners of the input domain) are tested.  An output of ``M(x)``
whose declared density under ``x`` is zero (``-inf``) or NaN is a mismatch by
itself: it has probability 0 under a correct declaration.

Power, honestly: the reference for ``Pr[M(x) ∈ S]`` is ``M(x')``'s count
scaled by ``e^c``, so stray mass ``m`` is found once ``m`` clearly exceeds
about ``e^c·15/n`` (n = 2¹⁹ outputs: ``m ≳ 8·10⁻⁵`` at ε = 1, ``≳ 4·10⁻³``
at ε = 5; 3·10⁻⁴ far left is found at ε ≤ 1 and missed at ε = 5).  A sampler
20 % wider than declared is found at ε ∈ {0.1, 1, 5}; one half as wide at
ε ≤ 1 only.

``noise_from_uniform`` — a two-sample Kolmogorov–Smirnov test
-------------------------------------------------------------
For an additive mechanism ``M(x) = x + T(U)`` the check draws outputs of the
real sampler and of ``x + T(U)`` (after the mechanism's ``round_output``) with ``U``
uniform on (0, 1), and compares them
coordinate by coordinate with the two-sample KS test (NaN, which a declared
NaN policy may produce, is ranked above every number), Bonferroni-corrected
over coordinates and inputs.  dpaudit's own additive mechanisms sample *by*
their transform (``_sample`` calls ``noise_from_uniform``), so for them the
check can only fail by chance (probability ≤ α).
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.auditors.core.certify import split_error
from dpaudit.auditors.core.guard import (
    checked_sample,
    domain_corners,
    mechanism_label,
)
from dpaudit.auditors.core.statistics import clopper_pearson_lower, clopper_pearson_upper
from dpaudit.engine.timeout import preview
from dpaudit.errors import MechanismError
from dpaudit.mechanisms.base import Mechanism
from dpaudit.random import open_uniform, stable_hash, unit_rng
from dpaudit.results.findings import DeclarationFinding

#: Probability that a correct declaration is flagged (each check, Bonferroni inside).
DECLARATION_ALPHA = 1e-3
#: Output coordinates drawn per input by the density check (capped, see :func:`density_rows`).
DENSITY_COORDS = 1 << 19
#: Output coordinates drawn per input by the transform check.
TRANSFORM_COORDS = 1 << 18
#: Tail masses of the self-density thresholds (lower sets) and upper-set masses.
_LOWER_MASSES = (2.0**-1, 2.0**-4, 2.0**-7, 2.0**-10, 2.0**-13, 0.0)
_UPPER_MASSES = (2.0**-1, 2.0**-4, 2.0**-7)
_SEED_TAG = stable_hash("dpaudit.declarations")


# ------------------------------------------------------------------ log_prob
def density_rows(mechanism: Mechanism) -> int:
    """Outputs per input for :func:`check_log_prob`: 2¹⁹ coordinates, at least 4096 rows."""
    size = int(np.prod(mechanism.output_shape, dtype=np.int64)) or 1
    return max(1 << 12, DENSITY_COORDS // size)


def _declared(mech: Mechanism, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    try:
        lp = np.asarray(mech.log_prob(x, y), dtype=np.float64)
    except Exception as exc:  # a declaration that raises on real outputs is broken
        raise MechanismError(
            f"mechanism {mechanism_label(mech)!r}: log_prob raised {type(exc).__name__}: {exc} "
            "on outputs of its own sampler"
        ) from exc
    if lp.shape != (len(y),):
        raise MechanismError(
            f"mechanism {mechanism_label(mech)!r}: log_prob returned shape {lp.shape} for "
            f"{len(y)} outputs: expected ({len(y)},)"
        )
    return lp


def check_log_prob(
    mechanism: Mechanism,
    *,
    seed: int = 0,
    rows: int | None = None,
    alpha: float = DECLARATION_ALPHA,
) -> DeclarationFinding | None:
    """Test the declared ``log_prob`` against the real sampler; None if consistent.

    See the module docstring for the test.  ``rows`` outputs per input and
    order (default :func:`density_rows`), drawn from streams of their own
    under ``seed``.
    """
    if not mechanism.has_log_prob:
        return None
    n = density_rows(mechanism) if rows is None else int(rows)
    corners = domain_corners(mechanism)
    if np.array_equal(corners[0], corners[1]):
        return None
    n_sets = 2 * 2 * (len(_LOWER_MASSES) + len(_UPPER_MASSES))  # orders × bands × thresholds
    test = [
        checked_sample(mechanism, x, n, unit_rng(seed, (_SEED_TAG, 1, i)))
        for i, x in enumerate(corners)
    ]
    for i, (x, x_prime) in enumerate(((corners[0], corners[1]), (corners[1], corners[0]))):
        found = _check_order(
            mechanism, x, x_prime, test[i], test[1 - i], seed, i, alpha, split_error(alpha, n_sets)
        )
        if found is not None:
            return found
    return None


def _check_order(
    mechanism: Mechanism,
    x: np.ndarray,
    x_prime: np.ndarray,
    y: np.ndarray,
    y_prime: np.ndarray,
    seed: int,
    order: int,
    alpha: float,
    a_side: float,
) -> DeclarationFinding | None:
    """The density check for one order of the pair: samples ``y`` of M(x), ``y_prime`` of M(x')."""
    label = mechanism_label(mechanism)
    n = len(y)
    own = _declared(mechanism, x, y)
    bad = ~(own > -np.inf)  # -inf or NaN
    if bad.any():
        return DeclarationFinding(
            "log_prob",
            label,
            "declared density does not match the samples",
            f"{int(bad.sum())} of {n} outputs of the sampler on input {preview(x)} have "
            "declared density 0 (log_prob = -inf or NaN) under that input, e.g. "
            f"{preview(y[int(np.flatnonzero(bad)[0])])}",
            alpha,
        )
    ratio = own - _declared(mechanism, x_prime, y)
    own_p = _declared(mechanism, x, y_prime)
    ratio_p = own_p - _declared(mechanism, x_prime, y_prime)
    n_cal = max(1024, n // 4)
    cal = checked_sample(mechanism, x_prime, n_cal, unit_rng(seed, (_SEED_TAG, 2, order)))
    cal_lp = _declared(mechanism, x, cal)
    cal_lp = cal_lp[np.isfinite(cal_lp)]
    if cal_lp.size == 0:
        return None
    sets = [
        ("≤", float(np.quantile(cal_lp, q)) if q > 0 else float(cal_lp.min()))
        for q in _LOWER_MASSES
    ]
    sets += [("≥", float(np.quantile(cal_lp, 1.0 - q))) for q in _UPPER_MASSES]
    cap = mechanism.claim.epsilon
    for side, t in sets:
        near_x = (own <= t) if side == "≤" else (own >= t)
        near_xp = (own_p <= t) if side == "≤" else (own_p >= t)
        for band in ("≤", "≥"):
            evidence = _band_contradiction(near_x, near_xp, ratio, ratio_p, band, cap, a_side)
            if evidence is not None:
                return DeclarationFinding(
                    "log_prob",
                    label,
                    "declared density does not match the samples",
                    f"S = {{y : ln p(y|x) {side} {t:.6g}, ln p(y|x) − ln p(y|x') {band} "
                    f"{cap:g}}} with x = {preview(x)}, x' = {preview(x_prime)}: "
                    f"{evidence}; error ≤ {alpha:g}",
                    alpha,
                )
    return None


def _band_contradiction(
    near_x: np.ndarray,
    near_xp: np.ndarray,
    ratio: np.ndarray,
    ratio_p: np.ndarray,
    band: str,
    cap: float,
    a_side: float,
) -> str | None:
    """The evidence (counts, bounds, implied inequality) if one set's counts contradict its band.

    Band ``L ≤ c``: Pr[M(x) ∈ S] ≤ e^c Pr[M(x') ∈ S] (too much mass under x: a leak).
    Band ``L ≥ c``: Pr[M(x) ∈ S] ≥ e^c Pr[M(x') ∈ S] (too little: e.g. a wider sampler).
    """
    n = len(near_x)
    c_high = cap * (1.0 + 1e-9) + 1e-12  # the ratio band, with room for rounding in log_prob
    c_low = cap * (1.0 - 1e-9) - 1e-12
    if band == "≤":
        in_x, in_xp = near_x & (ratio <= c_high), near_xp & (ratio_p <= c_high)
    else:
        in_x, in_xp = near_x & (ratio >= c_low), near_xp & (ratio_p >= c_low)
    k, j = int(in_x.sum()), int(in_xp.sum())
    if band == "≤":
        px = float(clopper_pearson_lower(k, n, a_side))
        pxp = float(clopper_pearson_upper(j, n, a_side))
        contradicted = px > math.exp(c_high) * pxp
        bounds = f"Pr[M(x) ∈ S] ≥ {px:.3g} and Pr[M(x') ∈ S] ≤ {pxp:.3g}"
    else:
        px = float(clopper_pearson_upper(k, n, a_side))
        pxp = float(clopper_pearson_lower(j, n, a_side))
        contradicted = px < math.exp(c_low) * pxp
        bounds = f"Pr[M(x) ∈ S] ≤ {px:.3g} and Pr[M(x') ∈ S] ≥ {pxp:.3g}"
    if not contradicted:
        return None
    return (
        f"the sampler put {k} of {n} outputs of M(x) and {j} of {n} of M(x') in S, so "
        f"{bounds}; the declared density implies Pr[M(x) ∈ S] {band} e^{cap:g}·Pr[M(x') ∈ S]"
    )


# --------------------------------------------------------- noise_from_uniform
def transform_inputs(mechanism: Mechanism) -> list[np.ndarray]:
    """The inputs the transform check uses by default: the domain's two corners."""
    return domain_corners(mechanism)


def check_transform(
    mechanism: Mechanism,
    inputs: list[np.ndarray] | None = None,
    *,
    seed: int = 0,
    rows: int | None = None,
    alpha: float = DECLARATION_ALPHA,
) -> DeclarationFinding | None:
    """Two-sample KS test of ``x + noise_from_uniform(U)`` against the sampler; None if consistent.

    Only for additive mechanisms whose output has the input's shape (otherwise
    None: the transform is not used).  ``inputs`` default to the domain corners.
    """
    if not mechanism.is_additive or tuple(mechanism.output_shape) != tuple(mechanism.input_shape):
        return None
    label = mechanism_label(mechanism)
    xs = transform_inputs(mechanism) if inputs is None else inputs
    size = int(np.prod(mechanism.output_shape, dtype=np.int64)) or 1
    n = max(512, TRANSFORM_COORDS // size) if rows is None else int(rows)
    per_test = alpha / (len(xs) * size)
    for i, x in enumerate(xs):
        real = checked_sample(mechanism, x, n, unit_rng(seed, (_SEED_TAG, 3, i)))
        u = open_uniform(unit_rng(seed, (_SEED_TAG, 4, i)), (n, *mechanism.output_shape))
        try:
            noise = np.asarray(mechanism.noise_from_uniform(u), dtype=np.float64)
        except Exception as exc:
            raise MechanismError(
                f"mechanism {label!r}: noise_from_uniform raised {type(exc).__name__}: {exc}"
            ) from exc
        fused = mechanism.round_output(noise + x).reshape(n, size)
        real = np.asarray(real, dtype=np.float64).reshape(n, size)
        a = np.where(np.isnan(real), np.inf, real)  # NaN (a declared policy) ranks last
        b = np.where(np.isnan(fused), np.inf, fused)
        from scipy import stats  # lazy: keeps the CLI's start-up light

        result = stats.ks_2samp(a, b, axis=0)
        p = np.atleast_1d(np.asarray(result.pvalue, dtype=np.float64))
        p = np.where(np.isnan(p), 1.0, p)  # identical constant columns
        worst = int(np.argmin(p))
        if p[worst] < per_test:
            d = float(np.atleast_1d(result.statistic)[worst])
            return DeclarationFinding(
                "noise_from_uniform",
                label,
                "declared transform does not match the samples",
                f"coordinate {worst} on input {preview(x)}: two-sample Kolmogorov–Smirnov "
                f"D = {d:.3g}, p = {p[worst]:.3g} < {per_test:.3g} (α = {alpha:g} Bonferroni "
                f"over {len(xs)} inputs × {size} coordinates; {n} outputs of each); sampler "
                f"median {np.median(a[:, worst]):.4g}, transform median "
                f"{np.median(b[:, worst]):.4g}",
                alpha,
            )
    return None


#: Seed of the declaration checks' streams (independent of any audit's seed, so a
#: mechanism's finding does not depend on the audit that found it).
DECLARATION_SEED = 0
