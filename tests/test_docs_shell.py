"""Every shell example in the docs and the README is checked; the short ones run.

A ```bash (or sh/console) block is one of two kinds:

* marked ``<!-- not-run: REASON -->`` on the line before it (installs, benchmarks of
  minutes or hours, Ray clusters, another environment): only its ``dpaudit`` lines
  are checked, by the CLI's own parser;
* unmarked: every line must be a ``dpaudit`` command, every one is parsed (fast test),
  and every one runs for real in a fresh directory (``slow`` test), where the page's
  Python imports and functions are saved as ``mymod.py`` so that ``mymod:function``
  resolves.  A
  command must exit 0, or 1 where its comment says ``exit 1`` (a violation found
  with ``--fail-on-violation``).

A block that is neither runnable nor marked fails the test: new examples are
either executed or say why they are not.
"""

from __future__ import annotations

import ast
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from dpaudit.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[1]
PAGES = [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]
_SHELL = re.compile(r"(<!--[^\n]*-->[ \t]*\n)?```(?:bash|sh|console|shell)\n(.*?)```", re.S)
_NOT_RUN = re.compile(r"<!-- not-run: (\S.*?) -->")
_PYTHON = re.compile(r"(<!-- no-run -->\s*)?```python\n(.*?)```", re.S)
_DPAUDIT = re.compile(r"^(?:\.venv[\w-]*/bin/)?dpaudit\s")


@dataclass(frozen=True)
class Command:
    page: Path
    text: str  # without the trailing comment
    comment: str
    runnable: bool  # in an unmarked block

    @property
    def argv(self) -> list[str]:
        return shlex.split(self.text)

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}: {self.text}"


def _lines(block: str) -> list[tuple[str, str]]:
    """Logical lines (backslash continuations joined) as (command, trailing comment)."""
    joined = re.sub(r"\\\n\s*", " ", block)
    out = []
    for line in joined.splitlines():
        code, _, comment = line.partition(" #")
        if line.lstrip().startswith("#"):
            continue  # a comment line: what follows is described, not run
        if code.strip():
            out.append((code.strip(), comment.strip()))
    return out


def _blocks() -> list[tuple[Path, str | None, str]]:
    found = []
    for page in PAGES:
        for marker, body in _SHELL.findall(page.read_text(encoding="utf-8")):
            reason = _NOT_RUN.search(marker or "")
            found.append((page, reason.group(1) if reason else None, body))
    return found


def _commands() -> list[Command]:
    return [
        Command(page, code, comment, reason is None)
        for page, reason, body in _blocks()
        for code, comment in _lines(body)
        if _DPAUDIT.match(code)
    ]


def test_every_shell_block_runs_or_says_why_not() -> None:
    unrunnable = [
        f"{page.relative_to(ROOT)}: {code}"
        for page, reason, body in _blocks()
        if reason is None
        for code, _ in _lines(body)
        if not _DPAUDIT.match(code)
    ]
    assert not unrunnable, (
        "shell blocks the tests cannot run need <!-- not-run: REASON --> before them:\n"
        + "\n".join(unrunnable)
    )


@pytest.mark.parametrize("command", _commands(), ids=str)
def test_every_dpaudit_command_parses(command: Command) -> None:
    argv = command.argv[1:]
    try:
        build_parser().parse_args(argv)
    except SystemExit as exit_:  # argparse's way of refusing
        pytest.fail(f"{command} does not parse (exit {exit_.code})")


def _module_of(page: Path) -> str:
    """The page's imports and functions: the ``mymod.py`` a reader saves from it."""
    code = "\n\n".join(body for skip, body in _PYTHON.findall(page.read_text()) if not skip)
    keep = (ast.Import, ast.ImportFrom, ast.FunctionDef)
    tree = ast.parse(code) if code else ast.Module(body=[], type_ignores=[])
    return "\n\n".join(ast.unparse(n) for n in tree.body if isinstance(n, keep)) + "\n"


def _expected_exit(command: Command) -> int:
    return 1 if "exit 1" in command.comment else 0


@pytest.mark.slow
@pytest.mark.parametrize("command", [c for c in _commands() if c.runnable], ids=str)
def test_every_runnable_dpaudit_command_runs(command: Command, tmp_path: Path) -> None:
    (tmp_path / "mymod.py").write_text(_module_of(command.page), encoding="utf-8")
    argv = [sys.executable, "-c", "from dpaudit.cli.main import run; run()", *command.argv[1:]]
    done = subprocess.run(
        argv, cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path), "HOME": str(Path.home())},
    )  # fmt: skip
    assert done.returncode == _expected_exit(command), (
        f"{command}: exit {done.returncode}\n{done.stdout[-1500:]}\n{done.stderr[-1500:]}"
    )
