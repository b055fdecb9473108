"""The released-package tests, run in their own environment ``.venv-released``.

privfill's DP-Prompt needs transformers < 5 (it builds a ``text2text-generation``
pipeline), so the released ``dpmlm`` and ``privfill`` packages cannot share the
main environment.  ``.ci/run`` creates ``.venv-released`` (extra ``released-lm``);
this test runs ``tests/test_adapter_released_lm.py`` there by subprocess and is
skipped, with the reason, where that environment does not exist.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYTHON = ROOT / ".venv-released" / "bin" / "python"
CREATE = (
    "python3 -m venv .venv-released && .venv-released/bin/pip install 'torch==2.13.0' "
    "&& .venv-released/bin/pip install -e '.[released-lm]' pytest"
)


@pytest.mark.slow  # runs another environment's test file by subprocess
def test_released_package_tests_in_their_environment() -> None:
    if Path(sys.prefix).resolve() == (ROOT / ".venv-released").resolve():
        pytest.skip("already in .venv-released: tests/test_adapter_released_lm.py runs here")
    if not PYTHON.exists():
        pytest.skip(f".venv-released does not exist (create it: {CREATE}; .ci/run does)")
    probe = subprocess.run(
        [str(PYTHON), "-c", "import dpaudit.adapters.released_lm as r; r.import_released('dpmlm')"],
        capture_output=True, text=True, timeout=300, check=False, cwd=ROOT,
    )  # fmt: skip
    if probe.returncode != 0:
        reason = (probe.stderr.strip().splitlines() or ["?"])[-1]
        pytest.skip(f".venv-released cannot import dpmlm/dpaudit ({reason}); recreate: {CREATE}")
    run = subprocess.run(
        [str(PYTHON), "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "tests/test_adapter_released_lm.py"],
        cwd=ROOT, capture_output=True, text=True, timeout=1200, check=False,
    )  # fmt: skip
    assert run.returncode == 0, (run.stdout + run.stderr)[-6000:]
    assert " passed" in run.stdout, run.stdout[-2000:]
