"""The Opacus trainer: its claim is Opacus' own, its runs reproducible, its canaries calibrated.

Statistical tolerances are 5 standard errors of the quantity tested, from its sampling
distribution under the derivation in :mod:`dpaudit.mechanisms.training.opacus_classifier`:
the mean of n i.i.d. scores has SE ``sqrt(var/n)``, a sample variance of n normals has SE
``var·sqrt(2/(n−1))``, an accuracy over n records has binomial SE ``sqrt(p(1−p)/n)``.
Every run has a fixed seed, so the tests are deterministic; the 5-SE margins say they would
also pass for almost every other seed.
"""

from __future__ import annotations

import json
import math
import pickle
import sys

import numpy as np
import pytest

pytest.importorskip("opacus")
torch = pytest.importorskip("torch")

from dpaudit.claims import ApproxDP  # noqa: E402
from dpaudit.errors import InvalidArgumentError, MechanismError  # noqa: E402
from dpaudit.mechanisms.training.contract import GradientCanary, TextRecord  # noqa: E402
from dpaudit.mechanisms.training.opacus_classifier import (  # noqa: E402
    OpacusClassifier,
    OpacusDataset,
    OpacusModel,
)
from dpaudit.text.hashed_features import HashedBagOfWords  # noqa: E402

#: Canaries per run: the first half included, the second half (other coordinates) absent.
CANARIES = 1000


@pytest.fixture(scope="module")
def trainer() -> OpacusClassifier:
    """One epoch at the defaults otherwise (32 Poisson steps at q = 1/32)."""
    return OpacusClassifier(epochs=1)


@pytest.fixture(scope="module")
def canary_run() -> tuple[OpacusClassifier, OpacusModel]:
    """One white-box run with CANARIES included gradient canaries, σ = 0.3.

    σ is below 1 so the included canaries' mean (signal 1 per epoch) is measured to
    ±5 SE ≈ ±0.3, tight enough to catch a √2 slip in the projection.
    """
    mech = OpacusClassifier(
        noise_multiplier=0.3, epochs=1, canary_coordinates=2 * CANARIES, accountant="rdp"
    )
    included = [GradientCanary(j, 1.0 if j % 2 else -1.0) for j in range(CANARIES)]
    model = mech.train(mech.combine(mech.base, included), np.random.default_rng(20261201))
    return mech, model


def _accuracy(model: OpacusModel, records: tuple[TextRecord, ...], dimensions: int) -> float:
    x = HashedBagOfWords(dimensions)([r.text for r in records])
    predicted = np.argmax(x @ model.weight.T + model.bias, axis=1)
    return float(np.mean(predicted == np.array([r.label for r in records])))


@pytest.mark.parametrize("accountant", ["rdp", "prv"])
def test_claim_is_what_the_privacy_engine_reports(accountant: str) -> None:
    mech = OpacusClassifier(epochs=2, accountant=accountant, noise_multiplier=0.8)
    claim = mech.claim  # computed before, and without, any training
    assert isinstance(claim, ApproxDP) and claim.delta == mech.delta
    canaries = [GradientCanary(j) for j in range(37)]  # N = 1037: q stays 1/32
    model, engine = mech.train_with_engine(
        mech.combine(mech.base, canaries), np.random.default_rng(1)
    )
    assert engine.accountant.history == [(0.8, 1 / 32, 64)]
    assert model.steps == mech.steps == 64 and model.sample_rate == mech.sample_rate
    assert claim.epsilon == engine.get_epsilon(mech.delta)


def test_claim_holds_when_no_batch_size_gives_the_base_loader_length() -> None:
    """100 records at batch 7 → K = 15; 110 records cannot make 15 batches of one size."""
    records = OpacusClassifier().records[:100]
    mech = OpacusClassifier(records=records, batch_size=7, canary_coordinates=10)
    dataset = mech.combine(mech.base, [GradientCanary(j) for j in range(10)])
    model, engine = mech.train_with_engine(dataset, np.random.default_rng(2))
    assert model.steps == mech.steps == 3 * int(1 / (1 / 15))
    assert mech.claim.epsilon == engine.get_epsilon(mech.delta)


