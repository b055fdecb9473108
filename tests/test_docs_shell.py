"""Every shell example of the documentation and the README runs as written.

Each ```bash / ```console / ```sh block is one test.  Its commands (a line, or
lines joined by a trailing backslash) run one after the other in a fresh
temporary directory, through ``bash``, with this interpreter's ``dpaudit`` and
``python`` first on ``PATH``; each must exit 0, or the status its trailing
comment names (``# exit 1: violation``).  A block that cannot run in a test
(installing, a Ray cluster, a run of minutes, a model download) is marked just
before it::

    <!-- not-run: installs packages -->

and one that runs but takes more than a few seconds is marked
``<!-- slow: reason -->`` (pytest's ``slow`` marker, left out of
``-m "not slow"``).  An unmarked block with a command other than ``dpaudit ...``
or ``python ...`` fails, so nothing a reader is shown is silently unchecked.
``.venv-mldp/bin/dpaudit ...`` (mldp-text's own environment) runs with the
checkout's ``.venv-mldp``; where that environment (or the WordNet a SynTF
command needs) does not exist the block is skipped with the reason, as
``tests/test_mldp_env.py`` is.

Three things differ from the reader's run, all to keep the check short and all
about time, not about what the command does: a ``--time-budget`` is cut to
``_BUDGET`` seconds; a ``dpaudit audit`` that would size itself to the
default budget (no ``--samples``, no ``--time-budget``; a ``--claim`` audit too)
gets ``--time-budget _BUDGET``; and in a block whose output the page does not show
(so only the exit status is checked) ``--samples`` and ``--final-samples`` are cut to
at most ``_SAMPLE_CAPS``.  The numbers such a block reproduces are checked where they
are stored: ``tests/test_docs_tables.py`` against ``benchmarks/results/``.

A page's Python block marked ``<!-- file: NAME.py -->`` is written to ``NAME.py``
first, so ``dpaudit audit mymod:f`` finds the function the page defined.

A ```text block right after a shell block shows what its commands print: the
test compares it with their real stdout (rules in ``tests/_docs_output.py``).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from _docs_output import SHELL, Shown, fences, mismatch, shown_after

ROOT = Path(__file__).resolve().parents[1]
PAGES = [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]
_FILE = re.compile(r"<!-- file: ([\w.]+\.py) -->\s*```python\n(.*?)```", re.S)
_RUNNABLE = re.compile(r"^(\.venv-mldp/bin/)?(dpaudit|python)\s")
# Another environment a page's commands may name (mldp-text pins numpy < 2): they run
# there when the checkout has it (.ci/run creates it), else the block is skipped, saying so.
_ENVIRONMENTS = {".venv-mldp/bin/": ROOT / ".venv-mldp" / "bin"}
# System data a command needs, as .ci/run installs it (or says it could not): skipped without.
_SYSTEM_DATA = {"mldp:syntf": Path("/usr/share/wordnet/index.sense")}  # WordNet 3.0, Debian
_EXIT = re.compile(r"^\s*exit (\d+)")
_BUDGET = "2"
#: Largest sizes a command of a block without shown output runs with.
_SAMPLE_CAPS = {"--samples": 20_000, "--final-samples": 200_000}


def _commands(block: str) -> list[tuple[str, int]]:
    """The block's commands with the exit status each expects (0 unless a comment says)."""
    joined = re.sub(r"\s*\\\n\s*", " ", block)
    out = []
    for line in joined.splitlines():
        command, _, comment = line.partition(" #") if not line.startswith("#") else ("", "", line)
        if command.strip():
            status = _EXIT.search(comment)
            out.append((command.strip(), int(status.group(1)) if status else 0))
    return out


def _capped(command: str) -> str:
    """``command`` with its sample sizes cut to :data:`_SAMPLE_CAPS` (exit status only)."""

    def cut(match: re.Match[str]) -> str:
        flag, value = match.group(1), match.group(2)
        try:
            size = float(value)
        except ValueError:
            return match.group(0)
        return f"{flag} {min(int(size), _SAMPLE_CAPS[flag])}"

    return re.sub(r"(--samples|--final-samples) (\S+)", cut, command)


