"""Guards around a mechanism under audit: timeouts, rng discipline, memory, a preflight.

Both auditors (black-box and sanity check) draw every chunk of outputs
through :func:`checked_sample`: raising, NaN, ±inf, wrong shape or dtype →
:class:`~dpaudit.errors.MechanismError` naming the mechanism, the input and the
problem.  This module adds what a per-chunk output check cannot see:

* **hanging** — the engine's per-unit timeout (:mod:`dpaudit.engine.timeout`),
  also applied here to the preflight;
* **foreign random sources** — every call of the mechanism runs with numpy's
  legacy global generator and Python's ``random`` seeded from the state of the
  work unit's generator (:func:`dpaudit.random.seeded_global_state`, restored
  afterwards), so code that draws from ``np.random.*`` or ``random.*`` — most
  research code — is as reproducible as code that uses the ``rng`` it is given,
  for any worker count and backend.  :func:`check_randomness` then probes the
  three remaining habits: a *fixed internal seed* (different unit seeds give
  identical, non-constant outputs) is refused with a :class:`MechanismError`,
  because every chunk would repeat the same noise and any audit of it is
  meaningless; a *truly unseedable* source (OS entropy, a secure generator:
  the same seed twice gives different outputs) is run, and the result says it
  is not reproducible; a *deterministic* mechanism (constant outputs) is
  audited as it is;
* **memory** — :func:`check_memory` refuses, before anything runs, work whose
  smallest working set exceeds the memory available, showing the estimate;
* :func:`preflight` runs the output checks and the memory check on a small
  chunk at two corners of the input domain, so a broken mechanism fails in a
  second with a clear message instead of after the first full chunk.
"""

from __future__ import annotations

import contextlib
import math
import os
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from dpaudit.engine.timeout import check_timeout, deadline, mechanism_label, preview
from dpaudit.errors import InvalidArgumentError, MechanismError
from dpaudit.mechanisms.base import Mechanism, MechanismContract
from dpaudit.random import seeded_global_state, stable_hash, state_entropy, unit_rng

