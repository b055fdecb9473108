"""Sampling a word mechanism for the metric audit: counts per work unit, RNG rules, the probe.

Every draw of a word mechanism goes through :func:`run_word_count_unit`
(``np.bincount`` of the outcome codes, so memory is flat in the sample size)
and :func:`~dpaudit.auditors.core.guard.sample_word_codes`, which seeds foreign
code's global generators from the unit's stream (the randomness probe is
:func:`dpaudit.auditors.core.trust.establish_trust`).
Imports only dpaudit's basics, the guard, the engine and word-mechanism bases;
must not import the auditor (:mod:`dpaudit.auditors.metric.auditor`).
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np

try:  # comes with scikit-learn (the extras that bring word mechanisms); optional in the core
    from threadpoolctl import threadpool_limits
except ImportError:  # pragma: no cover - core install without scikit-learn
    threadpool_limits = None

from dpaudit.auditors.core.guard import sample_word_codes
from dpaudit.auditors.core.streams import StageKey
from dpaudit.engine.config import ExecutionConfig
from dpaudit.engine.executor import run_units
from dpaudit.errors import MechanismError
from dpaudit.mechanisms.word.base import WordMechanism
from dpaudit.random import unit_rng

__all__ = [
    "UNIT_SAMPLES",
    "CodeSet",
    "WordCodeDraw",
    "WordCountUnit",
    "checked_codes",
    "count_words",
    "run_word_count_unit",
    "sample_word_codes",
    "word_block",
]

#: Outputs per work unit and per block inside a unit (a mechanism's ``unit_samples`` wins).
UNIT_SAMPLES = 1 << 18
BLOCK_SAMPLES = 1 << 14


@dataclass(frozen=True)
class WordCountUnit:
    """Sample ``n`` outputs of ``M(word)``; return their counts over all outcome codes."""

    mechanism: WordMechanism
    word: str
    n: int
    root_seed: int
    key: tuple[int, ...]

    def describe(self) -> str:
        """What this unit samples, for messages (:class:`~dpaudit.engine.timeout.DescribedUnit`)."""
        return f"word mechanism {self.mechanism.name!r} on input {self.word!r}"


def run_word_count_unit(unit: WordCountUnit) -> np.ndarray:
    """Work-unit function: ``np.bincount`` of the codes, ``minlength = V + N_SPECIAL``.

    BLAS runs on one thread inside a unit: the audit already runs one unit per
    core, and OpenBLAS's own threads made each nearest-word product slower, not
    faster, when two workers shared two cores (the word benchmarks pin one thread
    too).
    """
    if threadpool_limits is None:
        return _count_unit(unit)
    with threadpool_limits(limits=1, user_api="blas"):
        return _count_unit(unit)


def _count_unit(unit: WordCountUnit) -> np.ndarray:
    mech = unit.mechanism
    rng = unit_rng(unit.root_seed, unit.key)
    counts = np.zeros(mech.n_codes, dtype=np.int64)
    block = word_block(mech)
    done = 0
    while done < unit.n:
        rows = min(block, unit.n - done)
        counts += np.bincount(checked_codes(mech, unit.word, rows, rng), minlength=mech.n_codes)
        done += rows
    return counts


def word_block(mech: WordMechanism) -> int:
    """Draws per call of a word mechanism inside a unit."""
    return min(BLOCK_SAMPLES, mech.unit_samples or BLOCK_SAMPLES)


def checked_codes(
    mech: WordMechanism, word: str, rows: int, rng: np.random.Generator
) -> np.ndarray:
    """``rows`` outcome codes of ``M(word)``, checked: a raising mechanism, codes of the
    wrong shape or type, or codes outside ``[0, n_codes)`` stop the audit, naming it."""
    n_codes = mech.n_codes
    try:
        codes = sample_word_codes(mech, word, rows, rng)
    except Exception as exc:
        raise MechanismError(
            f"word mechanism {mech.name!r} raised on input {word!r}: {exc!r}"
        ) from None
    codes = np.asarray(codes)
    if codes.shape != (rows,) or codes.dtype.kind not in "iu":
        raise MechanismError(
            f"word mechanism {mech.name!r} returned {codes.dtype} codes of shape "
            f"{codes.shape} for {rows} draws on {word!r}"
        )
    if rows and (codes.min() < 0 or codes.max() >= n_codes):
        raise MechanismError(
            f"word mechanism {mech.name!r} returned codes outside [0, {n_codes}) on {word!r}"
        )
    return codes


@dataclass(frozen=True)
class WordCodeDraw:
    """The core's draw of a word mechanism (:class:`~dpaudit.auditors.core.counting.OutputDraw`):
    checked outcome codes, BLAS on one thread per unit (:func:`run_word_count_unit`)."""

    mechanism: WordMechanism

    def __call__(self, word: str, rows: int, rng: np.random.Generator) -> np.ndarray:
        """``rows`` checked outcome codes of ``M(word)``."""
        return checked_codes(self.mechanism, word, rows, rng)

    def describe(self, word: str) -> str:
        """What drawing on ``word`` runs, for messages."""
        return f"word mechanism {self.mechanism.name!r} on input {word!r}"

    def opened(self) -> AbstractContextManager[Any]:
        """BLAS limited to one thread while a unit draws (as for the selection counts)."""
        if threadpool_limits is None:
            return nullcontext()
        return threadpool_limits(limits=1, user_api="blas")


@dataclass(frozen=True)
class CodeSet:
    """The event "the outcome code is one of ``codes``", on blocks of codes (picklable)."""

    codes: np.ndarray
    n_codes: int

    def __call__(self, block: np.ndarray) -> np.ndarray:
        """One flag per code of ``block``."""
        table = np.zeros(self.n_codes, dtype=bool)
        table[self.codes] = True
        return table[block]


def count_words(
    mech: WordMechanism,
    words: list[str],
    n: int,
    seed: int,
    stage: StageKey,
    execution: ExecutionConfig,
    desc: str,
) -> list[np.ndarray]:
    per_unit = mech.unit_samples or UNIT_SAMPLES
    units, owner = [], []
    for i, w in enumerate(words):
        full, rest = divmod(n, per_unit)
        sizes = [per_unit] * full + ([rest] if rest else [])
        for c, size in enumerate(sizes):
            units.append(WordCountUnit(mech, w, size, seed, (stage, i, c)))
            owner.append(i)
    results = run_units(run_word_count_unit, units, execution, desc=desc)
    out = [np.zeros(mech.n_codes, dtype=np.int64) for _ in words]
    for i, r in zip(owner, results, strict=True):
        out[i] += r
    return out
