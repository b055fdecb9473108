"""The code base stays ruff-clean (rules in pyproject.toml).

Only dpaudit's own files are checked: in a git checkout the Python files git
tracks, so a script a user writes beside the code (the README's ``mymod.py``)
never turns the suite red; outside git (an unpacked sdist) the shipped
directories ``src/``, ``tests/`` and ``benchmarks/``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: What is linted when ROOT is not a git checkout: the directories dpaudit ships.
SHIPPED = ("src", "tests", "benchmarks")


def tracked_python_files(root: Path) -> list[str] | None:
    """The ``.py`` files git tracks under ``root`` (relative paths), or None outside git."""
    git = shutil.which("git")
    if git is None:
        return None
    top = subprocess.run(
        [git, "-C", str(root), "rev-parse", "--show-toplevel"], capture_output=True, text=True
    )
    # Only root's own repository counts: an sdist unpacked inside another checkout is not one.
    if top.returncode != 0 or Path(top.stdout.strip()).resolve() != root.resolve():
        return None
    listed = subprocess.run(
        [git, "-C", str(root), "ls-files", "-z", "--", "*.py"], capture_output=True, text=True
    )
    if listed.returncode != 0:
        return None
    # A tracked file deleted in the work tree is not there to lint.
    return [p for p in listed.stdout.split("\0") if p and (root / p).is_file()]


def lint_targets(root: Path) -> list[str]:
    """What ``ruff check`` is given: git's tracked files, else the shipped directories."""
    tracked = tracked_python_files(root)
    if tracked is not None:
        return tracked
    return [d for d in SHIPPED if (root / d).is_dir()]


def test_ruff_clean() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    if not Path(ruff).exists():
        pytest.skip("ruff is not installed (pip install 'dpaudit[test]')")
    targets = lint_targets(ROOT)
    assert targets, "nothing to lint"
    # --force-exclude: the exclusions in pyproject.toml hold for files named one by one too.
    proc = subprocess.run(
        [ruff, "check", "--force-exclude", *targets], cwd=ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_untracked_user_script_is_not_linted(tmp_path: Path) -> None:
    """In a checkout only tracked files are linted; outside git, the shipped directories."""
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "checkout"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "ok.py").write_text("x = 1\n")
    subprocess.run([git, "init", "-q", str(repo)], check=True)
    subprocess.run([git, "-C", str(repo), "add", "src/ok.py"], check=True)
    (repo / "mymod.py").write_text("import os,sys\n")  # a user's script, never added
    assert lint_targets(repo) == ["src/ok.py"]
    plain = tmp_path / "sdist"
    (plain / "src").mkdir(parents=True)
    (plain / "mymod.py").write_text("import os,sys\n")
    assert lint_targets(plain) == ["src"]
