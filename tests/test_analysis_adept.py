"""ADePT's analytic facts (Habernal, EMNLP 2021) computed by the tool, checked by brute force."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.analysis.adept import box_contains, paper_counterexample_pair
from dpaudit.errors import DPAuditError
from dpaudit.mechanisms import make_mechanism


def test_paper_counterexample_gives_four_thirds_epsilon() -> None:
    # Sec. 4: n = 2, r = ±(2C/3, 2C/3) — loss (8C/3)/(2C/ε) = (4/3)ε, for any C and ε.
    for bound, eps in [(1.0, 1.0), (10.0, 0.3), (0.5, 4.0)]:
        mech = make_mechanism("adept", epsilon=eps, dim=2, bound=bound)
        r1, r2 = paper_counterexample_pair(2, bound)
        assert np.linalg.norm(r1) < bound  # inside the ball: clipping leaves it unchanged
        loss = mech.privacy_loss(r1, r2)
        assert loss == pytest.approx(4.0 / 3.0 * eps, rel=1e-12)
        extra = mech.analysis_extras()["paper_counterexample"]
        assert extra["pair"].epsilon_lower_bound == pytest.approx(loss)
        assert extra["l1_distance"] == pytest.approx(8.0 * bound / 3.0)
        assert extra["loss_over_epsilon"] == pytest.approx(4.0 / 3.0)


def test_true_epsilon_is_sqrt_n_times_epsilon() -> None:
    for n in (1, 2, 3, 16, 128):
        mech = make_mechanism("adept", epsilon=0.5, dim=n, bound=3.0)
        truth = mech.truth()
        assert truth.true_epsilon == pytest.approx(math.sqrt(n) * 0.5, rel=1e-12)
        assert truth.true_sensitivity == pytest.approx(2 * 3.0 * math.sqrt(n), rel=1e-12)
        assert truth.violates(mech.claim) == (n > 1)
        assert mech.privacy_loss(truth.witness.x, truth.witness.x_prime) == pytest.approx(
            truth.true_epsilon
        )


def test_brute_force_pairs_on_the_circle_never_exceed_truth() -> None:
    mech = make_mechanism("adept", epsilon=1.0, dim=2, bound=1.0)
    angles = np.linspace(0, 2 * np.pi, 721)
    ring = 5.0 * np.column_stack([np.cos(angles), np.sin(angles)])  # clipped onto the circle
    clipped = mech.clip(ring)
    losses = np.abs(clipped[:, None, :] - clipped[None, :, :]).sum(axis=2) / mech.scale
    # The vectorised losses are the mechanism's own pairwise losses.
    for i, j in [(0, 100), (90, 450), (700, 3)]:
        assert mech.privacy_loss(ring[i], ring[j]) == pytest.approx(losses[i, j], rel=1e-12)
    assert losses.max() <= mech.truth().true_epsilon * (1 + 1e-12)
    assert losses.max() == pytest.approx(math.sqrt(2), rel=1e-9)  # grid has the diagonals


@pytest.mark.parametrize("name", ["adept", "adept-l1", "adept-fixed-scale", "adept-acl22"])
def test_pair_loss_equals_max_log_density_ratio_on_a_grid(name: str) -> None:
    """sup_y |ln p(y|x) − ln p(y|x')| by brute force over a 2-D output grid."""
    params = {} if name == "adept-acl22" else {"bound": 1.0}
    mech = make_mechanism(name, epsilon=1.0, dim=2, **params)
    x, xp = (np.array([0.9, 0.1]), np.array([0.2, 0.7]))
    axis = np.linspace(-8, 8, 321)
    y = np.array(np.meshgrid(axis, axis)).reshape(2, -1).T
    brute = np.abs(mech.log_prob(x, y) - mech.log_prob(xp, y)).max()
    # The supremum is attained on whole quadrants beyond both centres, which the grid covers.
    assert mech.privacy_loss(x, xp) == pytest.approx(brute, rel=1e-9)


def test_remedies_are_exact() -> None:
    for name in ("adept-l1", "adept-fixed-scale"):
        for n in (1, 2, 50):
            mech = make_mechanism(name, epsilon=0.8, dim=n)
            truth = mech.truth()
            assert truth.true_epsilon == pytest.approx(0.8, rel=1e-12)
            assert not truth.violates(mech.claim)


def test_acl22_variant_true_epsilon_is_n_epsilon() -> None:
    for n in (1, 2, 8, 128):
        mech = make_mechanism("adept-acl22", epsilon=0.5, dim=n)
        truth = mech.truth()
        assert truth.true_epsilon == pytest.approx(n * 0.5, rel=1e-12)
        assert truth.violates(mech.claim) == (n > 1)


def test_finite_box_domain() -> None:
    # A box containing ±C/√n·1 keeps the exact answer; one that cuts the ball has none.
    mech = make_mechanism("adept", epsilon=1.0, dim=2, domain="-1,1")
    assert mech.truth().true_epsilon == pytest.approx(math.sqrt(2))
    assert make_mechanism("adept", epsilon=1.0, dim=2, domain="0,1").truth() is None
    assert box_contains(-1, 1, np.array([[0.5, -0.5]]))
    assert not box_contains(0, 1, np.array([[0.5, -0.5]]))


def test_counterexample_needs_two_dimensions() -> None:
    with pytest.raises(DPAuditError, match="dim"):
        paper_counterexample_pair(1, 1.0)
    assert make_mechanism("adept", epsilon=1.0, dim=1).analysis_extras() == {}
