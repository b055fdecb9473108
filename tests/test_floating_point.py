"""Floating-point awareness: numpy's textbook Laplace leaks through its low mantissa bits."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.mechanisms import make_mechanism
from dpaudit.mechanisms.textbook_float_laplace import float_bit_features
from dpaudit.testing import PrivacyViolationError, assert_no_violation

N = 1_000_000


def _support_event(y: np.ndarray) -> np.ndarray:
    """|y| < 0.5 with last mantissa bit 1: reachable from x = 0, never from x = 1."""
    v = y.reshape(-1)
    return (np.abs(v) < 0.5) & ((v.view(np.uint64) & np.uint64(1)) == 1)


def test_textbook_float_laplace_has_a_support_mismatch() -> None:
    mech = make_mechanism("textbook-float-laplace", epsilon=0.1)
    from_0 = _support_event(mech.sample(0.0, N, np.random.default_rng(0))).mean()
    from_1 = _support_event(mech.sample(1.0, N, np.random.default_rng(1))).sum()
    assert from_1 == 0  # exact: 1 + n for n in (-1.5, -0.5) is a multiple of 2^-53
    # Under x = 0: P(|Lap(10)| < 0.5) · 1/2 ≈ 0.0244 · 0.78 (measured ≈ 0.019); 5 binomial SEs.
    p = 0.019
    assert abs(from_0 - p) < 5 * math.sqrt(p * (1 - p) / N) + 0.001
    assert math.isinf(mech.truth().true_epsilon)


@pytest.mark.slow  # a full audit at 50 000 samples; the support mismatch is checked quickly above
def test_bit_features_let_the_unchanged_auditor_find_it() -> None:
    mech = make_mechanism("textbook-float-laplace", epsilon=0.1, features="bits")
    with pytest.raises(PrivacyViolationError) as info:
        assert_no_violation(mech, samples=50_000, train_samples=50_000)
    # The MLP finds the (near) zero-count set: the bound is limited by the sample size
    # (ln of 100,000 final samples ≈ 11.5), far above the claimed 0.1 and DP-Sniper's 0.25.
    assert info.value.result.epsilon_lower_bound > 4.0
    assert info.value.witness.p2.hits <= 3


def test_snapping_fix_is_not_flagged_even_with_bit_features() -> None:
    mech = make_mechanism(
        "textbook-float-laplace", epsilon=0.1, features="bits", variant="snapping"
    )
    result = assert_no_violation(mech, samples=20_000)
    assert result.epsilon_lower_bound <= 0.1
    assert make_mechanism("textbook-float-laplace", epsilon=0.1, variant="snapping").truth() is None


def test_snapping_outputs_lie_on_the_power_of_two_grid_within_the_bound() -> None:
    mech = make_mechanism("textbook-float-laplace", epsilon=0.1, variant="snapping")
    assert mech.snapping_grid == 16.0  # smallest power of two >= 10·(1 + 100·2^-49)
    y = mech.sample(0.3, 50_000, np.random.default_rng(2))
    assert np.all(np.abs(y) <= 100.0)
    on_grid = (y % 16.0 == 0) | (np.abs(y) == 100.0)
    assert np.all(on_grid)


def test_float_bit_features() -> None:
    y = np.array([[1.0], [np.nextafter(1.0, 2.0)], [-0.75], [2.0**-1074]])
    f = float_bit_features(y)
    assert f.shape == (4, 2)
    assert np.array_equal(f[:, 0], y[:, 0])
    assert f[:, 1].tolist() == [0.0, 1.0, 0.0, 1.0]


def test_textbook_value_output_is_plain_laplace_scale() -> None:
    mech = make_mechanism("textbook-float-laplace", epsilon=0.1)
    y = mech.sample(0.0, N, np.random.default_rng(3))
    # E|Lap(10)| = 10 with SD 10: 5 standard errors.
    assert abs(np.abs(y).mean() - 10.0) < 5 * 10.0 / math.sqrt(N)
    assert mech.claim.describe() == "0.1-DP on [0, 1]^1, assumed L1 sensitivity 1"
