"""The argument parser and exit codes every sub-command shares (kept free of heavy imports)."""

from __future__ import annotations

import argparse
import math
import sys
from decimal import Decimal, InvalidOperation
from typing import Any

EXIT_OK = 0
EXIT_VIOLATION = 1
EXIT_USAGE = 2


class OneLineParser(argparse.ArgumentParser):
    """argparse parser whose usage errors are one line on stderr and exit 2."""

    def error(self, message: str) -> Any:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def integer(text: str) -> int:
    """argparse type for counts: ``1000000``, ``1_000_000``, ``1e6`` or ``2.5e6`` (whole numbers).

    Parsed exactly (as a decimal, not a float).  A value that is not a whole
    number (``1.5``, ``1e-3``, ``abc``) is a usage error naming the value; range
    checks stay with each option.
    """
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        value = Decimal("NaN")
    if not value.is_finite() or value != value.to_integral_value():
        raise argparse.ArgumentTypeError(
            f"expected a whole number such as 1000000 or 1e6, got {text!r}"
        )
    if value.adjusted() > 18:  # 1e18 and beyond: no count is that large; keeps int() cheap
        raise argparse.ArgumentTypeError(f"expected a whole number below 1e19, got {text!r}")
    return int(value)


def bounded_integer(minimum: int, maximum: int | None = None) -> Any:
    """argparse type: a whole number (as :func:`integer` reads it) in ``[minimum, maximum]``.

    Checked while the line is parsed, so ``--workers 0`` is refused naming the
    flag and its range before any module or model loads.
    """
    allowed = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"

    def parse(text: str) -> int:
        value = integer(text)
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"expected a whole number {allowed}, got {text!r}")
        return value

    parse.__name__ = "integer"  # argparse names the type in some of its messages
    return parse


def positive_seconds(text: str) -> float:
    """argparse type: a finite number of seconds > 0 (``--time-budget``, ``--unit-timeout``)."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}")
    return value