def _quick(command: str, checked: bool = True) -> str:
    """Cut the time a command may spend (see the module docstring); ``checked``: its output
    is compared with the page, so its sizes stay as written."""
    command = command if checked else _capped(command)
    command = re.sub(r"--time-budget \S+", f"--time-budget {_BUDGET}", command)
    sized = any(flag in command for flag in ("--samples", "--time-budget"))
    if command.startswith("dpaudit audit ") and not sized:
        command += f" --time-budget {_BUDGET}"
    return command


def _in_environment(command: str) -> str:
    """``.venv-mldp/bin/dpaudit ...`` runs the checkout's environment, not the temporary one's."""
    for prefix, where in _ENVIRONMENTS.items():
        if command.startswith(prefix):
            return f"{where}/{command.removeprefix(prefix)}"
    return command


#: Pages whose examples run as a second xdist scope (``--dist loadscope`` keeps a scope on one
#: worker): the examples take minutes, and in two scopes the two workers share them.
_SECOND_SCOPE = frozenset(
    ("floating-point", "text-attacks", "pypantera", "diffractor", "black-box", "mldp-text",
     "checkpoint", "lm-rewriters")
)  # fmt: skip


def _cases(second: bool) -> list:
    cases = []
    for page in [p for p in PAGES if (p.stem in _SECOND_SCOPE) == second]:
        blocks = fences(page.read_text(encoding="utf-8"))
        shell = [k for k, block in enumerate(blocks) if block.lang in SHELL]
        for number, k in enumerate(shell, start=1):
            name, block = f"{page.relative_to(ROOT)}#{number}", blocks[k]
            if block.mark == "not-run":
                assert block.reason, f"{name}: <!-- not-run: ... --> needs a reason"
                continue
            marks = [pytest.mark.slow] if block.mark == "slow" else []
            shown = shown_after(blocks, k)
            cases.append(pytest.param(page, block.code, shown, id=name, marks=marks))
    return cases


#: Outputs of commands already run in this module, by (command, the page's files): two pages
#: that show the same audit (the OpenDP Gaussian's library claim, the 0.268-GDP audit) run it
#: once.  Only ``dpaudit audit`` commands that write nothing but their output are kept.
_RAN: dict[tuple[str, tuple[tuple[str, str], ...]], subprocess.CompletedProcess[str]] = {}


def _reusable(command: str) -> bool:
    return command.startswith("dpaudit audit ") and not any(
        mark in command for mark in ("--out", ">", "|", "--resume")
    )


@pytest.mark.parametrize(("page", "block", "shown"), _cases(second=False))
def test_every_shell_example_runs(
    page: Path, block: str, shown: Shown | None, tmp_path: Path
) -> None:
    _check_example(page, block, shown, tmp_path)


class TestSecondScope:
    """The examples of :data:`_SECOND_SCOPE`'s pages (the same check, another xdist scope)."""

    @pytest.mark.parametrize(("page", "block", "shown"), _cases(second=True))
    def test_every_shell_example_runs(
        self, page: Path, block: str, shown: Shown | None, tmp_path: Path
    ) -> None:
        _check_example(page, block, shown, tmp_path)


