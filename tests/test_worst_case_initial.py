"""Worst-case initial parameters (Annamalai & De Cristofaro, NeurIPS 2024) for the trainers."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from dpaudit.auditors.training.canaries import draw_canaries
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.training.dpsgd import DPSGD, TrainedModel
from dpaudit.mechanisms.training.initial import PRETRAIN_L2, pretrained_logistic


def test_the_pretraining_fit_is_the_stationary_point_of_its_objective() -> None:
    # First-order condition of mean logistic loss + λ/2·‖(w, b)‖² (a closed form check).
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 12)) / 4
    y = (x @ rng.normal(size=12) + 0.3 * rng.normal(size=400) > 0).astype(float)
    w, b = pretrained_logistic(x, y)
    residual = expit(x @ w + b) - y
    assert np.max(np.abs(x.T @ residual / 400 + PRETRAIN_L2 * w)) < 1e-9
    assert abs(residual.mean() + PRETRAIN_L2 * b) < 1e-9


def test_pretrained_start_is_fitted_fixed_and_shared_by_both_worlds() -> None:
    zero = DPSGD(steps=1)
    warm = DPSGD(steps=1, initial="pretrained")
    assert not np.any(zero.initial_parameters)
    theta = warm.initial_parameters
    assert not np.any(theta[warm.dimensions + 1 :])  # canary coordinates start at zero
    assert warm.accuracy(TrainedModel(np.array(theta), None)) > 0.75  # zeros: 0.5
    # θ₀ depends on the base records only, never on the dataset a run trains on.
    canary = draw_canaries("mislabelled", 2, warm.base, np.random.default_rng(1)).records[0]
    with_canary = warm.combine(warm.base, [canary])
    assert warm.initial_parameters is theta
    np.testing.assert_array_equal(DPSGD(steps=1, initial="pretrained").initial_parameters, theta)
    # A run is still a deterministic function of its generator.
    a = warm.train(with_canary, np.random.default_rng(5)).parameters
    b = warm.train(with_canary, np.random.default_rng(5)).parameters
    np.testing.assert_array_equal(a, b)


def test_an_unknown_initialisation_is_refused_by_name() -> None:
    with pytest.raises(InvalidArgumentError, match="initial"):
        DPSGD(initial="best")


def _separation(initial: str) -> float:
    """(mean_in − mean_out)/pooled std of a mislabelled canary's final-model score."""
    base = DPSGD().base
    drawn = draw_canaries("mislabelled", 2, base, np.random.default_rng(45))
    trainer = DPSGD(
        records=drawn.base, white_box=False, initial=initial, sampling_rate=1.0, steps=20
    )
    canary = drawn.records[0]
    scores = []
    for included in (False, True):
        data = trainer.combine(trainer.base, [canary] if included else [])
        runs = np.random.default_rng(int(included)).spawn(300)
        scores.append(np.array([trainer.score(trainer.train(data, g), [canary])[0] for g in runs]))
    out, inside = scores
    return float((inside.mean() - out.mean()) / np.sqrt((out.var() + inside.var()) / 2))


def test_a_pretrained_start_separates_the_canary_more_in_the_final_model() -> None:
    # Full-batch DP-SGD, σ = 1, T = 20: the sum of the canary's clipped steps over the noise
    # has μ = √20 ≈ 4.47, which a final-model score can at best reach.  Measured (seeds as
    # here, 2026-12-02): zeros 2.41, pretrained 3.36.  The standard error of each estimate
    # at 300 runs per world is about √(2/300 + μ²/1200) ≈ 0.13, so the ordering below and
    # the margin (0.5, about 3 standard errors of the difference) cannot come from noise.
    zero, warm = _separation("zeros"), _separation("pretrained")
    assert warm > zero + 0.5
    assert warm < np.sqrt(20) + 0.5  # never above what the white-box sum shows


def test_opacus_starts_from_the_same_fit_split_over_its_two_logits() -> None:
    pytest.importorskip("opacus")
    from dpaudit.mechanisms.training.opacus_classifier import OpacusClassifier

    warm = OpacusClassifier(initial="pretrained", epochs=1, learning_rate=1e-6)
    weight, bias = warm.initial_text_layer
    reference = DPSGD(initial="pretrained").initial_parameters
    np.testing.assert_allclose(weight[1] - weight[0], reference[:256], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bias[1] - bias[0], reference[256], rtol=1e-5, atol=1e-6)
    # With a vanishing learning rate the released layer is θ₀ itself.
    model = warm.train(warm.combine(warm.base, []), np.random.default_rng(0))
    np.testing.assert_allclose(model.weight, weight, atol=1e-4)
    assert not np.any(OpacusClassifier(epochs=1).initial_text_layer[0])
