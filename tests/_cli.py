"""Run the ``dpaudit`` command line in-process from tests (one helper for every test file)."""

from __future__ import annotations

import pytest

from dpaudit.cli.main import main


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run ``dpaudit ARGV``; return the exit status (argparse's included), stdout and stderr."""
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def run_cli_quiet(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """:func:`run_cli` with ``-q``: no progress bars on stderr."""
    return run_cli(capsys, "-q", *argv)
