"""The documentation builds without a warning, and every Python example in it runs.

Each page's ```python blocks run in order as one script, in a fresh process
(so a page can build on its earlier blocks, and functions reach the worker
processes as they do in a reader's script); a block right after
``<!-- no-run -->`` is skipped.  Functions named ``test_*`` that a block
defines are called too, so the "privacy tests in your CI" example really runs
its test.  README.md counts as a page.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]
_BLOCK = re.compile(r"(<!-- no-run -->\s*)?```python\n(.*?)```", re.S)


def _blocks(page: Path) -> list[str]:
    return [code for skip, code in _BLOCK.findall(page.read_text(encoding="utf-8")) if not skip]


@pytest.mark.parametrize(
    "page",
    [p for p in PAGES if _blocks(p)],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_every_python_example_runs(page: Path, tmp_path: Path) -> None:
    """The page's blocks, as one script run the way a reader runs it (``python script.py``)."""
    script = tmp_path / "example.py"
    calls = "\nfor _name, _value in list(globals().items()):\n" + (
        "    if _name.startswith('test_') and callable(_value):\n        _value()\n"
    )
    script.write_text("\n\n".join(_blocks(page)) + calls, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"{page.name}:\n{done.stderr[-3000:]}"


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="mkdocs not installed")
def test_the_site_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "site" / "reference" / "api" / "index.html").is_file()


def test_every_page_is_in_the_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = [p.relative_to(ROOT / "docs").as_posix() for p in PAGES if p.parent != ROOT]
    missing = [p for p in pages if p not in nav]
    assert not missing, f"pages not in mkdocs.yml's nav: {missing}"
