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

(A fixed internal seed is refused before any audit, so it has no row.)  Each rounds its
output with :func:`dpaudit.round_to_grid`: a bare float64 ``x + noise`` is not DP
(Mironov 2012), and the audit's float-bits sets would rightly flag it.
"""

from __future__ import annotations

import random

import numpy as np

from dpaudit import round_to_grid

EPSILON = 1.0


def global_numpy_laplace(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``x + Lap(1/ε)`` from numpy's legacy global generator."""
    return round_to_grid(x + np.random.laplace(0.0, 1.0 / EPSILON, size=(n, x.size)), 1.0 / EPSILON)


def global_python_laplace(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``x + Lap(1/ε)`` from Python's ``random``: a signed exponential per coordinate."""
    draws = [random.expovariate(EPSILON) * random.choice((-1.0, 1.0)) for _ in range(n * x.size)]
    return round_to_grid(x + np.asarray(draws).reshape(n, x.size), 1.0 / EPSILON)


def os_entropy_laplace(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``x + Lap(1/ε)`` from a generator seeded by the operating system on every call."""
    noise = np.random.default_rng().laplace(0.0, 1.0 / EPSILON, size=(n, x.size))
    return round_to_grid(x + noise, 1.0 / EPSILON)
