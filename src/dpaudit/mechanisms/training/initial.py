"""Initial parameters of the built-in trainers: zeros, or worst-case (pre-trained) ones.

DP-SGD's privacy analysis (Abadi et al., CCS 2016; the RDP and PRV accountants) holds for
*every* initial model θ₀ fixed before training, so an auditor may choose θ₀ as adversarially
as it chooses the canary.  Annamalai & De Cristofaro ("Nearly Tight Black-Box Auditing of
Differentially Private Machine Learning", NeurIPS 2024) observe that a final-model (black-box)
audit is nearly tight when θ₀ is crafted: start from a model already fitted to the other
records, and their gradients are small, so each step moves θ mostly by the canary's clipped
gradient and the noise — what a white-box adversary sees — instead of by the data's own
descent, which hides the canary's effect in the final model.  (They report empirical ε of
7.21 on MNIST and 6.95 on CIFAR-10 at a theoretical ε = 10 with 1,000 training records.)

``"pretrained"`` here is that construction for the built-in logistic regressions: θ₀ is the
non-private L2-regularised logistic-regression fit to the trainer's *base* records, computed
once, deterministically (Newton's method), and the same in both worlds of the audit — with
and without the canary — so it is a fixed public parameter of the audited mechanism, as the
analysis allows.  Canaries drawn from the data (mislabelled, held-out) leave the base before
the fit (:meth:`~dpaudit.mechanisms.training.contract.TrainingMechanism.with_base`).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from dpaudit.errors import InvalidArgumentError

#: ``initial`` values of the built-in trainers.
INITIALISATIONS = ("zeros", "pretrained")
#: Ridge strength of the pre-training fit (on the mean loss): keeps it finite on separable data.
PRETRAIN_L2 = 1e-3
_NEWTON_STEPS = 30


def check_initialisation(value: object) -> str:
    """``value`` if it is one of :data:`INITIALISATIONS`, else an error naming the field."""
    if not isinstance(value, str) or value not in INITIALISATIONS:
        raise InvalidArgumentError("initial", value, f"one of {', '.join(INITIALISATIONS)}")
    return value


def pretrained_logistic(features: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, float]:
    """Weights and bias minimising the mean logistic loss + ``PRETRAIN_L2/2 · ‖(w, b)‖²``.

    Newton's method on the ``(d+1)``-dimensional strictly convex objective, from zero; it
    converges in a few steps on the built-in trainers' sizes (d = 256).  Deterministic: no
    randomness, so the audit's two worlds share θ₀.
    """
    x = np.asarray(features, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    n, d = x.shape
    design = np.hstack([x, np.ones((n, 1))])
    theta = np.zeros(d + 1)
    ridge = PRETRAIN_L2 * np.eye(d + 1)
    for _ in range(_NEWTON_STEPS):
        p = expit(design @ theta)
        gradient = design.T @ (p - y) / n + PRETRAIN_L2 * theta
        hessian = (design * (p * (1.0 - p))[:, None]).T @ design / n + ridge
        step = np.linalg.solve(hessian, gradient)
        theta -= step
        if float(np.max(np.abs(step))) < 1e-10:
            break
    return theta[:d], float(theta[d])


__all__ = ["INITIALISATIONS", "PRETRAIN_L2", "check_initialisation", "pretrained_logistic"]
