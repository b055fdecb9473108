"""Run test files inside another environment of the checkout (``.venv-mldp``, ...).

Packages whose pins clash with the main environment's get their own (``.ci/run`` creates
some of them); a test in the main suite runs their test files there by subprocess, or skips
saying why: already inside it, not created (with the command that creates it), or unable
to import what it needs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run_in_environment(
    name: str, probe: str, test_files: tuple[str, ...], create: str, allow_skips: bool = True
) -> None:
    """Run ``test_files`` with ``ROOT/name``'s Python after ``probe`` imports; assert a pass
    (and, unless ``allow_skips``, that none of them skipped)."""
    python = ROOT / name / "bin" / "python"
    if Path(sys.prefix).resolve() == (ROOT / name).resolve():
        pytest.skip(f"already in {name}: {', '.join(test_files)} run here directly")
    if not python.exists():
        pytest.skip(f"{name} does not exist (create it: {create})")
    checked = subprocess.run(
        [str(python), "-c", probe],
        capture_output=True, text=True, timeout=300, check=False, cwd=ROOT,
    )  # fmt: skip
    if checked.returncode != 0:
        reason = (checked.stderr.strip().splitlines() or ["?"])[-1]
        pytest.skip(f"{name} cannot run `{probe}` ({reason}); recreate: {create}")
    run = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *test_files],
        cwd=ROOT, capture_output=True, text=True, timeout=1200, check=False,
    )  # fmt: skip
    assert run.returncode == 0, (run.stdout + run.stderr)[-6000:]
    assert " passed" in run.stdout, run.stdout[-2000:]
    assert allow_skips or "skipped" not in run.stdout, run.stdout[-2000:]
