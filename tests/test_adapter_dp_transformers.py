"""dp-transformers 1.0.0's OpacusDPTrainer as released (runs in ``.venv-dpt``; see test_dpt_env)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("dp_transformers", reason="dp-transformers not installed (.venv-dpt)")

from dpaudit.api import audit_training
from dpaudit.auditors.training.one_run import OneRunConfig
from dpaudit.mechanisms.training.dp_transformers_lm import DPTransformersCausalLM

SMALL = DPTransformersCausalLM().with_base(DPTransformersCausalLM().base[:200])


def test_the_claim_is_what_the_package_reports_after_a_run() -> None:
    # The trainer's own RDP accountant, after training on the base data, gives the claim.
    from dp_transformers import dp_utils

    seen = {}
    original = dp_utils.OpacusDPTrainer.train

    def spy(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        out = original(self, *args, **kwargs)
        seen["epsilon"] = self.get_rdp_epsilon()
        return out

    dp_utils.OpacusDPTrainer.train = spy
    try:
        SMALL.train(list(SMALL.base), np.random.default_rng(0))
    finally:
        dp_utils.OpacusDPTrainer.train = original
    assert seen["epsilon"] == pytest.approx(SMALL.claim.epsilon, rel=1e-9)
    # More records (canaries) are accounted at a smaller ε: the base size's is the largest.
    assert SMALL.accounted_epsilon(len(SMALL.base) + 200) < SMALL.claim.epsilon


def test_a_run_is_a_function_of_its_generator_and_theta0_is_fixed() -> None:
    data = list(SMALL.base)
    a = SMALL.score(SMALL.train(data, np.random.default_rng(3)), data[:5])
    b = SMALL.score(SMALL.train(data, np.random.default_rng(3)), data[:5])
    c = SMALL.score(SMALL.train(data, np.random.default_rng(4)), data[:5])
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_a_one_run_audit_of_the_released_trainer_is_not_flagged() -> None:
    config = OneRunConfig(canaries=100, seed=0)
    result = audit_training(SMALL, method="one-run", config=config)
    assert not result.violation, result.verdict_text
    assert result.detail.canary_kind == "random-tokens"
