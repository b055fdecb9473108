"""Exact privacy of ADePT and its remedies (Habernal, EMNLP 2021).

ADePT (Krishna et al., EACL 2021, Eq. 9–10) releases
``f(r) + Lap(b)^n`` with ``f(r) = r·min(1, C/‖r‖₂)`` and ``b = 2C/ε``.  Its
pure privacy loss on a pair is ``‖f(r) − f(r')‖₁ / b`` (Habernal 2021, Eq. 15,
i.e. the Laplace bound of :mod:`dpaudit.analysis.laplace` applied to the
clipped vectors), so its exact worst-case ε over ``ℝⁿ`` is
``Δ₁ / b = 2C√n / (2C/ε) = √n · ε`` (Theorem 5.1, computed by
:mod:`dpaudit.analysis.sensitivity`).

The paper's own counterexample (Sec. 4, Eq. 16–24) uses ``n = 2`` and the pair
``r = ±(2C/3, 2C/3)``: both lie inside the ball, their L1 distance is ``8C/3``
and the loss is ``(8C/3)/(2C/ε) = (4/3)·ε``.  :func:`paper_counterexample_pair`
builds that pair; the mechanisms compute its loss with their own
:meth:`privacy_loss`, so nothing here is typed in.
"""

from __future__ import annotations

import numpy as np

from dpaudit.analysis.sensitivity import ClippingSensitivity, clipping_sensitivity
from dpaudit.errors import InvalidArgumentError
from dpaudit.validation import check_int, check_positive


def paper_counterexample_pair(dim: int, bound: float) -> tuple[np.ndarray, np.ndarray]:
    """The pair ``±(2C/3, 2C/3, 0, …, 0)`` of Habernal (2021), Sec. 4 (there with ``n = 2``).

    For ``n > 2`` the extra coordinates are zero, which leaves both norms and
    the L1 distance unchanged.
    """
    n = check_int("dim", dim, minimum=1)
    c = check_positive("bound", bound)
    if n < 2:
        raise InvalidArgumentError("dim", dim, "an integer >= 2 for the paper's counterexample")
    r = np.zeros(n)
    r[:2] = 2.0 * c / 3.0
    return r, -r


def clipped_l1_sensitivity(clip_norm: float, dim: int, bound: float) -> ClippingSensitivity:
    """True L1 sensitivity of ``L_clip_norm`` clipping, with its witness (over all of ℝⁿ)."""
    return clipping_sensitivity(clip_norm, 1, dim, bound)


def box_contains(low: float, high: float, points: np.ndarray) -> bool:
    """Whether every coordinate of ``points`` lies in ``[low, high]``."""
    pts = np.asarray(points, dtype=np.float64)
    return bool(np.all(pts >= low) and np.all(pts <= high))
