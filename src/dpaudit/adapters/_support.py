"""Shared plumbing of the adapters: optional imports, seeding library RNGs.

Box domains are checked by :func:`dpaudit.mechanisms.domains.check_box_domain`.
"""

from __future__ import annotations

import importlib
import importlib.util
import random
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

import numpy as np

from dpaudit.errors import OptionalDependencyError


def library_available(module: str) -> bool:
    """True when ``module`` can be imported (checked without importing it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require(module: str, extra: str, purpose: str) -> ModuleType:
    """Import ``module`` or raise :class:`OptionalDependencyError` naming the extra."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise OptionalDependencyError(module.split(".")[0], extra, purpose) from None


def seed_from(rng: np.random.Generator) -> int:
    """A 32-bit seed drawn from ``rng`` (for libraries that take an integer seed)."""
    return int(rng.integers(0, 2**32, dtype=np.uint64))


@contextmanager
def seeded_global_random(rng: np.random.Generator) -> Iterator[None]:
    """Seed Python's ``random`` and numpy's legacy global RNG from ``rng``; restore them after.

    Some libraries (pure-ldp) draw from these process-wide generators.  Seeding
    them from the unit's generator makes their output a function of the audit
    seed, so results stay reproducible; restoring the previous state keeps the
    caller's own use of those generators undisturbed.
    """
    py_state = random.getstate()
    np_state = np.random.get_state()
    random.seed(seed_from(rng))
    np.random.seed(seed_from(rng))
    try:
        yield
    finally:
        random.setstate(py_state)
        np.random.set_state(np_state)
