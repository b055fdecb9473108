"""The argument parser and exit codes every sub-command shares (kept free of heavy imports)."""

from __future__ import annotations

import argparse
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
