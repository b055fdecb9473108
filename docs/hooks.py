"""MkDocs hook: show the docstrings' Sphinx cross-reference roles as plain code.

The docstrings are written for Sphinx-style readers (``:class:`~a.b.C```);
mkdocstrings renders the role name literally.  This drops the role and the
``~`` (which in Sphinx means "show the last component only") from the HTML.
"""

from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(r":(?:class|func|mod|meth|attr|data|exc|obj):<code>(~?)([^<]*)</code>")


def _plain(match: re.Match[str]) -> str:
    tilde, target = match.groups()
    return f"<code>{target.rsplit('.', 1)[-1] if tilde else target}</code>"


def on_page_content(html: str, **kwargs: Any) -> str:
    """Replace every rendered role by the code it names."""
    return _ROLE.sub(_plain, html)
