"""The adapters of invink, dp-fusion-lib and dpst, on tiny random models (fixed seeds).

Each package is skipped, with the reason, when it is not installed.  The instrumented
laws are checked against the package's real draws (same seed, same tokens), the exact
DP-Fusion padding leak against its control (a pair of equal token counts), InvisibleInk's
fixed default seed against fresh seeds, and DP-ST's selection on both kinds of pair.
"""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

from dpaudit.adapters._sequence_laws import (
    StepLaws,
    hockey_stick_bounds,
    law_check,
    renyi_divergence,
)
from dpaudit.adapters.dp_fusion import DPFusionRewriter
from dpaudit.adapters.dpst import DpstSelection, import_dpst_runtime
from dpaudit.adapters.invink import InvisibleInkRewriter
from dpaudit.api import audit
from dpaudit.auditors.rewriter import TextAuditConfig, TextAuditor
from dpaudit.errors import OptionalDependencyError
from dpaudit.text.models import tiny_model

PLAIN_TEMPLATE = "{% for m in messages %}{{ m['content'] }} {% endfor %}"
needs_invink = pytest.mark.skipif(
    importlib.util.find_spec("invink") is None, reason="invink not installed (extra text-packages)"
)
needs_fusion = pytest.mark.skipif(
    importlib.util.find_spec("dp_fusion_lib") is None,
    reason="dp-fusion-lib not installed (extra text-packages)",
)
needs_dpst = pytest.mark.skipif(
    importlib.util.find_spec("dpst") is None, reason="dpst not installed (pip install --no-deps)"
)


@pytest.fixture(scope="module")
def tiny() -> object:
    loaded = tiny_model("causal", seed=0)
    loaded.tokenizer.chat_template = PLAIN_TEMPLATE
    return loaded


def test_renyi_and_hockey_stick_arithmetic() -> None:
    p, q = np.array([0.5, 0.5]), np.array([0.25, 0.75])
    expected = math.log(0.5**2 / 0.25 + 0.5**2 / 0.75)
    assert renyi_divergence(p, q, 2.0) == pytest.approx(expected)
    assert renyi_divergence(p, np.array([1.0, 0.0]), 2.0) == math.inf
    bounds = hockey_stick_bounds([math.inf] * 100, 1.0)
    assert bounds["delta_mean"] == 1.0 and 0.8 < bounds["delta_lcb"] < 1.0


@needs_invink
def test_invink_fresh_seeds_vary_and_default_seed_repeats(tiny: object) -> None:
    text = "my name is alice and i live in paris ."
    fresh = InvisibleInkRewriter(tiny.model, tiny.tokenizer, max_toks=4, topk=50)
    fixed = InvisibleInkRewriter(tiny.model, tiny.tokenizer, max_toks=4, topk=50, seed=42)
    rng = np.random.default_rng(0)
    assert len(set(fresh(text, 4, rng))) > 1
    assert len(set(fixed(text, 3, rng))) == 1  # the package's random_seed=42: deterministic


def test_the_law_check_accepts_the_true_law_and_rejects_another() -> None:
    """Draws from p judged under p pass; under a law that moves mass, they fail (seeded)."""
    rng = np.random.default_rng(0)
    p = np.array([0.5, 0.3, 0.15, 0.05])
    q = p[::-1].copy()
    draws = rng.choice(4, size=400, p=p)
    true = [StepLaws([int(y)], [p], [p]) for y in draws]
    wrong = [StepLaws([int(y)], [q], [q]) for y in draws]
    # Under the true law the KS p-value is uniform: above 1e-3 but for 1 seed in 1000.
    assert law_check(true, np.random.default_rng(1))["ks_p_value"] > 1e-3
    assert law_check(wrong, np.random.default_rng(1))["ks_p_value"] < 1e-6
    assert law_check([], rng)["steps"] == 0


@needs_invink
def test_invink_recorded_laws_fit_its_own_draws(tiny: object) -> None:
    rewriter = InvisibleInkRewriter(tiny.model, tiny.tokenizer, max_toks=4, topk=50)
    rng = np.random.default_rng(5)
    records = [rewriter.exact_step_laws("i live in paris .", "i live in rome .", rng)
               for _ in range(8)]  # fmt: skip
    found = law_check(records, np.random.default_rng(6))
    assert found["steps"] >= 8 and found["ks_p_value"] > 1e-3


