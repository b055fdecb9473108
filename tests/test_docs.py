"""The documentation builds without a warning, and every Python example in it runs.

Each page's ```python blocks run in order as one script, in a fresh process
(so a page can build on its earlier blocks, and functions reach the worker
processes as they do in a reader's script); a block right after
``<!-- no-run -->`` is skipped.  Functions named ``test_*`` that a block
defines are called too, so the "privacy tests in your CI" example really runs
its test.  A block marked ``<!-- file: NAME.py -->`` is also saved as ``NAME.py``
beside the script, so a later block can import it as the page tells the reader
to.  README.md counts as a page.

A ```text block right after a Python block shows what that block prints; the
test compares it with the real output (rules in ``tests/_docs_output.py``).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
from _docs_output import SHELL, Fence, Shown, fences, mismatch, shown_after

ROOT = Path(__file__).resolve().parents[1]
PAGES = [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]
_SENTINEL = "\x1e--- block {} ---"


def _runnable(page: Path) -> list[tuple[str, Shown | None]]:
    """The page's Python blocks that run, each with the output shown after it (if any)."""
    blocks: list[Fence] = fences(page.read_text(encoding="utf-8"))
    return [
        (block.code, shown_after(blocks, k))
        for k, block in enumerate(blocks)
        if block.lang == "python" and block.mark != "no-run"
    ]


def _blocks(page: Path) -> list[str]:
    return [code for code, _ in _runnable(page)]


# Pages whose Python examples only repeat, slowly, what a quick page runs.
_SLOW_PAGES = {
    # The ten-line example is getting-started.md's audit (same function, claim, sizes, seed).
    "README.md",
}


@pytest.mark.parametrize(
    "page",
    [
        pytest.param(p, marks=[pytest.mark.slow] if p.name in _SLOW_PAGES else [])
        for p in PAGES
        if _blocks(p)
    ],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_every_python_example_runs(page: Path, tmp_path: Path) -> None:
    """The page's blocks, as one script run the way a reader runs it (``python script.py``).

    A line printed between blocks splits the output, so that each shown output is
    compared with what its own block printed.
    """
    script = tmp_path / "example.py"
    calls = "\nfor _name, _value in list(globals().items()):\n" + (
        "    if _name.startswith('test_') and callable(_value):\n        _value()\n"
    )
    for block in fences(page.read_text(encoding="utf-8")):
        if block.mark == "file":  # <!-- file: mymod.py -->: saved as the page says
            (tmp_path / block.reason).write_text(block.code, encoding="utf-8")
    runnable = _runnable(page)
    parts = [
        f"print({_SENTINEL.format(k)!r}, flush=True)\n{code}"
        for k, (code, _) in enumerate(runnable)
    ]
    script.write_text("\n\n".join(parts) + calls, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"{page.name}:\n{done.stderr[-3000:]}"
    printed = re.split("\x1e--- block \\d+ ---\n", done.stdout)[1:]
    for k, (_, shown) in enumerate(runnable):
        wrong = shown and shown.mode != "unchecked" and mismatch(shown, printed[k])
        assert not wrong, f"{page.name}, Python block {k + 1}: shown output is wrong: {wrong}"


@pytest.mark.slow  # a full mkdocs build with the API reference (about 10 s on an idle core)
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


def test_every_output_block_follows_an_example_the_tests_run() -> None:
    """An output shown after a block no test runs would be unchecked without a word."""
    for page in PAGES:
        blocks = fences(page.read_text(encoding="utf-8"))
        for k, block in enumerate(blocks):
            if block.lang != "text":
                continue
            owner = blocks[k - 1] if k else None
            where = f"{page.name}, output block {block.code[:40]!r}"
            assert owner and owner.lang in ("python", *SHELL), f"{where}: no example before it"
            shown = shown_after(blocks, k - 1)
            assert shown and shown.mode in {"exact", "approximate", "unchecked"}, where
            assert shown.mode == "exact" or shown.reason, f"{where}: its marker needs a reason"
            runs = owner.mark not in ("not-run", "no-run")
            assert runs or shown.mode == "unchecked", f"{where}: its example never runs"


def test_the_output_comparison() -> None:
    """Ellipsis, white space, numbers at the precision shown, and the approximate mode."""
    shown = Shown("violation: ε ≥ 1.97 > claimed 1\nx = (1)...", "exact", "")
    assert mismatch(shown, "violation: ε ≥ 1.97124 > claimed 1\nx = (1),  and\nmore") is None
    assert "precision" in (mismatch(shown, "violation: ε ≥ 1.976 > claimed 1\nx = (1)") or "")
    assert "words" in (mismatch(shown, "violation: ε ≤ 1.97 > claimed 1\nx = (1)") or "")
    assert mismatch(Shown("52884/100000", "exact", ""), "52885/100000")
    assert mismatch(Shown("δ = 1.0e-5", "exact", ""), "δ = 1.04e-05") is None
    assert mismatch(Shown("δ = 1.0e-5", "exact", ""), "δ = 1.06e-05")
    sizes = Shown("sizes 1,000 / 10,000 per input ...", "approximate", "fitted to a budget")
    assert mismatch(sizes, "sizes 2,000 / 30,000 per input, estimated 4 s") is None
    assert mismatch(sizes, "size 2,000 / 30,000 per input")
