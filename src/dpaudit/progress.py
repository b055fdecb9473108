"""Progress bars on stderr with an ETA, shown only for work that lasts a few seconds."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: Global switch used by the CLI (``--quiet``) and by tests.
ENABLED = True


class _NullBar:
    def update(self, n: int = 1) -> None:
        """Ignore progress."""

    def set_description(self, text: str) -> None:
        """Ignore descriptions."""


@contextmanager
def progress(total: int | None, desc: str, unit: str = "chunk") -> Iterator[Any]:
    """A tqdm bar on stderr that appears after 2 s (no bar if tqdm is missing or disabled)."""
    if not ENABLED:
        yield _NullBar()
        return
    try:
        from tqdm.auto import tqdm
    except ImportError:
        yield _NullBar()
        return
    bar = tqdm(
        total=total,
        desc=desc,
        unit=unit,
        file=sys.stderr,
        delay=2.0,
        leave=False,
        dynamic_ncols=True,
    )
    try:
        yield bar
    finally:
        bar.close()
