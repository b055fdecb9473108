"""Shared plumbing of the adapters: optional imports, seeding library RNGs.

Box domains are checked by :func:`dpaudit.mechanisms.domains.check_box_domain`.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import numpy as np

from dpaudit.errors import InvalidArgumentError, OptionalDependencyError
from dpaudit.random import full_width_seed, seeded_global_state


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


def library_random_state(rng: np.random.Generator) -> np.random.RandomState:
    """A ``numpy.random.RandomState`` with a full-width MT19937 state drawn from ``rng``.

    For libraries that take a ``random_state``: 256 bits of entropy through a
    :class:`~numpy.random.SeedSequence` (:func:`dpaudit.random.full_width_seed`),
    never a 32-bit integer seed, which would repeat between work units.
    """
    return np.random.RandomState(np.random.MT19937(full_width_seed(rng)))


@contextmanager
def seeded_global_random(rng: np.random.Generator) -> Iterator[None]:
    """Seed Python's ``random`` and numpy's legacy global RNG from ``rng``; restore them after.

    Some libraries (pure-ldp, mldp-text) draw from these process-wide generators.  Seeding
    them (full-width, :func:`dpaudit.random.seeded_global_state`) from the
    unit's generator makes their output a function of the audit seed, so
    results stay reproducible even when the mechanism is sampled directly;
    restoring the previous state keeps the caller's own use of those
    generators undisturbed.
    """
    entropy = int.from_bytes(full_width_seed(rng).generate_state(8, np.uint32).tobytes(), "little")
    with seeded_global_state(entropy):
        yield


def parse_bool(key: str, value: object) -> bool:
    """A ``-p key=value`` switch: a bool, or ``1/true/yes/on`` and ``0/false/no/off``."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise InvalidArgumentError(key, value, "true or false")
