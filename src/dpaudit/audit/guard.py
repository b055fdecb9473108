"""Guards around a mechanism under audit: timeouts, rng discipline, memory, a preflight.

Both auditors (black-box and sanity check) draw every chunk of outputs
through :func:`checked_sample`: raising, NaN, ±inf, wrong shape or dtype →
:class:`~dpaudit.errors.MechanismError` naming the mechanism, the input and the
problem.  This module adds what a per-chunk output check cannot see:

* **hanging** — the engine's per-unit timeout (:mod:`dpaudit.engine.timeout`),
  also applied here to the preflight;
* **ignoring the generator** — :func:`check_rng_discipline` runs the same chunk
  twice from the same seed; different outputs mean the mechanism draws from a
  source other than the ``rng`` it is given, which silently breaks
  reproducibility, parallel bit-identity and resume.  Mechanisms that *declare*
  an external source (``externally_seeded = True``, e.g. OpenDP, which only
  uses the OS CSPRNG) are exempt;
* **memory** — :func:`check_memory` refuses, before anything runs, work whose
  smallest working set exceeds the memory available, showing the estimate;
* :func:`preflight` runs all of these on a small chunk at two corners of the
  input domain, so a broken mechanism fails in a second with a clear message
  instead of after the first full chunk.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from dpaudit.engine.timeout import check_timeout, deadline, mechanism_label, preview
from dpaudit.errors import InvalidArgumentError, MechanismError
from dpaudit.mechanisms.base import Mechanism
from dpaudit.random import stable_hash, unit_rng

#: Outputs per preflight chunk.
PREFLIGHT_ROWS = 16
#: Smallest block of outputs any auditor materialises at once (``counting.block_rows``).
MIN_BLOCK_ROWS = 256
#: Bytes per output or input coordinate (float64), times a factor for temporaries.
BYTES_PER_VALUE = 8
WORKING_SET_FACTOR = 3

_SEED_TAG = stable_hash("dpaudit.guard.preflight")


# -------------------------------------------------------------- output checks
def checked_sample(
    mechanism: Mechanism, x: np.ndarray, n: int, rng: np.random.Generator
) -> np.ndarray:
    """``mechanism.sample`` with what comes back checked; raises :class:`MechanismError`.

    Rejected, with a message naming the mechanism, the input and the problem: an
    exception inside the mechanism, a non-array or non-numeric dtype, the wrong
    shape, inf, and NaN unless the mechanism declares a NaN policy
    (``allows_nan_output``).
    """
    where = f"mechanism {mechanism.name!r} on input {x.ravel().tolist()}"
    try:
        out = mechanism.sample(x, n, rng)
    except MechanismError:
        raise
    except Exception as exc:  # a misbehaving mechanism must stop the audit, with context
        raise MechanismError(f"{where} raised {type(exc).__name__}: {exc}") from exc
    if not isinstance(out, np.ndarray) or out.dtype.kind not in "biuf":
        kind = getattr(out, "dtype", type(out).__name__)
        raise MechanismError(
            f"{where} returned dtype {kind}: expected numbers (bool, int or float)"
        )
    expected = (n, *mechanism.output_shape)
    if out.shape != expected:
        raise MechanismError(f"{where} returned shape {out.shape}: expected {expected}")
    if out.dtype.kind == "f":
        with np.errstate(over="ignore", invalid="ignore"):
            total = out.sum()  # one pass; non-finite iff some value is (or the sum overflows)
        if not np.isfinite(total):
            if np.isinf(out).any():
                raise MechanismError(f"{where} returned inf")
            if not mechanism.allows_nan_output and np.isnan(out).any():
                raise MechanismError(f"{where} returned NaN (it declares no NaN policy)")
    return out


# ---------------------------------------------------------------------- memory
def available_memory() -> int | None:
    """Bytes of memory available to new allocations (``MemAvailable``), or None if unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def _gib(n: float) -> str:
    return f"{n / 2**30:.3g} GiB"


def check_memory(needed_bytes: float, argument: str, value: Any, what: str) -> None:
    """Refuse work whose estimated working set exceeds the available memory.

    Raises :class:`InvalidArgumentError` naming ``argument`` with the estimate,
    e.g. ``dim=1000000000 is invalid: expected a size that fits in memory
    (one block of outputs needs about 1.8e+03 GiB; 20.1 GiB available)``.
    """
    available = available_memory()
    if available is None or needed_bytes <= available:
        return
    raise InvalidArgumentError(
        argument,
        value,
        f"a size that fits in memory ({what} needs about {_gib(needed_bytes)}; "
        f"{_gib(available)} available)",
    )