def _check_example(page: Path, block: str, shown: Shown | None, tmp_path: Path) -> None:
    """Run one block's commands in ``tmp_path`` and compare their output with the page's."""
    files = tuple(_FILE.findall(page.read_text(encoding="utf-8")))
    for name, code in files:
        (tmp_path / name).write_text(code, encoding="utf-8")
    commands = _commands(block)
    unrunnable = [c for c, _ in commands if not _RUNNABLE.match(c)]
    assert not unrunnable, (
        f"{page.name}: {unrunnable} cannot run in a test; mark the block <!-- not-run: reason -->"
    )
    for prefix, where in _ENVIRONMENTS.items():
        if any(c.startswith(prefix) for c, _ in commands) and not (where / "dpaudit").exists():
            pytest.skip(f"{where.parent} does not exist (tests/test_mldp_env.py: how to create it)")
    for needle, data in _SYSTEM_DATA.items():
        if any(needle in c for c, _ in commands) and not data.exists():
            pytest.skip(f"{needle} needs {data} (apt-get install wordnet-base wordnet-sense-index)")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in [str(tmp_path), str(ROOT / "src"), env.get("PYTHONPATH", "")] if p
    )
    stdout = []
    checked = bool(shown and shown.mode != "unchecked")
    for command, expected in commands:
        key = (_quick(command, checked), files)
        done = _RAN.get(key) or subprocess.run(
            ["bash", "-c", _in_environment(key[0])],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if _reusable(command):
            _RAN[key] = done
        assert done.returncode == expected, (
            f"{page.name}: `{command}` exited {done.returncode}, not {expected}:\n"
            f"{done.stdout[-1500:]}\n{done.stderr[-1500:]}"
        )
        stdout.append(done.stdout)
    wrong = shown and shown.mode != "unchecked" and mismatch(shown, "".join(stdout))
    assert not wrong, f"{page.name}: shown output is wrong: {wrong}"


def test_markers_are_spelled_right() -> None:
    """A mistyped marker would leave a block unchecked or unskipped without a word."""
    for page in PAGES:
        for marker in re.findall(r"<!-- ?([\w-]+):", page.read_text(encoding="utf-8")):
            assert marker in {"not-run", "slow", "file", "output"}, (
                f"{page.name}: unknown marker {marker}"
            )


def test_the_checker_reads_commands_exit_statuses_and_marks() -> None:
    """The parsing itself: joined lines, comments, ``# exit N``, and an install it refuses."""
    block = "dpaudit audit ome \\\n  --epsilon 1   # exit 1: violation\n# comment\npip install x\n"
    commands = _commands(block)
    assert commands == [("dpaudit audit ome --epsilon 1", 1), ("pip install x", 0)]
    assert [c for c, _ in commands if not _RUNNABLE.match(c)] == ["pip install x"]
    page = "<!-- not-run: installs -->\n```bash\npip install x\n```\n```sh\ndpaudit --help\n```\n"
    assert [b.mark for b in fences(page) if b.lang in SHELL] == ["not-run", ""]
    assert _quick("dpaudit audit laplace --epsilon 1").endswith(f"--time-budget {_BUDGET}")
    claim = _quick("dpaudit audit gaussian --epsilon 1 --claim gdp:1")  # sized to a budget too
    assert claim.endswith(f"--time-budget {_BUDGET}")
    assert "--time-budget" not in _quick("dpaudit audit gaussian --claim gdp:1 --samples 1e5")
    big = "dpaudit audit laplace --samples 1e6 --final-samples 10000000 --seed 0"
    assert _quick(big) == big  # output shown on the page: sizes as written
    assert _quick(big, checked=False) == (
        "dpaudit audit laplace --samples 20000 --final-samples 200000 --seed 0"
    )


def _every_dpaudit_command() -> list:
    """Every ``dpaudit`` command of every shell block, marked not-run or not."""
    found = []
    for page in PAGES:
        for block in fences(page.read_text(encoding="utf-8")):
            for command, _ in _commands(block.code) if block.lang in SHELL else []:
                words = shlex.split(command)
                if words and Path(words[0]).name == "dpaudit":
                    found.append(pytest.param(words[1:], id=f"{page.name}: {command[:70]}"))
    return found


@pytest.mark.parametrize("argv", _every_dpaudit_command())
def test_every_dpaudit_command_parses(argv: list[str]) -> None:
    """Even the examples no test can run name real commands and options (the CLI's parser)."""
    from dpaudit.cli.main import build_parser

    try:
        build_parser().parse_args(argv)
    except SystemExit as refused:
        pytest.fail(f"dpaudit {' '.join(argv)} does not parse (exit {refused.code})")
