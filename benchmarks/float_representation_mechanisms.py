"""numpy's textbook Laplace as research code writes it, for ``float_representation.py``."""

from __future__ import annotations

import numpy as np


def textbook_laplace(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``x + Lap(1)`` in bare float64: 1-DP on [0, 1] as real numbers, not as floats."""
    return x + rng.laplace(0.0, 1.0, size=(n, x.size))
