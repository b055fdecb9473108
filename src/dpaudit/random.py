"""Deterministic seeding of work units.

Every unit of work (a chunk of samples for one input of one task) gets its own
generator derived from the root seed and the unit's *key* through
:class:`numpy.random.SeedSequence`.  The stream a unit sees therefore depends only
on (root seed, key) — never on which worker runs it or in which order — which is
what makes results bit-identical across 1 or many workers and across backends.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

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


# ----------------------------------------------------- foreign random sources
#: Words of numpy's legacy MT19937 key and of the seed given to Python's ``random``.
_MT_WORDS = 624
_PY_SEED_WORDS = 8  # 256 bits


def state_entropy(rng: np.random.Generator) -> int:
    """A 256-bit number determined by ``rng``'s current state, read without advancing it.

    Two generators in the same state give the same number, in any process;
    different states give different numbers (SHA-256 of the state).
    """
    text = repr(rng.bit_generator.state).encode("utf-8")
    return int.from_bytes(hashlib.sha256(text).digest(), "little")


@contextmanager
def seeded_global_state(entropy: int) -> Iterator[None]:
    """Seed numpy's legacy global generator and Python's ``random`` from ``entropy``; restore after.

    Much research code and many libraries draw from ``np.random.*`` or
    ``random.*`` instead of a generator they are given.  Inside this block both
    process-wide generators start from states derived from ``entropy`` through a
    :class:`numpy.random.SeedSequence` — a full 624-word MT19937 key and a
    256-bit Python seed, so distinct entropies never share a state by a seed
    collision — and the caller's own states are put back afterwards.
    """
    words = np.random.SeedSequence(int(entropy)).generate_state(
        _MT_WORDS + _PY_SEED_WORDS, np.uint32
    )
    py_state = random.getstate()
    np_state = np.random.get_state()
    np.random.set_state(("MT19937", words[:_MT_WORDS], _MT_WORDS, 0, 0.0))
    random.seed(int.from_bytes(words[_MT_WORDS:].tobytes(), "little"))
    try:
        yield
    finally:
        random.setstate(py_state)
        np.random.set_state(np_state)


def full_width_seed(rng: np.random.Generator) -> np.random.SeedSequence:
    """A :class:`~numpy.random.SeedSequence` with 256 bits of entropy drawn from ``rng``.

    For libraries that take their own generator: seed it with this (e.g.
    ``np.random.RandomState(np.random.MT19937(full_width_seed(rng)))``), never
    with a 32-bit integer, whose values collide between work units after about
    2¹⁶ draws (birthday bound).
    """
    entropy = rng.integers(0, 2**32, size=_PY_SEED_WORDS, dtype=np.uint64)
    return np.random.SeedSequence([int(v) for v in entropy])


#: Replaces an exact 0 from ``Generator.random`` (probability 2⁻⁵³): the midpoint of the first cell.
_SMALLEST_OPEN_UNIFORM = 2.0**-54


def open_uniform(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Uniforms strictly inside (0, 1): ``Generator.random`` on the 2⁻⁵³ grid, 0 → 2⁻⁵⁴.

    The input of every built-in additive mechanism's ``noise_from_uniform``
    (inverse CDFs are infinite at 0; the largest value, 1 − 2⁻⁵³, is below 1).
    """
    u = rng.random(shape)
    np.maximum(u, _SMALLEST_OPEN_UNIFORM, out=u)
    return u
