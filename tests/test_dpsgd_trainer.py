"""The built-in DP-SGD trainer: determinism, noise and inclusion statistics, each flaw.

Statistical checks use fixed seeds and tolerances of 5 standard errors of the statistic
tested (said at each check), so a correct trainer fails one with probability below 1e-6.
"""

from __future__ import annotations

import dataclasses
import math
import pickle
import time

import numpy as np
import pytest

from dpaudit.errors import InvalidArgumentError, InvalidTypeError
from dpaudit.mechanisms.training.contract import GradientCanary, TextRecord
from dpaudit.mechanisms.training.dpsgd import (
    DPSGD,
    FLAWS,
    TrainedModel,
    TrainingArrays,
    clipped_gradient_sum,
)

K = 1000  # canary coordinates (the default)


@pytest.fixture(scope="module")
def trainer() -> DPSGD:
    return DPSGD()


def _canaries(n: int = K, sign: float = 1.0) -> list[GradientCanary]:
    return [GradientCanary(j, sign) for j in range(n)]


def _canary_block(model: TrainedModel, mech: DPSGD) -> np.ndarray:
    """The (steps, K) privatised gradients on the canary coordinates."""
    assert model.gradients is not None
    return model.gradients[:, mech.dimensions + 1 :]


def test_deterministic_given_the_seed(trainer: DPSGD) -> None:
    data = trainer.combine(trainer.base, _canaries(10))
    a = trainer.train(data, np.random.default_rng(7))
    b = trainer.train(data, np.random.default_rng(7))
    c = trainer.train(data, np.random.default_rng(8))
    np.testing.assert_array_equal(a.parameters, b.parameters)
    assert a.gradients is not None and b.gradients is not None and c.gradients is not None
    np.testing.assert_array_equal(a.gradients, b.gradients)
    assert not np.array_equal(a.gradients, c.gradients)
    assert a.gradients.shape == (trainer.steps, trainer.parameter_count)


def test_absent_canary_score_is_centred_gaussian(trainer: DPSGD) -> None:
    """Absent: Σ_t N(0, σ²C²)/C ~ N(0, Tσ²).  Mean within 5 SE = 5√(Tσ²/K); sample variance
    within 5 SE = 5·Tσ²·√(2/(K − 1)) of Tσ² (its normal-theory standard error)."""
    model = trainer.train(trainer.combine(trainer.base, []), np.random.default_rng(1))
    scores = trainer.score(model, _canaries())
    var = trainer.steps * trainer.noise_multiplier**2
    assert abs(scores.mean()) < 5 * math.sqrt(var / K)
    assert abs(scores.var(ddof=1) - var) < 5 * var * math.sqrt(2 / (K - 1))


def test_included_canary_score_counts_poisson_inclusions(trainer: DPSGD) -> None:
    """Included: Bin(T, q) inclusions + N(0, Tσ²); mean T·q within 5 SE of the mean
    (variance Tq(1 − q) + Tσ² per canary)."""
    model = trainer.train(trainer.combine(trainer.base, _canaries()), np.random.default_rng(2))
    scores = trainer.score(model, _canaries())
    t, q, s = trainer.steps, trainer.sampling_rate, trainer.noise_multiplier
    se = math.sqrt((t * q * (1 - q) + t * s**2) / K)
    assert abs(scores.mean() - t * q) < 5 * se


def test_inclusion_counts_are_binomial_with_little_noise() -> None:
    """σ = 1e-6: scores are the inclusion counts, Bin(T, q): integer-valued, mean Tq and
    variance Tq(1 − q) within 5 SE; the SE of a sample variance is var·√((2 + κ)/(K − 1))
    with the binomial's excess kurtosis κ = (1 − 6q(1 − q))/(Tq(1 − q))."""
    mech = DPSGD(noise_multiplier=1e-6)
    model = mech.train(mech.combine(mech.base, _canaries()), np.random.default_rng(3))
    counts = mech.score(model, _canaries())
    np.testing.assert_allclose(counts, np.round(counts), atol=1e-3)
    t, q = mech.steps, mech.sampling_rate
    var = t * q * (1 - q)
    assert abs(counts.mean() - t * q) < 5 * math.sqrt(var / K)
    kurtosis = (1 - 6 * q * (1 - q)) / var
    assert abs(counts.var(ddof=1) - var) < 5 * var * math.sqrt((2 + kurtosis) / (K - 1))


