"""DPText's support argument (Habernal, ACL 2022, Thm. 3.2), checked by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.analysis.dptext import NAN_POLICIES, dptext_noise_below, support_witness
from dpaudit.errors import DPAuditError
from dpaudit.mechanisms import make_mechanism


@pytest.mark.parametrize("policy", NAN_POLICIES)
def test_separating_set_probabilities_by_simulation(policy: str) -> None:
    mech = make_mechanism("dptext", epsilon=1.0, dim=2, nan_policy=policy)
    x, xp = np.zeros(2), np.ones(2)
    sep = support_witness(x, xp, mech.scale, policy)
    assert sep is not None
    n = 50_000
    y = mech.sample(x, n, np.random.default_rng(12))
    yp = mech.sample(xp, n, np.random.default_rng(13))
    in_s = y[:, sep.coordinate] < sep.threshold
    in_s_prime = yp[:, sep.coordinate] < sep.threshold
    # Never reachable from x': the noise is never negative.
    assert not in_s_prime.any()
    # Reachable from x with the exact probability: binomial, 5 standard errors.
    p = sep.prob_low
    assert 0 < p < 1
    assert abs(in_s.mean() - p) < 5 * math.sqrt(p * (1 - p) / n)


def test_closed_forms() -> None:
    b, d = 2.0, 1.0
    assert dptext_noise_below(d, b, "zero") == pytest.approx(1 - 0.5 * math.exp(-0.5))
    assert dptext_noise_below(d, b, "discard") == pytest.approx(1 - math.exp(-0.5))
    assert dptext_noise_below(d, b, "keep") == pytest.approx(0.5 * (1 - math.exp(-0.5)))
    assert dptext_noise_below(0.0, b, "zero") == 0.0


def test_witness_orientation_and_equal_inputs() -> None:
    sep = support_witness(np.array([1.0, 0.2]), np.array([0.0, 0.3]), 1.0, "zero")
    assert sep.coordinate == 0 and sep.low_input == (0.0, 0.3) and sep.threshold == 1.0
    assert support_witness(np.ones(2), np.ones(2), 1.0, "zero") is None
    with pytest.raises(DPAuditError, match="nan_policy"):
        dptext_noise_below(1.0, 1.0, "bogus")