@needs_fusion
def test_dp_fusion_recorded_laws_fit_its_own_draws(tiny: object) -> None:
    rewriter = DPFusionRewriter(tiny.model, tiny.tokenizer, beta=0.01, max_new_tokens=4)
    rng = np.random.default_rng(5)
    records = [rewriter.exact_step_laws("my name is alice .", "my name is bob .", rng)
               for _ in range(8)]  # fmt: skip
    found = law_check(records, np.random.default_rng(6))
    assert found["steps"] >= 8 and found["ks_p_value"] > 1e-3


@needs_invink
def test_invink_recorded_law_is_the_law_it_draws_from(tiny: object) -> None:
    rewriter = InvisibleInkRewriter(tiny.model, tiny.tokenizer, max_toks=4, topk=50)
    laws = rewriter.exact_step_laws(
        "i live in paris .", "i live in rome .", np.random.default_rng(1)
    )
    assert 1 <= len(laws.tokens) <= 4
    for token, law in zip(laws.tokens, laws.on_x, strict=True):
        assert law[token] > 0 and law.sum() == pytest.approx(1.0)
    # Same prompt twice: the laws coincide and the loss is 0.
    same = rewriter.exact_step_laws(
        "i live in paris .", "i live in paris .", np.random.default_rng(2)
    )
    assert same.loss() == pytest.approx(0.0, abs=1e-9)
    assert math.isfinite(laws.loss())


@needs_fusion
def test_dp_fusion_zero_budget_leaks_the_private_length_exactly(tiny: object) -> None:
    rewriter = DPFusionRewriter(tiny.model, tiny.tokenizer, beta=0.0, max_new_tokens=3)
    rng = np.random.default_rng(0)
    # β = 0: the package mixes λ = 0, the public law alone; it is computed after the pad
    # tokens the longer private context adds, so only the token count of x matters.
    leak = rewriter.exact_step_laws("my name is alice .", "my name is alice and bob .", rng)
    control = rewriter.exact_step_laws("my name is alice .", "my name is bob .", rng)
    # The tiny random model's laws are near uniform: the leak is small but not 0.
    assert max(leak.step_renyi(2.0)) > 1e-7
    assert max(control.step_renyi(2.0)) < 1e-12


@needs_fusion
def test_dp_fusion_first_step_is_missing_from_its_divergences(tiny: object) -> None:
    rewriter = DPFusionRewriter(tiny.model, tiny.tokenizer, beta=0.01, max_new_tokens=5)
    recorder, out = rewriter.recorded("my name is alice .", np.random.default_rng(3))
    assert len(out["divergences"].get("PRIVATE", [])) == len(recorder.tokens) - 1
    assert rewriter.epsilon == pytest.approx(5 * 4 * 0.01 + math.log(1e5))


@needs_fusion
def test_dp_fusion_seeded_draws_repeat(tiny: object) -> None:
    rewriter = DPFusionRewriter(tiny.model, tiny.tokenizer, beta=0.5, max_new_tokens=4)
    first = rewriter("my name is alice .", 3, np.random.default_rng(7))
    assert first == rewriter("my name is alice .", 3, np.random.default_rng(7))


@needs_dpst
def test_dpst_runtime_names_its_services_and_selection_is_seeded() -> None:
    with pytest.raises(OptionalDependencyError, match="Weaviate"):
        import_dpst_runtime()
    selection = DpstSelection(epsilon=10.0)
    a = selection("Alice | lives in | Lyon", 50, np.random.default_rng(0))
    assert a == selection("Alice | lives in | Lyon", 50, np.random.default_rng(0))
    assert set(a) <= {t for t, _ in selection.candidates("Alice | lives in | Lyon")}


@needs_dpst
def test_dpst_cross_cluster_pair_is_a_violation_same_cluster_is_not() -> None:
    selection = DpstSelection(epsilon=1.0)
    cfg = TextAuditConfig(200, 600, 0.95, seed=0)

    def run(x: str, y: str) -> str:
        auditor = TextAuditor(((x, y, "--pair"),), 16, None, "dpst")
        return audit(selection, selection.claim, method=auditor, config=cfg).verdict.value

    assert run("Alice | lives in | Lyon", "the film | won | a prize") == "violation"
    assert run("Alice | lives in | Lyon", "Alice | lives in | Rome") != "violation"