def mechanism_working_set(mechanism: Mechanism, rows: int = MIN_BLOCK_ROWS) -> float:
    """Bytes of the smallest block an auditor draws: one input and ``rows`` outputs."""
    out_size = float(np.prod(mechanism.output_shape, dtype=np.float64))
    in_size = float(mechanism.input_domain.size)
    return WORKING_SET_FACTOR * BYTES_PER_VALUE * (in_size + rows * out_size)


def check_sample_memory(
    mechanism: Mechanism, rows: int, inputs: int, argument: str, what: str
) -> None:
    """Refuse holding ``rows`` outputs for each of ``inputs`` inputs if that exceeds memory.

    For stages that keep samples (classifier training): streamed stages need
    only one block and are covered by :func:`preflight`.
    """
    out_size = float(np.prod(mechanism.output_shape, dtype=np.float64))
    needed = WORKING_SET_FACTOR * BYTES_PER_VALUE * float(rows) * out_size * inputs
    check_memory(needed, argument, rows, f"{what} ({inputs} inputs × {rows} outputs)")


# ------------------------------------------------------------ rng discipline
def check_rng_discipline(
    mechanism: Mechanism, x: np.ndarray, *, rows: int = PREFLIGHT_ROWS, seed: int = 0
) -> None:
    """Run one chunk twice from the same seed; raise if the outputs differ.

    Skipped for mechanisms that declare ``externally_seeded = True``.
    """
    if mechanism.externally_seeded:
        return
    first = checked_sample(mechanism, x, rows, unit_rng(seed, (_SEED_TAG, 1)))
    second = checked_sample(mechanism, x, rows, unit_rng(seed, (_SEED_TAG, 1)))
    if not np.array_equal(first, second, equal_nan=first.dtype.kind == "f"):
        raise MechanismError(
            f"mechanism {mechanism_label(mechanism)!r} ignores the random generator it is "
            f"given: the same chunk run twice from the same seed on input {preview(x)} gave "
            "different outputs (draw all randomness from the rng argument, or declare "
            "externally_seeded = True and accept non-reproducible results)"
        )


# ------------------------------------------------------------------- preflight
def domain_corners(mechanism: Mechanism) -> list[np.ndarray]:
    """Two inputs of the claimed domain: the low and the high corner (0/1 for unbounded ends)."""
    domain = mechanism.input_domain
    low = domain.low if math.isfinite(domain.low) else min(0.0, domain.high)
    high = domain.high if math.isfinite(domain.high) else max(1.0, low + 1.0)
    return [np.full(domain.shape, low, dtype=np.float64), np.full(domain.shape, high)]


def preflight(mechanism: Mechanism, *, timeout: float | None = 60.0, seed: int = 0) -> None:
    """Check a mechanism before an audit starts; raise a one-line error naming the problem.

    In order: the input and the smallest output block fit in memory; a small
    chunk at each of two domain corners returns finite numbers of the right
    shape and dtype without raising (within ``timeout`` seconds each); the
    chunk is reproducible from its seed (see :func:`check_rng_discipline`).
    """
    timeout = check_timeout(timeout, "timeout")
    label = mechanism_label(mechanism)
    in_size = mechanism.input_domain.size
    # Until the output shape is known (finding it may run the mechanism with n = 2),
    # assume outputs as large as the input: one input and two outputs.
    check_memory(
        WORKING_SET_FACTOR * BYTES_PER_VALUE * 3.0 * float(in_size),
        "dim",
        in_size,
        f"one input and two outputs of {label}",
    )
    with deadline(timeout, f"mechanism {label!r} (finding its output shape)"):
        working = mechanism_working_set(mechanism)
    check_memory(
        working,
        "dim",
        in_size,
        f"one block of {MIN_BLOCK_ROWS} outputs of {label} (output shape "
        f"{tuple(mechanism.output_shape)})",
    )
    for i, x in enumerate(domain_corners(mechanism)):
        with deadline(timeout, f"mechanism {label!r} on input {preview(x)}"):
            checked_sample(mechanism, x, PREFLIGHT_ROWS, unit_rng(seed, (_SEED_TAG, 0, i)))
            if i == 0:
                check_rng_discipline(mechanism, x, seed=seed)
