"""check_mechanism on training algorithms: the built-ins pass, each broken contract fails."""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.claims import ApproxDP
from dpaudit.mechanisms.training import CallableTraining
from dpaudit.mechanisms.training.dpsgd import DPSGD
from dpaudit.testing import check_mechanism

FIXED = np.random.default_rng(7)
BASE = (("a good film", 1), ("a bad film", 0), ("fine", 1))


def train(dataset, rng):
    return {t for t, _ in dataset}, rng.normal()


def score(model, records):
    seen, noise = model
    return [float(t in seen) + noise for t, _ in records]


def fixed_train(dataset, rng):
    return {t for t, _ in dataset}, FIXED.normal()


def nan_score(model, records):
    return [float("nan")] * len(records)


def test_the_built_in_dpsgd_passes() -> None:
    report = check_mechanism(DPSGD(steps=20))
    assert report.passed and [r.name for r in report.results] == [
        "claim", "base", "scores", "seeding", "pickling",
    ]  # fmt: skip


def test_a_correct_user_trainer_passes() -> None:
    assert check_mechanism(CallableTraining(train, score, BASE, ApproxDP(1, 1e-5))).passed


@pytest.mark.parametrize(
    ("trainer", "check"),
    [
        (CallableTraining(fixed_train, score, BASE, ApproxDP(1, 1e-5)), "seeding"),
        (CallableTraining(train, nan_score, BASE, ApproxDP(1, 1e-5)), "scores"),
        (CallableTraining(lambda d, r: train(d, r), score, BASE, ApproxDP(1, 1e-5)), "pickling"),
        (CallableTraining(train, score, BASE, "eight"), "claim"),
        (CallableTraining(train, score, (), ApproxDP(1, 1e-5)), "base"),
    ],
)
def test_a_broken_contract_fails_its_check(trainer, check: str) -> None:
    report = check_mechanism(trainer, raise_on_failure=False)
    assert not report.result(check).passed, report.describe()
