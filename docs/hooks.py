"""MkDocs hook: Sphinx roles as plain code, and output tables kept unwrapped.

The docstrings are written for Sphinx-style readers (``:class:`~a.b.C```);
mkdocstrings renders the role name literally.  This drops the role and the
``~`` (which in Sphinx means "show the last component only") from the HTML.

Output blocks are wrapped (``stylesheets/extra.css``) so that a long verdict
line can be read without scrolling; an output that prints a table (a rule of
dashes under its header) would lose its columns, so it is marked ``table`` and
scrolls instead.
"""

from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(r":(?:class|func|mod|meth|attr|data|exc|obj):<code>(~?)([^<]*)</code>")
_OUTPUT = re.compile(r'<div class="language-text highlight">(.*?)</div>', re.S)


def _plain(match: re.Match[str]) -> str:
    tilde, target = match.groups()
    return f"<code>{target.rsplit('.', 1)[-1] if tilde else target}</code>"


def _table(match: re.Match[str]) -> str:
    block = match.group(0)
    return (
        block.replace("language-text highlight", "language-text highlight table", 1)
        if re.search(r"-{20,}", match.group(1))
        else block
    )


def on_page_content(html: str, **kwargs: Any) -> str:
    """Replace every rendered role by the code it names; mark output tables."""
    return _OUTPUT.sub(_table, _ROLE.sub(_plain, html))
