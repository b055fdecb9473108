"""The argument parser and exit codes every sub-command shares (kept free of heavy imports)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

EXIT_OK = 0
EXIT_VIOLATION = 1
EXIT_USAGE = 2


class OneLineParser(argparse.ArgumentParser):
    """argparse parser whose usage errors are one line on stderr and exit 2."""

    def error(self, message: str) -> Any:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(EXIT_USAGE)