def test_negative_sign_canaries_score_like_positive(trainer: DPSGD) -> None:
    data = trainer.combine(trainer.base, _canaries(K, -1.0))
    model = trainer.train(data, np.random.default_rng(4))
    plus, minus = trainer.score(model, _canaries()), trainer.score(model, _canaries(K, -1.0))
    np.testing.assert_allclose(plus, -minus)
    assert minus.mean() > 0


def test_reused_noise_is_the_same_every_step() -> None:
    mech = DPSGD(flaw="reused-noise")
    block = _canary_block(mech.train(mech.combine(mech.base, []), np.random.default_rng(5)), mech)
    assert np.all(block[0] != 0)
    np.testing.assert_array_equal(block[7] - block[3], 0.0)
    np.testing.assert_array_equal(block, np.broadcast_to(block[0], block.shape))


def test_unscaled_noise_has_variance_sigma_squared_not_sigma_squared_c_squared() -> None:
    """C = 10, σ = 1: each noise coordinate has variance σ² = 1 (flawed) or σ²C² = 100;
    checked within 5 SE of a sample variance of T·K = 200000 draws (√(2/n) relative)."""
    n = 200 * K
    tolerance = 5 * math.sqrt(2 / (n - 1))
    for flaw, expected in (("unscaled-noise", 1.0), ("none", 100.0)):
        mech = DPSGD(flaw=flaw, clip_norm=10.0)
        model = mech.train(mech.combine(mech.base, []), np.random.default_rng(6))
        block = _canary_block(model, mech)
        assert abs(block.var() / expected - 1) < tolerance, flaw
    true = DPSGD(flaw="unscaled-noise", clip_norm=10.0).true_event
    assert true is not None and true.noise_multiplier == pytest.approx(0.1)


def test_accumulation_leaves_three_of_four_steps_noise_free() -> None:
    mech = DPSGD(flaw="accumulation-without-noise", accumulation=4)
    block = _canary_block(mech.train(mech.combine(mech.base, []), np.random.default_rng(7)), mech)
    noisy = np.any(block != 0, axis=1)
    np.testing.assert_array_equal(noisy, (np.arange(mech.steps) + 1) % 4 == 0)
    assert noisy.sum() == mech.steps // 4
    # Every step still moves the (text) weights.
    model = mech.train(mech.combine(mech.base, []), np.random.default_rng(7))
    assert model.gradients is not None
    assert np.all(np.any(model.gradients[:, : mech.dimensions] != 0, axis=1))


def _pairs_and_one() -> tuple[TrainingArrays, TrainingArrays]:
    """Ten records whose gradients cancel in pairs (same text, labels 0 and 1), ± one more."""
    mech = DPSGD(records=(TextRecord("x", 0),))
    pairs = [TextRecord("good food", label) for label in (0, 1)] * 5
    odd = TextRecord("terrible slow service", 1)
    return mech.combine(tuple(pairs), []), mech.combine((*pairs, odd), [])


@pytest.mark.parametrize("per_example", [True, False])
def test_batch_clip_lets_one_record_move_the_sum_by_far_more_than_c(per_example: bool) -> None:
    """Per-example clipping bounds one record's effect on the sum by C; clipping the batch
    mean (then ×B) lets a record whose neighbours cancel move it by min(‖g‖, B·C) ≫ C."""
    without, with_one = _pairs_and_one()
    dims, clip = 256, 0.01
    theta = np.zeros(dims + 1 + K)

    def total(arrays: TrainingArrays) -> np.ndarray:
        rows = np.arange(arrays.labels.size)
        none = np.zeros(0, dtype=np.int64)
        return clipped_gradient_sum(arrays, theta, rows, none, dims, clip, per_example)

    moved = float(np.linalg.norm(total(with_one) - total(without)))
    if per_example:
        assert moved <= clip * (1 + 1e-12)
    else:
        assert moved == pytest.approx(11 * clip)  # B·C with B = 11: the mean clipped to C
        out = total(with_one)
        raw = clipped_gradient_sum(with_one, theta, np.arange(11), np.zeros(0, int), dims, 1e9)
        np.testing.assert_allclose(out / np.linalg.norm(out), raw / np.linalg.norm(raw))


