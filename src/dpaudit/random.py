"""Deterministic seeding of work units.

Every unit of work (a chunk of samples for one input of one task) gets its own
generator derived from the root seed and the unit's *key* through
:class:`numpy.random.SeedSequence`.  The stream a unit sees therefore depends only
on (root seed, key) — never on which worker runs it or in which order — which is
what makes results bit-identical across 1 or many workers and across backends.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def unit_rng(root_seed: int, key: Sequence[int]) -> np.random.Generator:
    """A PCG64 generator for the work unit identified by ``key`` under ``root_seed``."""
    ss = np.random.SeedSequence(int(root_seed), spawn_key=tuple(int(k) for k in key))
    return np.random.Generator(np.random.PCG64(ss))


def stable_hash(text: str) -> int:
    """A process-independent 32-bit hash of ``text`` for use inside a seeding key.

    Python's ``hash`` is salted per process, so it must never enter a seed.
    """
    import zlib

    return zlib.crc32(text.encode("utf-8")) & 0xFFFFFFFF
