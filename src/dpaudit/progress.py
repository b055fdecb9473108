"""Progress on stderr for work that lasts a few seconds.

On a terminal: a tqdm bar with an ETA that appears after :data:`DELAY` seconds,
named by its stage (``hoho-fig1 [1/4] · selecting``; ``reproduce`` names each
figure, :data:`CONTEXT` puts the figure before its inner stages).
When stderr is not a terminal (a log file, a pipe, CI): no bar and no escape
codes, but one plain line per stage that lasted at least :data:`DELAY` seconds,
written when the stage ends (``selecting: 8/8 work units in 2.6 s``,
``reproduce hoho-fig1 [3/4]: done in 41.0 s``).  A stage
is one ``progress()`` block, or the span between two ``set_description`` calls.
On a terminal a finished bar stays on screen (one kept line per stage).  While
a block runs, a heartbeat every :data:`HEARTBEAT` seconds says it is still
alive (a plain line off a terminal, a refreshed clock on a bar), so a unit
that takes long — or hangs without ``--unit-timeout`` — is never silent.

A stage given an estimate (:func:`expect`; ``reproduce`` gives each figure
its own) that runs past it says so, with the machine's load, so a slow run
tells why it is slow: ``reproduce lm-rewriters [9/9]: 95 s, past its 40 s
estimate (machine busy? load 7.2 on 2 cores)`` — in the heartbeat line off a
terminal (and in the stage's closing line), once above the bar on one.

A command whose duration was estimated as a whole (``dpaudit audit``: the timed
pilots' prediction, :func:`whole_run`) gives every stage bar that estimate: a bar
shows how much of it is left when the stage starts (``audit ≈ 38 s of 52 s left,
pilot estimate``), and once the command runs past it the same overrun line as a
figure's says so, with the load.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: Global switch used by the CLI (``--quiet``) and by tests.
ENABLED = True
#: Seconds a stage must last before it shows (bar or line).
DELAY = 2.0
#: Seconds between "still running" signs while a block makes no visible progress.
HEARTBEAT = 30.0
#: Prefix of every block's name, set by a caller that runs many configurations (``reproduce``
#: sets ``"hoho-fig2 [4/5] · "``) so that a stage line says which one it belongs to.
CONTEXT = ""
#: The whole command's estimate (:func:`whole_run`), which every stage bar carries; None outside.
RUN: _Estimate | None = None
#: Unit of a bar that counts estimated seconds (``reproduce``: each figure weighs its
#: estimate).  Its ETA is the estimate left, scaled by the pace so far (the whole run's
#: average, tqdm's ``smoothing=0``): a run going at half the estimated pace shows twice the
#: estimate left, and an ETA that grows while a figure falls behind.
ESTIMATED_SECONDS = "s(est)"
#: Bar layout (``{desc}`` ends in ": "): counts and ETA; no rate ("s(est)/s" says little).
BAR_FORMAT = (
    "{desc}{percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} {unit} [{elapsed}<{remaining}{postfix}]"
)


class _Estimate:
    """A stage's expected duration, from the moment :func:`expect` was called."""

    def __init__(self, seconds: float, name: str, whole: bool = False) -> None:
        self.seconds, self.name = float(seconds), name
        self.start = time.perf_counter()
        self.told = False
        #: The whole command's estimate (:func:`whole_run`), not one stage's: its lines name it.
        self.whole = whole

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def past(self, elapsed: float) -> str | None:
        """``"past its 40 s estimate (load …)"`` once ``elapsed`` exceeds it, else None."""
        if elapsed <= self.seconds:
            return None
        return f"past its {self.seconds:.0f} s estimate{load_note()}"

    def overrun(self) -> str | None:
        """``"95 s, past its 40 s estimate (load …)"`` once past the estimate, else None."""
        elapsed = self.elapsed()
        past = self.past(elapsed)
        if past is None:
            return None
        prefix = f"{self.name} at " if self.whole else ""
        return f"{prefix}{elapsed:.0f} s, {past}"


