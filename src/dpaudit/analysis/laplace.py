"""Exact privacy of additive Laplace noise (Dwork et al. 2006, Thm. 3.6 of Dwork & Roth 2014).

For ``M(x) = x + Lap(b)^n`` the log-density ratio of two inputs at output ``y`` is
``(‖y−x'‖₁ − ‖y−x‖₁)/b``, whose supremum over ``y`` is ``‖x−x'‖₁/b``.  Hence the
exact pure ε over a domain is ``Δ₁/b`` with ``Δ₁`` the largest L1 distance of
two (post-processed) inputs.
"""

from __future__ import annotations

import numpy as np


def laplace_log_density(center: np.ndarray, outputs: np.ndarray, scale: float) -> np.ndarray:
    """Sum over coordinates of the Laplace(center, scale) log-density of each output row."""
    y = np.asarray(outputs, dtype=np.float64).reshape(len(outputs), -1)
    c = np.asarray(center, dtype=np.float64).reshape(1, -1)
    d = y.shape[1]
    return -np.abs(y - c).sum(axis=1) / scale - d * np.log(2.0 * scale)


def laplace_pair_loss(center: np.ndarray, center_prime: np.ndarray, scale: float) -> float:
    """Exact ``sup_y |ln p(y|x)/p(y|x')|`` = ``‖c − c'‖₁ / b`` for Laplace noise around c, c'."""
    diff = np.asarray(center, dtype=np.float64) - np.asarray(center_prime, dtype=np.float64)
    return float(np.abs(diff).sum() / scale)
