"""Closed forms of randomised response and unary encoding (Wang et al. 2017)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.analysis.randomized_response import (
    grr_probabilities,
    log_ratio,
    max_abs_log_ratio,
    oue_probabilities,
    rr_keep_probability,
    sue_probabilities,
    unary_block_loss,
)
from dpaudit.errors import DPAuditError


@pytest.mark.parametrize("epsilon", [1e-3, 0.5, 1.0, 5.0, 20.0])
def test_probabilities_give_exactly_epsilon(epsilon: float) -> None:
    p = rr_keep_probability(epsilon)
    # 1 − p loses relative precision as p → 1; 1e-7 is ample up to ε = 20.
    assert log_ratio(p, 1 - p) == pytest.approx(epsilon, rel=1e-7)
    for k in (2, 3, 10, 1000):
        p, q = grr_probabilities(epsilon, k)
        assert p + (k - 1) * q == pytest.approx(1.0, rel=1e-12)
        assert log_ratio(p, q) == pytest.approx(epsilon, rel=1e-9)
    p, q = sue_probabilities(epsilon)
    assert p + q == pytest.approx(1.0)
    assert unary_block_loss(p, q) == pytest.approx(epsilon, rel=1e-9)
    p, q = oue_probabilities(epsilon)
    assert p == 0.5
    assert unary_block_loss(p, q) == pytest.approx(epsilon, rel=1e-9)


def test_huge_epsilon_gives_infinite_float_loss_not_an_error() -> None:
    # At ε = 800, q underflows to 0: the floating-point sampler never emits those outputs.
    assert log_ratio(*grr_probabilities(800.0, 3)) == math.inf
    assert unary_block_loss(*sue_probabilities(800.0)) == math.inf
    assert unary_block_loss(*oue_probabilities(800.0)) == math.inf


def test_textbook_values() -> None:
    e = math.e
    assert rr_keep_probability(1.0) == pytest.approx(e / (1 + e))
    assert grr_probabilities(1.0, 4) == pytest.approx((e / (e + 3), 1 / (e + 3)))
    assert sue_probabilities(2.0) == pytest.approx((e / (1 + e), 1 / (1 + e)))
    assert oue_probabilities(1.0) == pytest.approx((0.5, 1 / (e + 1)))


def test_max_abs_log_ratio() -> None:
    with np.errstate(divide="ignore"):
        a = np.log([0.5, 0.25, 0.25, 0.0])
        b = np.log([0.25, 0.25, 0.5, 0.0])
        assert max_abs_log_ratio(a, b) == pytest.approx(math.log(2))
        assert max_abs_log_ratio(np.log([1.0, 0.0]), np.log([0.5, 0.5])) == math.inf


def test_bad_input() -> None:
    with pytest.raises(DPAuditError, match="epsilon"):
        grr_probabilities(0.0, 3)
    with pytest.raises(DPAuditError, match="k"):
        grr_probabilities(1.0, 1)
