"""Progress on stderr for work that lasts a few seconds.

On a terminal: a tqdm bar with an ETA that appears after :data:`DELAY` seconds.
When stderr is not a terminal (a log file, a pipe, CI): no bar and no escape
codes, but one plain line per stage that lasted at least :data:`DELAY` seconds,
written when the stage ends (``selecting: 8/8 work units in 2.6 s``,
``reproduce hoho-fig1 [3/4]: done in 41.0 s``).  A stage
is one ``progress()`` block, or the span between two ``set_description`` calls.
On a terminal a finished bar stays on screen (one kept line per stage).  While
a block runs, a heartbeat every :data:`HEARTBEAT` seconds says it is still
alive (a plain line off a terminal, a refreshed clock on a bar), so a unit
that takes long — or hangs without ``--unit-timeout`` — is never silent.
"""

from __future__ import annotations

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
#: Bar layout (``{desc}`` ends in ": "): counts and ETA; no rate ("s(est)/s" says little).
BAR_FORMAT = "{desc}{percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} {unit} [{elapsed}<{remaining}]"


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

    def update(self, n: int = 1) -> None:
        """Count ``n`` more units done."""
        self.n += n

    def set_description(self, text: str) -> None:
        """Start a new stage named ``text`` (the previous one gets its line)."""
        if text != self._stage_desc:
            self._finish_stage()
            self._stage_desc, self._stage_n, self._stage_start = text, self.n, time.perf_counter()

    def close(self) -> None:
        """End the last stage."""
        self._finish_stage()

    def refresh(self) -> None:
        """Heartbeat: one line saying the current stage is still running."""
        seconds = time.perf_counter() - self._stage_start
        total = "" if self.total is None else f"/{self.total}"
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
        self.stream.write(f"{self._stage_desc}: {done} in {seconds:.1f} s\n")
        self.stream.flush()


@contextmanager
def progress(total: int | None, desc: str, unit: str = "work units") -> Iterator[Any]:
    """Progress of ``total`` units of work named ``desc``, on stderr.

    Yields an object with ``update(n)`` and ``set_description(text)``: a tqdm bar
    on a terminal, a :class:`LineProgress` elsewhere, a no-op when disabled
    (``-q``) or when tqdm is missing on a terminal.
    """
    if not ENABLED:
        yield _NullBar()
        return
    desc = CONTEXT + desc
    stream = sys.stderr
    isatty = getattr(stream, "isatty", None)
    if not (callable(isatty) and isatty()):
        bar: Any = LineProgress(total, desc, unit, stream)
    else:
        try:
            from tqdm.auto import tqdm
        except ImportError:
            yield _NullBar()
            return
        bar = tqdm(
            total=total,
            desc=f"{desc}: ",  # as tqdm's set_description writes it
            unit=unit,
            file=stream,
            delay=DELAY,
            leave=True,
            dynamic_ncols=True,
            bar_format=BAR_FORMAT if total is not None else None,
        )
    stop = threading.Event()
    beat = threading.Thread(target=_heartbeat, args=(bar, stop), daemon=True)
    beat.start()
    try:
        yield bar
    finally:
        stop.set()
        beat.join()
        bar.close()


def _heartbeat(bar: Any, stop: threading.Event) -> None:
    """Every :data:`HEARTBEAT` seconds until ``stop``: the bar's clock, or a plain line."""
    while not stop.wait(HEARTBEAT):
        bar.refresh()
