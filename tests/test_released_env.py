"""The released-package tests, run in their own environment ``.venv-released``.

privfill's DP-Prompt needs transformers < 5 (it builds a ``text2text-generation``
pipeline), so the released ``dpmlm`` and ``privfill`` packages cannot share the
main environment.  ``.ci/run`` creates ``.venv-released`` (extra ``released-lm``);
this test runs ``tests/test_adapter_released_lm.py`` there by subprocess and is
skipped, with the reason, where that environment does not exist.
"""

from __future__ import annotations

import pytest
from _environments import run_in_environment

CREATE = (
    "python3 -m venv .venv-released && .venv-released/bin/pip install 'torch==2.13.0' "
    "&& .venv-released/bin/pip install -e '.[released-lm]' pytest"
)


@pytest.mark.slow  # runs another environment's test file by subprocess
def test_released_package_tests_in_their_environment() -> None:
    run_in_environment(
        ".venv-released",
        "import dpaudit.adapters.released_lm as r; r.import_released('dpmlm')",
        ("tests/test_adapter_released_lm.py",),
        f"{CREATE}; .ci/run does",
    )
