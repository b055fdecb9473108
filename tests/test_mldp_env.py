"""The mldp-text adapter's tests, run in mldp-text's own environment ``.venv-mldp``.

mldp-text pins numpy < 2 and scipy < 1.13, so it cannot share the main
environment (extra ``all``).  ``.ci/run`` creates ``.venv-mldp`` (extra
``mldp``); this test runs ``tests/test_adapter_mldp.py`` and ``tests/test_mldp_exact.py``
there by subprocess,
and is skipped — with the reason — where that environment does not exist.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dpaudit.adapters import word_adapter
from dpaudit.adapters._support import library_available
from dpaudit.errors import OptionalDependencyError

ROOT = Path(__file__).resolve().parents[1]
MLDP_PYTHON = ROOT / ".venv-mldp" / "bin" / "python"
CREATE = "python3 -m venv .venv-mldp && .venv-mldp/bin/pip install -e '.[mldp,test]'"


@pytest.mark.slow  # runs another environment's test file by subprocess
def test_mldp_adapter_tests_in_their_environment() -> None:
    if Path(sys.prefix).resolve() == (ROOT / ".venv-mldp").resolve():
        pytest.skip("already in .venv-mldp: tests/test_adapter_mldp.py runs here directly")
    if not MLDP_PYTHON.exists():
        pytest.skip(f".venv-mldp does not exist (create it: {CREATE}; .ci/run does)")
    probe = subprocess.run(
        [str(MLDP_PYTHON), "-c", "from dpaudit.adapters.mldp import import_mldp; import_mldp()"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if probe.returncode != 0:
        reason = (probe.stderr.strip().splitlines() or ["?"])[-1]
        pytest.skip(f".venv-mldp cannot import mldp_text/dpaudit ({reason}); recreate: {CREATE}")
    run = subprocess.run(
        [
            str(MLDP_PYTHON),
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/test_adapter_mldp.py",
            "tests/test_mldp_exact.py",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert run.returncode == 0, (run.stdout + run.stderr)[-6000:]
    assert " passed" in run.stdout, run.stdout[-2000:]


def test_mldp_names_its_extra_when_missing() -> None:
    if library_available("mldp_text"):
        pytest.skip("mldp-text is installed here")
    factory = word_adapter("mldp:tem")
    assert factory is not None and word_adapter("mymodule:fn") is None
    with pytest.raises(OptionalDependencyError, match=r"dpaudit\[mldp\]"):
        factory(epsilon="1")