if TYPE_CHECKING:
    from dpaudit.mechanisms.word.base import WordMechanism

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

    The global generators are seeded from ``rng``'s state for the call (see the
    module docstring).  Rejected, with a message naming the mechanism, the
    input and the problem: an
    exception inside the mechanism, a non-array or non-numeric dtype, the wrong
    shape, inf, and NaN unless the mechanism declares a NaN policy
    (``allows_nan_output``).
    """
    where = f"mechanism {mechanism.name!r} on input {x.ravel().tolist()}"
    try:
        if own_code(mechanism):
            out = mechanism.sample(x, n, rng)
        else:
            out = with_seeded_globals(rng, lambda: mechanism.sample(x, n, rng))
    except MechanismError:
        raise
    except Exception as exc:  # a misbehaving mechanism must stop the audit, with context
        raise MechanismError(f"{where} raised {type(exc).__name__}: {exc}") from exc
    if not isinstance(out, np.ndarray) or out.dtype.kind not in "biuf":
        kind = getattr(out, "dtype", type(out).__name__)
        raise MechanismError(
            f"{where} returned dtype {kind}: expected numbers (bool, int or float) from a "
            "Mechanism; a function f(x, n, rng) may return outputs of any type (dpaudit.audit "
            "encodes them, see dpaudit.adapters.encoding)"
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


_T = TypeVar("_T")


def with_seeded_globals(rng: np.random.Generator, draw: Callable[[], _T]) -> _T:
    """Run ``draw`` (foreign code) with numpy's and Python's global generators seeded from ``rng``.

    The states are derived from ``rng``'s state without advancing it and restored
    afterwards.  If the call drew only from the global generators (``rng`` untouched),
    ``rng`` is stepped so that the unit's next block seeds them afresh instead of
    repeating this block.  Shared by every auditor's sampling of foreign mechanisms.
    """
    entropy = state_entropy(rng)
    with seeded_global_state(entropy):
        out = draw()
    if state_entropy(rng) == entropy:
        rng.bit_generator.random_raw()
    return out


def sample_word_codes(
    mech: WordMechanism, word: str, rows: int, rng: np.random.Generator
) -> np.ndarray:
    """``mech.sample_codes`` with numpy's and Python's global generators seeded from ``rng``.

    The word-mechanism counterpart of :func:`checked_sample`'s seeding
    (:func:`with_seeded_globals`); dpaudit's own mechanisms draw from ``rng`` only.
    """
    if own_code(mech):
        return mech.sample_codes(word, rows, rng)
    return with_seeded_globals(rng, lambda: mech.sample_codes(word, rows, rng))


def own_code(mechanism: object) -> bool:
    """True for dpaudit's own mechanisms, which draw only from the ``rng`` they are given.

    Their calls skip the global-generator seeding (about 0.1 ms a call, as much
    as drawing a small block); tests check that sampling them leaves numpy's
    and Python's global generators untouched.  Adapters and user code (and
    user subclasses of built-ins, defined in their own modules) are foreign.
    """
    return type(mechanism).__module__.startswith(_OWN_MECHANISMS)


_OWN_MECHANISMS = "dpaudit.mechanisms."


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
#: The randomness kinds :func:`check_randomness` tells apart.
RANDOMNESS_KINDS = ("seeded", "deterministic", "unseedable")


@dataclass(frozen=True)
class RandomnessCheck:
    """How a mechanism's outputs depend on the seed dpaudit gives it.

    ``kind``: ``seeded`` (reproducible: same seed → same outputs, different
    seeds → different outputs), ``deterministic`` (constant outputs; an audit
    is valid and reproducible) or ``unseedable`` (the same seed twice gives
    different outputs: OS entropy or a secure generator; the audit is valid
    but cannot be repeated bit for bit).  ``warning`` is the sentence a result
    carries when it is not reproducible.
    """

    kind: str
    mechanism: str

    @property
    def reproducible(self) -> bool:
        """Whether the same seed reproduces the result bit for bit."""
        return self.kind != "unseedable"

    @property
    def warning(self) -> str | None:
        """``None``, or why the result cannot be reproduced from its seed."""
        if self.reproducible:
            return None
        return (
            f"not reproducible: mechanism {self.mechanism!r} draws from a source dpaudit cannot "
            "seed (OS entropy, a secure generator, or a seed it derives from state of its own "
            "such as a call counter); the same seed gave different outputs, so "
            "repeated runs give statistically equivalent, not identical, results"
        )


def check_randomness(
    mechanism: Mechanism, x: np.ndarray | None = None, *, rows: int | None = None, seed: int = 0
) -> RandomnessCheck:
    """Probe how ``mechanism`` uses randomness; raise :class:`MechanismError` for a fixed seed.

    Three chunks of ``rows`` outputs (default: the mechanism's ``probe_rows``) on input
    ``x`` (default: the low corner of the domain): two from the same unit seed, one from
    another.  Same seed, different outputs → ``unseedable``.  Different seeds, identical outputs
    that vary between rows → a fixed internal seed (e.g.
    ``np.random.default_rng(12345)`` inside the function): refused, since every
    chunk would repeat the same noise and the two inputs of a pair would get
    the same noise — an audit would report a violation that the mechanism's
    real (fresh) noise does not have.  Identical outputs that are equal across
    rows → ``deterministic``.  The global generators are seeded per chunk by
    :func:`checked_sample`, so code using ``np.random.*`` counts as seeded.
    """
    label = mechanism_label(mechanism)
    corners = domain_corners(mechanism)
    x = corners[0] if x is None else x
    other = corners[1] if not np.array_equal(x, corners[1]) else corners[0]
    rows = mechanism.probe_rows if rows is None else rows
    return classify_randomness(
        lambda tag: checked_sample(mechanism, x, rows, unit_rng(seed, (_SEED_TAG, tag))),
        label,
        f"input {preview(x)}",
        holders=(mechanism,),
        between=lambda: checked_sample(mechanism, other, rows, unit_rng(seed, (_SEED_TAG, 3))),
        between_on=f"input {preview(other)}",
    )


def classify_randomness(
    draw: Callable[[int], np.ndarray],
    label: str,
    on: str,
    *,
    kind: str = "mechanism",
    holders: Sequence[Any] = (),
    between: Callable[[], object] | None = None,
    between_on: str = "another input",
) -> RandomnessCheck:
    """The rule of :func:`check_randomness`, for any sampler: ``draw(tag)`` draws from seed ``tag``.

    Tag 1 twice and tag 2 once: different outputs for the same tag → ``unseedable``,
    unless the difference is a process-wide generator the code reaches (a module-level
    ``default_rng(42)``, ``RandomState`` or ``random.Random`` of the mechanism's module or
    of a function it holds, :func:`shared_generator`): restoring that generator's state
    repeats the outputs, so the code ignores the seed it is given and every worker process
    started from one parent repeats one stream — a *fixed seed*, refused with
    :class:`MechanismError`.  Different outputs for different tags → ``seeded``; identical
    outputs that are constant across rows → ``deterministic``; identical outputs that vary
    between rows → a fixed internal seed, refused (``kind``, ``label`` and ``on`` name the
    mechanism and the input in the message).

    ``between`` (a call of the code on another input, ``between_on``): for seeded code, tag 1
    is drawn once more after it.  Outputs that now differ depend on what the code was called
    with before — state kept between calls (a cache, a call counter, the last input) — so the
    audit's outputs are not independent draws of the mechanism on one input; refused with
    :class:`MechanismError`.
    """
    first, again = draw(1), draw(1)
    nan = first.dtype.kind == "f"
    if not np.array_equal(first, again, equal_nan=nan):
        shared = shared_generator(draw, holders, nan)
        if shared is not None:
            raise MechanismError(
                f"{kind} {label!r} uses a fixed seed: it draws from the process-wide generator "
                f"{shared}, not from the rng argument (restoring that generator's state "
                f"repeated its outputs on {on}); it was seeded once, so worker processes "
                "started from one parent, and every fresh process, repeat the same noise and an "
                "audit would be meaningless (draw from the rng argument)"
            )
        return RandomnessCheck("unseedable", label)
    if not np.array_equal(first, draw(2), equal_nan=nan):
        if between is not None:
            between()
            if not np.array_equal(first, draw(1), equal_nan=nan):
                raise MechanismError(
                    f"{kind} {label!r} keeps state between calls: the same seed on {on} gave "
                    f"different outputs after one call on {between_on}, so its outputs depend "
                    "on what it was called with before (a cache, a call counter or the last "
                    "input) and are not independent draws on one input; an audit would measure "
                    "a different mechanism (keep no state across calls, or reset it per call)"
                )
        return RandomnessCheck("seeded", label)
    if all(np.array_equal(first[0], row, equal_nan=nan) for row in first[1:]):
        return RandomnessCheck("deterministic", label)
    raise MechanismError(
        f"{kind} {label!r} uses a fixed seed: different seeds gave identical outputs on {on}, "
        "so every chunk repeats the same noise and an audit would be meaningless (draw from "
        "the rng argument, or from numpy's/Python's global generator, which dpaudit seeds "
        "per work unit)"
    )


#: Generators :func:`process_generators` looks for (``random.SystemRandom`` has no state).
_GENERATORS = (np.random.Generator, np.random.RandomState, random.Random)


def process_generators(holders: Sequence[Any]) -> list[tuple[str, Any]]:
    """Process-wide generators the code of ``holders`` can reach, named for a message.

    Looked for in the module of each holder's class, in the globals and closures of the
    functions it holds (its attributes, one level down) and of a holder that is itself a
    function; dpaudit's own modules and the global generators it seeds per work unit
    (``np.random``'s and ``random``'s) are skipped.
    """
    spaces: dict[str, dict[str, Any]] = {}

    def add_function(fn: Any) -> None:
        module = getattr(fn, "__module__", None) or ""
        if module.startswith("dpaudit") or not hasattr(fn, "__globals__"):
            return
        spaces.setdefault(f"module {module}", fn.__globals__)
        for i, cell in enumerate(getattr(fn, "__closure__", None) or ()):
            with contextlib.suppress(ValueError):  # an empty cell
                spaces.setdefault(
                    f"closure of {fn.__qualname__} [{i}]", {"cell": cell.cell_contents}
                )

    for holder in holders:
        if isinstance(holder, MechanismContract) and holder.user_code() is not None:
            add_function(holder.user_code())
        if callable(holder) and hasattr(holder, "__globals__"):
            add_function(holder)
        module = type(holder).__module__
        if not module.startswith("dpaudit") and module in sys.modules:
            spaces.setdefault(f"module {module}", vars(sys.modules[module]))
        for value in getattr(holder, "__dict__", {}).values():
            if callable(value):
                add_function(value)
    skip = {id(np.random.mtrand._rand), id(random._inst)}  # type: ignore[attr-defined]
    found = []
    for where, names in spaces.items():
        for name, value in list(names.items()):
            stateful = isinstance(value, _GENERATORS) and not isinstance(value, random.SystemRandom)
            if stateful and id(value) not in skip:
                found.append((f"{name!r} of {where}{_entropy(value)}", value))
    return found


def _entropy(gen: Any) -> str:
    seq = getattr(getattr(gen, "bit_generator", None), "seed_seq", None)
    entropy = getattr(seq, "entropy", None)
    if isinstance(entropy, int) and entropy < 2**32:
        return f" (seeded with {entropy})"
    return ""


def _state(gen: Any) -> Any:
    if isinstance(gen, np.random.Generator):
        return gen.bit_generator.state
    return gen.get_state() if isinstance(gen, np.random.RandomState) else gen.getstate()


def _restore(gen: Any, state: Any) -> None:
    if isinstance(gen, np.random.Generator):
        gen.bit_generator.state = state
    elif isinstance(gen, np.random.RandomState):
        gen.set_state(state)
    else:
        gen.setstate(state)


def shared_generator(
    draw: Callable[[int], np.ndarray], holders: Sequence[Any], nan: bool
) -> str | None:
    """The process-wide generator whose state the outputs of ``draw`` follow, or None.

    For each generator :func:`process_generators` finds: remember its state, draw, put the
    state back and draw again with the same seed; equal outputs mean the code draws from
    it.  The generator is left as it was found.
    """
    for name, gen in process_generators(holders):
        state = _state(gen)
        try:
            first = draw(1)
            _restore(gen, state)
            again = draw(1)
        finally:
            _restore(gen, state)
        if np.array_equal(first, again, equal_nan=nan):
            return name
    return None


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
    shape and dtype without raising (within ``timeout`` seconds each).  How it
    uses randomness is the audit's own first step
    (:func:`dpaudit.auditors.core.trust.establish_trust`), not repeated here.
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