def load_note() -> str:
    """`` (machine busy? load 7.2 on 2 cores)``, or `` (load 0.3 on 2 cores)``; "" if unknown."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # not on this platform
        return ""
    affinity = getattr(os, "sched_getaffinity", None)
    cores = len(affinity(0)) if affinity is not None else os.cpu_count() or 1
    busy = "machine busy? " if load >= cores else ""
    return f" ({busy}load {load:.1f} on {cores} core{'s' if cores != 1 else ''})"


def expect(bar: Any, seconds: float, name: str = "") -> None:
    """The stage just named on ``bar`` should take about ``seconds``; past them it says so.

    ``name`` (e.g. the figure) is what the overrun line names on a terminal;
    off one the stage's own name is used.  A disabled bar ignores it.
    """
    if isinstance(bar, _NullBar):
        return
    try:
        bar.dpaudit_estimate = _Estimate(seconds, name)
        if not isinstance(bar, LineProgress):
            bar.set_postfix_str("", refresh=False)
    except AttributeError:  # a bar of another kind: no estimate
        pass


class _NullBar:
    def update(self, n: int = 1) -> None:
        """Ignore progress."""

    def set_description(self, text: str) -> None:
        """Ignore descriptions."""

    def close(self) -> None:
        """Nothing to close."""


class LineProgress:
    """Progress for a non-terminal stream: one line per finished stage, no escape codes."""

    def __init__(self, total: int | None, desc: str, unit: str, stream: Any) -> None:
        self.total, self.desc, self.unit, self.stream = total, desc, unit, stream
        self.n = 0
        self._stage_desc, self._stage_n, self._stage_start = desc, 0, time.perf_counter()
        #: The current stage's estimate (:func:`expect`), reset by each new stage to the whole
        #: command's (:data:`RUN`, usually None).
        self.dpaudit_estimate: _Estimate | None = RUN

    def update(self, n: int = 1) -> None:
        """Count ``n`` more units done."""
        self.n += n

    def set_description(self, text: str) -> None:
        """Start a new stage named ``text`` (the previous one gets its line)."""
        if text != self._stage_desc:
            self._finish_stage()
            self._stage_desc, self._stage_n, self._stage_start = text, self.n, time.perf_counter()
            self.dpaudit_estimate = RUN

    def close(self) -> None:
        """End the last stage."""
        self._finish_stage()

    def refresh(self) -> None:
        """Heartbeat: one line saying the current stage is still running."""
        seconds = time.perf_counter() - self._stage_start
        total = "" if self.total is None else f"/{self.total}"
        late = None if self.dpaudit_estimate is None else self.dpaudit_estimate.overrun()
        if late is not None:  # say why the count stands still: slow machine, or a low estimate
            self.stream.write(f"{self._stage_desc}: {late}; {self.n}{total} {self.unit} done\n")
        else:
            self.stream.write(
                f"{self._stage_desc}: still running after {seconds:.0f} s "
                f"({self.n}{total} {self.unit} done)\n"
            )
        self.stream.flush()

    def _finish_stage(self) -> None:
        seconds = time.perf_counter() - self._stage_start
        if seconds < DELAY or self.n == self._stage_n:  # short, or no work done in it
            return
        if self._stage_desc == self.desc:  # the whole block: its count
            total = "" if self.total is None else f"/{self.total}"
            done = f"{self.n}{total} {self.unit}"
        else:  # one of several named stages: its count means little
            done = "done"
        estimate = self.dpaudit_estimate
        late = None
        if estimate is not None:  # the stage's own estimate, or the whole command's
            late = estimate.overrun() if estimate.whole else estimate.past(seconds)
        past = "" if late is None else f", {late}"
        self.stream.write(f"{self._stage_desc}: {done} in {seconds:.1f} s{past}\n")
        self.stream.flush()


@contextmanager
def progress(total: int | None, desc: str, unit: str = "work units") -> Iterator[Any]:
    """Progress of ``total`` units of work named ``desc``, on stderr.

    Yields an object with ``update(n)`` and ``set_description(text)``: a tqdm bar
    on a terminal, a :class:`LineProgress` elsewhere (and on a terminal without
    tqdm), a no-op when disabled (``-q``).
    """
    if not ENABLED:
        yield _NullBar()
        return
    desc = CONTEXT + desc
    stream = sys.stderr
    isatty = getattr(stream, "isatty", None)
    tqdm = _tqdm() if callable(isatty) and isatty() else None
    if tqdm is None:  # a log, a pipe, CI — or a terminal without tqdm: the plain lines
        bar: Any = LineProgress(total, desc, unit, stream)
    else:
        bar = tqdm(
            total=total,
            desc=f"{desc}: ",  # as tqdm's set_description writes it
            unit=unit,
            file=stream,
            delay=DELAY,
            smoothing=0.0 if unit == ESTIMATED_SECONDS else 0.3,  # 0.3: tqdm's default
            leave=True,
            dynamic_ncols=True,
            bar_format=BAR_FORMAT if total is not None else None,
        )
        _carry_run_estimate(bar)
    stop = threading.Event()
    beat = threading.Thread(target=_heartbeat, args=(bar, stop), daemon=True)
    beat.start()
    try:
        yield bar
    finally:
        stop.set()
        beat.join()
        bar.close()


@contextmanager
def whole_run(seconds: float | None, name: str) -> Iterator[None]:
    """Within the block, the command ``name`` is expected to take ``seconds`` (None: unknown).

    Every stage bar opened inside shows what is left of the estimate, and the first
    heartbeat past it says so with the load (once per command).
    """
    global RUN
    outer = RUN
    RUN = None if seconds is None or not seconds > 0 else _Estimate(seconds, name, whole=True)
    try:
        yield
    finally:
        RUN = outer


def _carry_run_estimate(bar: Any) -> None:
    """A new tqdm bar carries the whole command's estimate, and shows what is left of it."""
    if RUN is None:
        return
    bar.dpaudit_estimate = RUN
    left = RUN.seconds - RUN.elapsed()
    note = (
        f"{RUN.name} ≈ {left:.0f} s of {RUN.seconds:.0f} s left, pilot estimate"
        if left > 0
        else f"{RUN.name} past its {RUN.seconds:.0f} s estimate"
    )
    bar.set_postfix_str(note, refresh=False)


def _tqdm() -> Any:
    """tqdm's bar class, or None when tqdm is not installed (it comes with the extras)."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm


def _heartbeat(bar: Any, stop: threading.Event) -> None:
    """Every :data:`HEARTBEAT` seconds until ``stop``: the bar's clock, or a plain line.

    A tqdm bar past its stage's estimate gets one line above it and a note beside its ETA.
    """
    while not stop.wait(HEARTBEAT):
        if not isinstance(bar, LineProgress):
            _tell_overrun(bar)
        bar.refresh()


def _tell_overrun(bar: Any) -> None:
    estimate = getattr(bar, "dpaudit_estimate", None)
    late = None if estimate is None or estimate.told else estimate.overrun()
    if late is None:
        return
    estimate.told = True
    name = estimate.name or str(getattr(bar, "desc", "")).rstrip(": ")
    bar.write(f"{name}: {late}", file=bar.fp)
    bar.set_postfix_str(f"past its {estimate.seconds:.0f} s estimate", refresh=False)
