"""Building blocks of the rare-event proposer (src/dpaudit/audit/blackbox/rare.py)."""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.audit.blackbox.rare import beyond_support, repeated_values


def test_atom_at_1e3_inside_continuous_column_found() -> None:
    rng = np.random.default_rng(0)
    n = 100_000
    col = rng.laplace(0.5, 1.0, n)
    leak = rng.random(n) < 1e-3  # ~100 exact copies of the input 0.5
    col[leak] = 0.5
    assert repeated_values(col) == (0.5,)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_continuous_column_has_no_spurious_atom(seed: int) -> None:
    col = np.random.default_rng(seed).laplace(0.0, 1.0, 1_000_000)
    assert repeated_values(col) == ()


def test_discrete_column_left_to_the_ordinary_rule() -> None:
    col = np.random.default_rng(0).integers(0, 10, 10_000).astype(float)
    assert repeated_values(col) == ()


def test_beyond_support_counts_per_coordinate() -> None:
    b = np.array([[0.0, 0.0], [1.0, 1.0]])
    a = np.array([[2.0, 0.5], [-1.0, 0.5], [0.5, 0.5]])
    assert beyond_support(a, b).tolist() == [2, 0]


def test_min_repeats_checked() -> None:
    with pytest.raises(ValueError, match="min_repeats"):
        repeated_values(np.zeros(3), min_repeats=1)
