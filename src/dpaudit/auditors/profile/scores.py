"""A score for mechanisms without a log-density: the projection on the direction ``x − x'``.

``s(y) = ⟨y − (x + x')/2, x − x'⟩``, high where ``y`` lies on ``x``'s side.
For additive isotropic Gaussian noise it is an increasing function of the
log-likelihood ratio ``ln p(y|x) − ln p(y|x')`` (both are affine in the same
projection), so its threshold sets are the Neyman–Pearson tests and the audit
loses nothing (Neyman & Pearson 1933; Dong, Roth & Su 2022, Thm. 2.7).  For
one-dimensional Laplace noise the log-ratio is a non-decreasing clipped
function of ``y``, so again every Neyman–Pearson set is a threshold set.  For
anything else it is a heuristic — which costs power, never validity: the
auditor's bounds hold for any fixed score.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpaudit.errors import InvalidArgumentError


@dataclass(frozen=True)
class ProjectionScore:
    """``⟨y − (x + x')/2, x − x'⟩`` on flattened outputs of the input's size."""

    x: tuple[float, ...]
    x_prime: tuple[float, ...]

    family = "projection"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        a = np.asarray(self.x, dtype=np.float64)
        b = np.asarray(self.x_prime, dtype=np.float64)
        flat = np.asarray(outputs, dtype=np.float64).reshape(len(outputs), -1)
        if flat.shape[1] != a.size:
            raise InvalidArgumentError(
                "score",
                "projection",
                f"outputs of {a.size} numbers, the input's size (got "
                f"{flat.shape[1]}): the projection needs an additive mechanism",
            )
        return ((flat - (a + b) / 2.0) @ (a - b)).astype(np.float32)

    def describe(self) -> str:
        """Formula of the score."""
        return "⟨y − (x + x′)/2, x − x′⟩ (projection on the direction of the pair)"


__all__ = ["ProjectionScore"]