def test_runs_are_bit_reproducible_from_the_rng(trainer: OpacusClassifier) -> None:
    dataset = trainer.combine(trainer.base, [GradientCanary(j) for j in range(50)])
    global_state = torch.random.get_rng_state()
    threads = torch.get_num_threads()
    a = trainer.train(dataset, np.random.default_rng(7))
    b = trainer.train(dataset, np.random.default_rng(7))
    c = trainer.train(dataset, np.random.default_rng(8))
    for name in ("weight", "bias", "canary_gradients"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
        assert not np.array_equal(getattr(a, name), getattr(c, name)), name
    assert torch.equal(torch.random.get_rng_state(), global_state)  # torch's seed untouched
    assert torch.get_num_threads() == threads


def test_absent_canary_scores_are_normal_with_the_derived_variance(
    canary_run: tuple[OpacusClassifier, OpacusModel],
) -> None:
    mech, model = canary_run
    absent = [GradientCanary(CANARIES + j, 1.0 if j % 2 else -1.0) for j in range(CANARIES)]
    scores = mech.score(model, absent)
    variance = model.steps * mech.noise_multiplier**2  # N(0, steps·σ²·1)
    assert abs(scores.mean()) < 5 * math.sqrt(variance / CANARIES)
    assert abs(scores.var(ddof=1) - variance) < 5 * variance * math.sqrt(2 / (CANARIES - 1))


def test_included_canary_scores_average_steps_times_sample_rate(
    canary_run: tuple[OpacusClassifier, OpacusModel],
) -> None:
    mech, model = canary_run
    included = [GradientCanary(j, 1.0 if j % 2 else -1.0) for j in range(CANARIES)]
    scores = mech.score(model, included)
    q, steps = model.sample_rate, model.steps
    variance = steps * (mech.noise_multiplier**2 + q * (1 - q))  # noise + Binomial(steps, q)
    assert abs(scores.mean() - steps * q) < 5 * math.sqrt(variance / CANARIES)
    # The canary's sign is the direction it was trained with: the flipped sign scores −mean.
    flipped = mech.score(model, [GradientCanary(j, -c.sign) for j, c in enumerate(included)])
    assert np.allclose(flipped, -scores)


def test_classifier_learns_the_base_data_at_sigma_one() -> None:
    mech = OpacusClassifier(noise_multiplier=1.0, white_box=False)
    model = mech.train(mech.combine(mech.base, []), np.random.default_rng(3))
    assert model.canary_gradients is None and mech.access == "black-box"
    accuracy = _accuracy(model, mech.records, mech.dimensions)
    assert accuracy > 0.6 + 5 * math.sqrt(0.25 / len(mech.records))  # > 0.6 by 5 SE
    scores = mech.score(model, mech.records[:20])
    assert np.all(scores < 0) and np.all(np.isfinite(scores))  # minus cross-entropy


def test_models_and_trainers_pickle(trainer: OpacusClassifier) -> None:
    dataset = trainer.combine(trainer.base[:200], [GradientCanary(3)])
    assert isinstance(dataset, OpacusDataset) and len(dataset) == 201
    model = trainer.train(dataset, np.random.default_rng(4))
    records = [*trainer.base[:5], GradientCanary(3), GradientCanary(4, -1.0)]
    again = pickle.loads(pickle.dumps(model))
    assert np.array_equal(trainer.score(again, records), trainer.score(model, records))
    _ = trainer.claim
    copy = pickle.loads(pickle.dumps(trainer))
    assert copy.claim == trainer.claim and copy.records == trainer.records
    json.dumps(trainer.spec())
    assert trainer.spec()["params"]["records"] == 1000 and trainer.spec()["mechanism"] == "opacus"


def test_training_on_a_plain_record_list(trainer: OpacusClassifier) -> None:
    records = [*trainer.base[:64], GradientCanary(0)]
    model = trainer.train(records, np.random.default_rng(5))
    featurised = trainer.train(
        trainer.combine(trainer.base[:64], records[-1:]), np.random.default_rng(5)
    )
    assert np.array_equal(model.weight, featurised.weight)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("records", ()),
        ("records", [("a sentence", 2)]),
        ("records", [GradientCanary(0), GradientCanary(1)]),
        ("noise_multiplier", 0.0),
        ("noise_multiplier", float("nan")),
        ("max_grad_norm", -1.0),
        ("batch_size", 0),
        ("batch_size", 1001),
        ("epochs", 0),
        ("learning_rate", 0.0),
        ("dimensions", 1),
        ("canary_coordinates", 0),
        ("amplitude", 0.5),
        ("delta", 0.0),
        ("delta", 1.0),
        ("accountant", "gdp"),
        ("white_box", "yes"),
        ("threads", 0),
        ("threads", 2.5),
    ],
)
def test_bad_fields_are_refused_by_name(field: str, value: object) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        OpacusClassifier(**{field: value})
    assert caught.value.argument == field and field in str(caught.value)


def test_bad_canaries_and_black_box_canary_scores_are_refused(trainer: OpacusClassifier) -> None:
    with pytest.raises(InvalidArgumentError, match="coordinate"):
        trainer.combine(trainer.base, [GradientCanary(trainer.canary_coordinates)])
    with pytest.raises(InvalidArgumentError, match="sign"):
        trainer.combine(trainer.base, [GradientCanary(0, 0.0)])
    black = OpacusClassifier(white_box=False, epochs=1)
    model = black.train(black.combine(black.base[:64], []), np.random.default_rng(6))
    with pytest.raises(InvalidArgumentError, match="white_box"):
        black.score(model, [GradientCanary(0)])


def test_missing_opacus_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opacus", None)  # import opacus now raises ImportError
    mech = OpacusClassifier()
    with pytest.raises(MechanismError, match=r"pip install 'dpaudit\[training\]'"):
        _ = mech.claim
    with pytest.raises(MechanismError, match=r"dpaudit\[training\]"):
        mech.train(mech.base[:64], np.random.default_rng(0))
