"""Correct Laplace mechanisms written the way research code is: foreign random-number habits.

For the false-alarm study (``false_alarms.py``): each is ``f(x, n, rng)``, adds
``Lap(1/ε)`` with ε = 1 to a scalar input in [0, 1] (so it is 1-DP), and is
audited as ``make_mechanism("callable", target="foreign_mechanisms:NAME",
epsilon=1.0)`` with this directory on ``sys.path``.  A valid auditor reports a
false alarm for at most α of the audits of every one of them.

* :func:`global_numpy_laplace` — numpy's global generator (``np.random.laplace``),
  seeded by dpaudit per chunk;
* :func:`global_python_laplace` — Python's ``random`` (signed exponential);
* :func:`os_entropy_laplace` — a fresh OS-seeded generator per call: cannot be
  seeded, audited with ``reproducible = False``.

(A fixed internal seed is refused before any audit, so it has no row.)
"""

from __future__ import annotations

import random

import numpy as np

EPSILON = 1.0


def global_numpy_laplace(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``x + Lap(1/ε)`` from numpy's legacy global generator."""
    return x + np.random.laplace(0.0, 1.0 / EPSILON, size=(n, x.size))


def global_python_laplace(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``x + Lap(1/ε)`` from Python's ``random``: a signed exponential per coordinate."""
    draws = [random.expovariate(EPSILON) * random.choice((-1.0, 1.0)) for _ in range(n * x.size)]
    return x + np.asarray(draws).reshape(n, x.size)


def os_entropy_laplace(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``x + Lap(1/ε)`` from a generator seeded by the operating system on every call."""
    return x + np.random.default_rng().laplace(0.0, 1.0 / EPSILON, size=(n, x.size))