def test_batch_clip_trains_and_bounds_each_step_by_batch_times_c() -> None:
    """σ tiny: every step's sum has norm ≤ B_t·C, B_t ≤ N (the whole dataset)."""
    mech = DPSGD(flaw="batch-clip", noise_multiplier=1e-9, clip_norm=0.05)
    data = mech.combine(mech.base, [])
    model = mech.train(data, np.random.default_rng(8))
    assert model.gradients is not None
    assert np.all(np.linalg.norm(model.gradients, axis=1) <= data.size * 0.05)
    assert mech.true_event is None


@pytest.mark.parametrize("setting", [{"flaw": "shuffle-as-poisson"}, {"sampling": "shuffle"}])
def test_shuffle_puts_each_record_in_exactly_one_batch_per_epoch(setting: dict) -> None:
    """Canaries only (N = 1000, q = 0.032): batches of round(qN) = 32, 32 steps per epoch
    (the last of 8), each canary's coordinate is C in exactly one step of each epoch."""
    mech = DPSGD(noise_multiplier=1e-9, **setting)
    model = mech.train(mech.combine((), _canaries()), np.random.default_rng(9))
    block = np.round(_canary_block(model, mech))
    per_epoch = math.ceil(K / round(mech.sampling_rate * K))
    assert per_epoch == 32
    for epoch in range(mech.steps // per_epoch):
        rows = block[epoch * per_epoch : (epoch + 1) * per_epoch]
        np.testing.assert_array_equal(rows.sum(axis=0), 1.0)
        np.testing.assert_array_equal(rows.sum(axis=1)[:-1], 32.0)
    assert mech.effective_sampling == "shuffle"
    assert mech.accountant.sampling == "poisson"
    assert mech.true_event is not None and mech.true_event.sampling == "shuffle"
    assert mech.claim == DPSGD(noise_multiplier=1e-9).claim


def test_wrong_rate_claims_less_than_the_truth() -> None:
    right, wrong = DPSGD(), DPSGD(flaw="wrong-rate")
    assert wrong.accountant.sampling_rate == pytest.approx(right.sampling_rate / 10)
    assert wrong.claim.epsilon < right.claim.epsilon
    true = wrong.true_event
    assert true is not None and true.epsilon(1e-5) == pytest.approx(right.claim.epsilon)
    explicit = DPSGD(flaw="wrong-rate", accounted_rate=0.002)
    assert explicit.accountant.sampling_rate == 0.002
    # Training itself is the correct one.
    data = right.combine(right.base, [])
    a, b = right.train(data, np.random.default_rng(1)), wrong.train(data, np.random.default_rng(1))
    np.testing.assert_array_equal(a.parameters, b.parameters)


def test_claim_is_the_accountants() -> None:
    mech = DPSGD()
    assert mech.claim == mech.accountant.approx_claim(1e-5)
    assert mech.accountant.sampling == "poisson"
    assert mech.true_event == mech.accountant
    for flaw in FLAWS:
        flawed = DPSGD(flaw=flaw)
        expected = mech.claim.epsilon if flaw != "wrong-rate" else None
        if expected is not None:
            assert flawed.claim.epsilon == expected, flaw


@pytest.mark.parametrize("flaw", FLAWS)
def test_every_flaw_trains_to_finite_outputs(flaw: str) -> None:
    mech = DPSGD(flaw=flaw, steps=20)
    model = mech.train(mech.combine(mech.base, _canaries(5)), np.random.default_rng(0))
    assert np.all(np.isfinite(model.parameters))
    assert np.all(np.isfinite(mech.score(model, [*mech.base[:3], *_canaries(5)])))


def test_classifier_learns(trainer: DPSGD) -> None:
    """σ = 1, flaw none: accuracy on the base data above 0.6 (measured 0.68-0.71, seeds 0-4)."""
    model = trainer.train(trainer.combine(trainer.base, []), np.random.default_rng(0))
    accuracy = trainer.accuracy(model)
    assert accuracy > 0.6


def test_text_scores_are_minus_the_logistic_loss(trainer: DPSGD) -> None:
    model = trainer.train(trainer.combine(trainer.base, []), np.random.default_rng(0))
    records = list(trainer.base[:20])
    scores = trainer.score(model, records)
    data = trainer.combine(tuple(records), [])
    z = data.features @ model.parameters[:256] + model.parameters[256]
    p = 1 / (1 + np.exp(-z))
    loss = -(data.labels * np.log(p) + (1 - data.labels) * np.log(1 - p))
    np.testing.assert_allclose(scores, -loss, rtol=1e-10)
    mixed = trainer.score(model, [records[0], GradientCanary(3), records[1]])
    assert mixed[0] == scores[0] and mixed[2] == scores[1]


def test_black_box_keeps_no_gradients() -> None:
    mech = DPSGD(white_box=False)
    assert mech.access == "black-box" and DPSGD().access == "white-box"
    model = mech.train(mech.combine(mech.base, _canaries(3)), np.random.default_rng(0))
    assert model.gradients is None
    assert mech.score(model, mech.base[:2]).shape == (2,)
    with pytest.raises(InvalidArgumentError, match="white_box=False"):
        mech.score(model, [GradientCanary(0)])


def test_text_canaries_join_the_text_rows(trainer: DPSGD) -> None:
    data = trainer.combine(trainer.base, [TextRecord("a canary sentence", 1), GradientCanary(2)])
    assert data.labels.size == len(trainer.base) + 1 and data.canary_index.tolist() == [259]
    model = trainer.train([*trainer.base[:50], TextRecord("hello", 0)], np.random.default_rng(0))
    assert model.parameters.shape == (trainer.parameter_count,)


def test_pickling_round_trip(trainer: DPSGD) -> None:
    data = trainer.combine(trainer.base, _canaries(4))  # fills the feature cache
    copy = pickle.loads(pickle.dumps(trainer))
    assert "_base_arrays" not in copy.__dict__
    a = trainer.train(data, np.random.default_rng(11))
    b = copy.train(copy.combine(copy.base, _canaries(4)), np.random.default_rng(11))
    np.testing.assert_array_equal(a.parameters, b.parameters)
    assert copy.claim == trainer.claim
    assert pickle.loads(pickle.dumps(a)).parameters.tolist() == a.parameters.tolist()


def test_spec_and_names(trainer: DPSGD) -> None:
    spec = trainer.spec()
    assert spec["mechanism"] == "dpsgd"
    assert spec["params"]["records"] == 1000 and spec["params"]["flaw"] == "none"
    assert "Alg. 1" in DPSGD.reference


def test_one_train_is_fast(trainer: DPSGD) -> None:
    """The speed bar: well under 2 s per train at the defaults with 1000 canaries."""
    data = trainer.combine(trainer.base, _canaries())
    start = time.perf_counter()
    trainer.train(data, np.random.default_rng(0))
    assert time.perf_counter() - start < 1.0


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("noise_multiplier", 0.0),
        ("clip_norm", -1.0),
        ("sampling_rate", 0.0),
        ("sampling_rate", 1.5),
        ("steps", 0),
        ("learning_rate", 0.0),
        ("dimensions", 1),
        ("canary_coordinates", -1),
        ("sampling", "uniform"),
        ("flaw", "typo"),
        ("accounted_rate", 2.0),
        ("accumulation", 0),
        ("delta", 0.0),
        ("delta", 1.0),
        ("records", ()),
        ("records", (("text", 2),)),
        ("records", (("text",),)),
    ],
)
def test_bad_fields_name_themselves(field: str, value: object) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        DPSGD(**{field: value})
    assert info.value.argument == field


@pytest.mark.parametrize(("field", "value"), [("white_box", "yes"), ("records", "text")])
def test_wrong_types_name_the_field(field: str, value: object) -> None:
    with pytest.raises(InvalidTypeError) as info:
        DPSGD(**{field: value})
    assert info.value.argument == field


@pytest.mark.parametrize(
    ("canary", "argument"), [(GradientCanary(K), "coordinate"), (GradientCanary(0, 0.5), "sign")]
)
def test_bad_canaries(trainer: DPSGD, canary: GradientCanary, argument: str) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        trainer.combine(trainer.base, [canary])
    assert info.value.argument == argument


def test_bad_rng_and_dataset(trainer: DPSGD) -> None:
    with pytest.raises(InvalidTypeError, match="rng"):
        trainer.train(trainer.combine(trainer.base, []), 0)  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="dataset"):
        trainer.train(42, np.random.default_rng(0))
    narrow = DPSGD(dimensions=16)
    with pytest.raises(InvalidArgumentError, match="dataset"):
        narrow.train(trainer.combine(trainer.base, []), np.random.default_rng(0))


def test_replace_keeps_validation() -> None:
    with pytest.raises(InvalidArgumentError, match="steps"):
        dataclasses.replace(DPSGD(), steps=-3)
