"""Outputs of any type: a reproducible encoding (same codes in processes with different
hash seeds), distinct values stay distinct, numbers keep their values; string and
structured outputs of broken mechanisms are flagged, of correct ones are not."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpaudit import AuditConfig, ExecutionConfig, audit_mechanism, progress
from dpaudit.adapters.encoding import encode_outputs, output_width, split
from dpaudit.claims import Definition, PrivacyClaim
from dpaudit.domains import Categories, Words
from dpaudit.errors import MechanismError
from dpaudit.testing import as_mechanism

VALUES: list[Any] = [
    None, True, False, 0, 1, 1.5, float("nan"), float("inf"), "a", "b", "", b"a",
    (1, "x"), (1, "y"), ("x", 1), [1, "x"], {"k": "v"}, {"k": "w"}, {"j": "v"},
    [{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}], frozenset({"p", "q"}),
    np.array(["u", "v"]), np.array([True, False]), np.array([[1, 2]]), np.array([1, 2]),
]  # fmt: skip
SRC = str(Path(__file__).resolve().parents[1] / "src")
SCRIPT = (
    "from dpaudit.adapters.encoding import split\n"
    "import numpy as np\n"
    "vals = [None, True, 'a', (1, 'x'), {'k': 'v', 'j': [1, 2]}, frozenset({'p', 'q'}),"
    " np.array(['u', 'v'])]\n"
    "print([split(v)[0].hex() for v in vals])\n"
)


def _codes_in_subprocess(hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": SRC}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True
    )
    return out.stdout


def test_codes_agree_across_processes_with_different_hash_seeds() -> None:
    assert _codes_in_subprocess("1") == _codes_in_subprocess("12345")


def test_distinct_values_stay_distinct_and_numbers_keep_values() -> None:
    rows = [tuple(encode_outputs([v], output_width(v))[0].tolist()) for v in VALUES]
    keys = [(r[0], *r[1:]) for r in rows]
    # 0/1/1.5 share the skeleton "#" and differ by value; everything else by its code
    assert len(set(keys)) == len(VALUES)
    assert split(1.5) == (split(0)[0], [1.5])
    assert split((3.0, "x"))[1] == [3.0]
    assert split(True)[1] == []  # booleans are categories, not numbers


def test_a_different_leaf_count_is_an_outcome_of_its_own() -> None:
    width = output_width([1.0, 2.0])
    a, b = encode_outputs([[1.0, 2.0], [1.0, 2.0, 3.0]], width)
    assert a[0] != b[0] and b[1:].tolist() == [0.0, 0.0]


def test_unencodable_output_names_its_type() -> None:
    with pytest.raises(MechanismError, match="object"):
        split(object())


EPS = 1.0
NAMES = ("alice", "bob", "carol")


def _audit(fn: Any, domain: Any, seed: int = 0) -> Any:
    progress.ENABLED = False
    mech = as_mechanism(fn, PrivacyClaim(Definition.PURE, EPS, domain))
    config = AuditConfig(samples=3_000, final_samples=6_000, seed=seed)
    return audit_mechanism(mech, config, ExecutionConfig(workers=1))


def name_rr(x: str, n: int, rng: np.random.Generator) -> list[str]:
    """k-ary RR on words, output a string: correct."""
    p = np.exp(EPS) / (np.exp(EPS) + len(NAMES) - 1)
    others = [w for w in NAMES if w != x]
    return [x if rng.random() < p else others[rng.integers(2)] for _ in range(n)]


def record_rr(x: str, n: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    """The same, returned as a record with a constant numeric field: correct."""
    return [{"name": w, "version": 2, "ok": True} for w in name_rr(x, n, rng)]


def name_leak(x: str, n: int, rng: np.random.Generator) -> list[str]:
    """Returns the true word with a rare suffix: 'alice!' never appears under 'bob'."""
    return [w + ("!" if w == x and rng.random() < 0.05 else "") for w in name_rr(x, n, rng)]


def record_leak(x: str, n: int, rng: np.random.Generator) -> list[tuple[str, int]]:
    """Structured output whose tuple leaks the input's length class: broken."""
    return [(w, len(x) if rng.random() < 0.3 else 0) for w in name_rr(x, n, rng)]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("fn", [name_rr, record_rr], ids=["string", "record"])
def test_correct_string_and_record_outputs_are_not_flagged(fn: Any, seed: int) -> None:
    r = _audit(fn, Words(NAMES), seed)
    assert not r.violation, (seed, r.epsilon_lower_bound)


@pytest.mark.parametrize("fn", [name_leak, record_leak], ids=["string", "tuple"])
def test_broken_string_and_structured_outputs_are_flagged(fn: Any) -> None:
    r = _audit(fn, Words(NAMES))
    assert r.violation and r.epsilon_lower_bound > EPS


def test_category_input_with_numpy_output_of_strings() -> None:
    def leak(x: str, n: int, rng: np.random.Generator) -> np.ndarray:
        return np.array([x] * n)  # deterministic: ε = ∞

    r = _audit(leak, Categories(("a", "b")))
    assert r.violation
