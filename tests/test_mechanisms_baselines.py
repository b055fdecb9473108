"""Baselines of the ACL 2022 sanity check: identity (true ε = ∞) and random-bits (true ε = 0)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.errors import DPAuditError
from dpaudit.mechanisms import make_mechanism

ALPHA = 1e-3  # chi-square p-value threshold at a fixed seed (fails 1 seed in 1000)


def test_identity_copies_and_has_zero_noise() -> None:
    mech = make_mechanism("identity", epsilon=1.0, dim=3)
    x = np.array([0.0, 0.25, 1.0])
    out = mech.sample(x, 7, np.random.default_rng(0))
    assert out.shape == (7, 3)
    np.testing.assert_array_equal(out, np.tile(x, (7, 1)))
    out[0, 0] = 9.0  # a copy, not a view of the input
    assert x[0] == 0.0
    u = np.random.default_rng(1).random((4, 3))
    np.testing.assert_array_equal(mech.noise_from_uniform(u), np.zeros((4, 3)))
    assert mech.is_additive


def test_identity_truth_and_losses() -> None:
    mech = make_mechanism("identity", epsilon=2.0, dim=2)
    truth = mech.truth()
    assert truth.true_epsilon == math.inf
    assert truth.violates(mech.claim)
    assert truth.witness is not None
    assert mech.privacy_loss(truth.witness.x, truth.witness.x_prime) == math.inf
    assert mech.privacy_loss([0.5, 0.5], [0.5, 0.5]) == 0.0
    lp = mech.log_prob([0.0, 1.0], np.array([[0.0, 1.0], [0.0, 0.5]]))
    assert lp[0] == 0.0 and lp[1] == -math.inf
    assert mech.known_flawed


def test_random_bits_uniform_over_patterns() -> None:
    mech = make_mechanism("random-bits", epsilon=1.0, dim=3)
    n = 40_000
    out = mech.sample([0.0, 1.0, 0.5], n, np.random.default_rng(2))
    assert out.shape == (n, 3)
    codes = out.astype(np.int64) @ np.array([4, 2, 1])
    counts = np.bincount(codes, minlength=8)
    assert stats.chisquare(counts).pvalue > ALPHA
    # Power: a 1-percentage-point bias in one pattern is rejected at this size.
    wrong = np.full(8, 1 / 8)
    wrong[0] += 0.01
    wrong[1] -= 0.01
    assert stats.chisquare(counts, n * wrong).pvalue < ALPHA


def test_random_bits_ignores_input() -> None:
    mech = make_mechanism("random-bits", epsilon=1.0, dim=4)
    a = mech.sample(np.zeros(4), 100, np.random.default_rng(3))
    b = mech.sample(np.ones(4), 100, np.random.default_rng(3))
    np.testing.assert_array_equal(a, b)
    truth = mech.truth()
    assert truth.true_epsilon == 0.0
    assert not truth.violates(mech.claim)
    patterns = np.array(list(itertools.product([0, 1], repeat=4)), dtype=float)
    lp = mech.log_prob(np.zeros(4), patterns)
    assert np.exp(lp).sum() == pytest.approx(1.0)
    assert mech.privacy_loss(np.zeros(4), np.ones(4)) == 0.0


@pytest.mark.parametrize("name", ["identity", "random-bits"])
@pytest.mark.parametrize(
    ("params", "argument"),
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": 1.0, "dim": 0}, "dim"),
        ({"epsilon": 1.0, "domain": "1,0"}, "domain"),
        ({"epsilon": 1.0, "bound": 1.0}, "bound"),
    ],
)
def test_bad_parameters(name: str, params: dict, argument: str) -> None:
    with pytest.raises(DPAuditError, match=argument):
        make_mechanism(name, **params)


@pytest.mark.parametrize("name", ["identity", "random-bits"])
@pytest.mark.parametrize("x", [[math.nan], [math.inf], [0.2, 0.3], [1.5]])
def test_bad_inputs(name: str, x: list[float]) -> None:
    with pytest.raises(DPAuditError, match="x"):
        make_mechanism(name, epsilon=1.0).sample(x, 2, np.random.default_rng(0))


def test_a_mechanism_without_a_name_fails_at_definition() -> None:
    from dataclasses import dataclass

    from dpaudit.mechanisms import Mechanism

    with pytest.raises(TypeError, match="has no name"):

        @dataclass(frozen=True)
        class Nameless(Mechanism):
            pass

    @dataclass(frozen=True)
    class Family(Mechanism, abstract=True):  # a family base may leave the name to its members
        pass

    assert Family.name == ""


def test_optional_hooks_are_declared_on_the_base_class() -> None:
    from dpaudit.mechanisms import Mechanism

    mech = make_mechanism("identity", epsilon=1.0, dim=2)
    assert Mechanism.externally_seeded is False and Mechanism.allows_nan_output is False
    assert mech.warning is None and mech.analysis_extras() == {}
    assert not mech.has_log_prob or callable(mech.log_prob)
