"""The dp-transformers tests, run in their own environment ``.venv-dpt``.

dp-transformers 1.0.0 pins ``torch<=1.12.1`` (no wheel for this Python) and runs only on
transformers < 4.29 (its callbacks need Opacus' optimizer, not Accelerate's wrapper), so it
cannot share the main environment: ``.venv-dpt`` (extra ``dp-transformers``, the package
itself with ``--no-deps``).  This test runs ``tests/test_adapter_dp_transformers.py`` there
by subprocess and is skipped, with the reason, where that environment does not exist.
``.ci/run`` does not create it: with it, the CI run measured 1167 s of its 1200 s limit
(2026-12-02; about 60 s of install and 50 s of this test on one worker).
"""

from __future__ import annotations

import pytest
from _environments import run_in_environment

MODULE = "dpaudit.mechanisms.training.dp_transformers_lm"
CREATE = (
    "python3 -m venv .venv-dpt && .venv-dpt/bin/pip install 'torch==2.13.0' && "
    ".venv-dpt/bin/pip install -e '.[dp-transformers]' pytest && "
    ".venv-dpt/bin/pip install --no-deps dp-transformers==1.0.0"
)


@pytest.mark.slow  # runs another environment's test file by subprocess
def test_dp_transformers_tests_in_their_environment() -> None:
    run_in_environment(
        ".venv-dpt",
        f"import dp_transformers.dp_utils, {MODULE}",
        ("tests/test_adapter_dp_transformers.py",),
        CREATE,
        allow_skips=False,
    )


def test_without_the_package_the_cli_says_how_to_make_its_environment(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import importlib.util

    from _cli import run_cli_quiet

    if importlib.util.find_spec("dp_transformers") is not None:
        pytest.skip("dp-transformers is installed here")
    code, out, err = run_cli_quiet(capsys, "audit-training", "dp-transformers")
    assert code == 2 and not out
    assert ".venv-dpt" in err and "--no-deps dp-transformers==1.0.0" in err
