"""The mldp-text adapter's tests, run in mldp-text's own environment ``.venv-mldp``.

mldp-text pins numpy < 2 and scipy < 1.13, so it cannot share the main
environment (extra ``all``).  ``.ci/run`` creates ``.venv-mldp`` (extra
``mldp``); this test runs ``tests/test_adapter_mldp.py`` and ``tests/test_mldp_exact.py``
there by subprocess,
and is skipped — with the reason — where that environment does not exist.
"""

from __future__ import annotations

import pytest
from _environments import run_in_environment

from dpaudit.adapters import word_adapter
from dpaudit.adapters._support import library_available
from dpaudit.errors import OptionalDependencyError

CREATE = "python3 -m venv .venv-mldp && .venv-mldp/bin/pip install -e '.[mldp,test]'"


@pytest.mark.slow  # runs another environment's test file by subprocess
def test_mldp_adapter_tests_in_their_environment() -> None:
    run_in_environment(
        ".venv-mldp",
        "from dpaudit.adapters.mldp import import_mldp; import_mldp()",
        ("tests/test_adapter_mldp.py", "tests/test_mldp_exact.py"),
        f"{CREATE}; .ci/run does",
    )


def test_mldp_names_its_extra_when_missing() -> None:
    if library_available("mldp_text"):
        pytest.skip("mldp-text is installed here")
    factory = word_adapter("mldp:tem")
    assert factory is not None and word_adapter("mymodule:fn") is None
    with pytest.raises(OptionalDependencyError, match=r"dpaudit\[mldp\]"):
        factory(epsilon="1")
