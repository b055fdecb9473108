"""Shared plumbing of the adapters: optional imports, seeding library RNGs.

Box domains are checked by :func:`dpaudit.mechanisms.domains.check_box_domain`.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
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


def cache_dir() -> Path:
    """dpaudit's cache directory (``$XDG_CACHE_HOME/dpaudit``, else ``~/.cache/dpaudit``)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dpaudit"


def seed_from(rng: np.random.Generator) -> int:
    """A 32-bit seed drawn from ``rng`` (for libraries that take an integer seed)."""
    return int(rng.integers(0, 2**32, dtype=np.uint64))


def global_states_from(rng: np.random.Generator) -> tuple[dict[str, object], int]:
    """A full-width state for numpy's legacy global generator and a seed for ``random``.

    ``np.random.seed`` takes only 32 bits, so two units could share a stream
    with probability ~ units²/2³³.  Instead 128 bits drawn from ``rng`` seed a
    :class:`numpy.random.SeedSequence` that fills a whole MT19937 state (624
    words), and a 128-bit integer seeds Python's ``random`` (which hashes any
    integer into its own MT19937 state).
    """
    words = rng.integers(0, 2**32, size=8, dtype=np.uint64)
    np_entropy = int(words[0]) | int(words[1]) << 32 | int(words[2]) << 64 | int(words[3]) << 96
    py_seed = int(words[4]) | int(words[5]) << 32 | int(words[6]) << 64 | int(words[7]) << 96
    state = np.random.MT19937(np.random.SeedSequence(np_entropy)).state
    return state, py_seed


@contextmanager
def seeded_global_random(rng: np.random.Generator) -> Iterator[None]:
    """Seed Python's ``random`` and numpy's legacy global RNG from ``rng``; restore them after.

    Some libraries (pure-ldp, mldp-text) draw from these process-wide
    generators.  Seeding them from the unit's generator (full width, see
    :func:`global_states_from`) makes their output a function of the audit
    seed, so results stay reproducible; restoring the previous state keeps the
    caller's own use of those generators undisturbed.
    """
    py_state = random.getstate()
    np_state = np.random.get_state()
    np_new, py_seed = global_states_from(rng)
    random.seed(py_seed)
    np.random.set_state(np_new)
    try:
        yield
    finally:
        random.setstate(py_state)
        np.random.set_state(np_state)
