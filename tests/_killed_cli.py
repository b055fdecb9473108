"""Run the ``dpaudit`` command line in a subprocess, and ``kill -9`` it at a chosen moment.

For the checkpoint tests: the run must die without any clean-up, as after a
crash or the OOM killer, so it runs in its own interpreter.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def dpaudit_argv(*argv: str) -> list[str]:
    """The command line ``dpaudit -q ARGV`` for a subprocess (no progress bars)."""
    return [sys.executable, "-m", "dpaudit.cli.main", "-q", *argv]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO / "src")}


def run_to_end(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` to the end; stdout and stderr captured as text."""
    return subprocess.run(argv, env=_env(), capture_output=True, text=True)


def kill_9_when(argv: list[str], ready: Callable[[], bool], timeout: float = 120.0) -> None:
    """Start ``argv``; as soon as ``ready()`` holds, ``SIGKILL`` it and reap it.

    Fails if the process ends by itself first, or ``ready()`` does not hold
    within ``timeout`` seconds.
    """
    proc = subprocess.Popen(argv, env=_env(), stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + timeout
        while not ready():
            assert proc.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "the moment to kill never came"
            time.sleep(0.005)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
