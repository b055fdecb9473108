"""White-box audit of LM rewriters on a closed-form toy LM (needs PyTorch: extra ``lm``).

The toy's logits are known exactly (``dpaudit.testing.toy_lm``), so the exact
loss is checked against closed forms of the clipped exponential mechanism.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from dpaudit.mechanisms.rewriters import Decoding, dp_prompt, exponential_decoding, process_logits
from dpaudit.verdicts import Verdict

torch = pytest.importorskip("torch", reason="the rewriter tests need PyTorch (extra lm)")

from lm_threads import one_torch_thread  # noqa: E402, F401  (autouse fixture)

from dpaudit.auditors.rewriter import (  # noqa: E402
    RewriterAuditConfig,
    audit_rewriter,
    exact_violation,
    summary,
)
from dpaudit.results.audit import AuditResult  # noqa: E402
from dpaudit.testing.toy_lm import toy_model  # noqa: E402

WORDS = ("<eos>", "a", "b", "c", "good", "bad")


def _toy(strength: float) -> object:
    """'good' pushes every next token's logit for 'a' up and the others down; 'bad' the reverse."""
    w = np.zeros((len(WORDS), len(WORDS)))
    w[4, :] = -strength
    w[4, 1] = strength
    w[5, :] = strength
    w[5, 1] = -strength
    w[4, 0] = w[5, 0] = 0.0  # <eos> stays neutral so rewrites end
    return toy_model(w, WORDS)


def _rewriter(strength: float, epsilon: float, clip: tuple[float, float] | None, tokens: int = 4):
    r = dp_prompt(
        _toy(strength),
        epsilon,
        clip=clip or (-1.0, 1.0),
        max_new_tokens=tokens,
        template="{document}",
        chat=False,
    )
    if clip is None:
        r = dataclasses.replace(r, decoding=dataclasses.replace(r.decoding, clip=None))
    return r


PAIR = [("good", "bad", "sentiment word")]


def test_temperature_and_worst_case_closed_forms() -> None:
    d = exponential_decoding(2.0, (-3.0, 1.0))
    assert d.temperature == pytest.approx(4.0)  # T = 2(b_hi − b_lo)/ε
    assert d.epsilon_per_token == pytest.approx(2.0)
    a = 1.0  # (b_hi − b_lo)/T
    for v in (2, 10, 49152):
        expected = math.log(math.exp(a) * (1 + (v - 1) * math.exp(a)) / (math.exp(a) + v - 1))
        assert d.exact_worst_token_loss(v) == pytest.approx(expected, rel=1e-12)
    assert d.exact_worst_token_loss(10**9) == pytest.approx(2.0, abs=1e-6)  # → ε as V → ∞
    assert Decoding(top_k=50, clip=(-1, 1)).epsilon_per_token == math.inf
    assert Decoding(greedy=True, clip=(-1, 1)).epsilon_per_token == math.inf


def test_process_logits_clip_temperature_topk_topp() -> None:
    z = np.array([[3.0, 1.0, 0.0, -5.0]])
    d = Decoding(temperature=2.0, clip=(-1.0, 1.0))
    expected = np.array([1.0, 1.0, 0.0, -1.0]) / 2.0
    expected -= np.log(np.exp(expected).sum())
    np.testing.assert_allclose(process_logits(z, d)[0], expected, rtol=1e-6)
    top2 = process_logits(z, Decoding(top_k=2))
    assert np.isneginf(top2[0, 2:]).all() and np.isfinite(top2[0, :2]).all()
    p = np.exp(z[0]) / np.exp(z[0]).sum()  # [0.84, 0.11, ...]: top-p 0.9 keeps the first two
    kept = np.isfinite(process_logits(z, Decoding(top_p=0.9))[0])
    assert kept.tolist() == [True, True, False, False] and p[0] < 0.9 < p[0] + p[1]
    assert process_logits(z, Decoding(greedy=True))[0].tolist() == [
        0.0,
        -math.inf,
        -math.inf,
        -math.inf,
    ]


def test_exact_first_token_loss_equals_the_worst_case_closed_form() -> None:
    # Under "good" the clipped logits are (b_hi for 'a', b_lo for all but <eos>): the worst case.
    r = _rewriter(strength=5.0, epsilon=1.0, clip=(-1.0, 1.0), tokens=1)
    out = [np.array([1])]  # the rewrite "a"
    loss = r.token_log_probs("good", out)[0] - r.token_log_probs("bad", out)[0]
    a = 1.0 / r.decoding.temperature  # b_hi / T
    zx = math.exp(a) + 1.0 + 4 * math.exp(-a)  # 'a' at b_hi, <eos> at 0, four others at b_lo
    zxp = math.exp(-a) + 1.0 + 4 * math.exp(a)
    expected = a - math.log(zx) - (-a - math.log(zxp))
    assert loss[0] == pytest.approx(expected, abs=1e-6)  # float32 logits: 1e-6 is ~10 ulps
    assert loss[0] <= r.decoding.epsilon_per_token


def test_generated_tokens_score_to_what_was_sampled() -> None:
    # Teacher forcing reproduces the distribution generation drew from: every sampled token is
    # possible, and the rewrite lengths respect max_new_tokens.
    r = _rewriter(strength=2.0, epsilon=3.0, clip=(-1.0, 1.0), tokens=5)
    ys = r.sample_ids("good", 300, np.random.default_rng(1))
    lp = r.token_log_probs("good", ys)
    assert all(np.isfinite(v).all() and len(v) <= 5 for v in lp)
    assert all(len(y) == 5 or y[-1] == 0 for y in ys)


@pytest.mark.parametrize("seed", range(5))
def test_correct_dp_prompt_never_flagged(seed: int) -> None:
    r = _rewriter(strength=5.0, epsilon=1.0, clip=(-1.0, 1.0), tokens=1)
    res = audit_rewriter(r, PAIR, RewriterAuditConfig(samples=200, final_samples=1000, seed=seed))
    assert res.verdict is not Verdict.VIOLATION
    assert res.detail.max_exact_token_loss <= r.decoding.epsilon_per_token + 1e-6
    assert not exact_violation(res)
    assert res.detail.declaration_matches  # fidelity level 1e-3 per pair: a false mismatch is rare


def test_unclipped_logits_are_flagged_exactly_and_certified() -> None:
    # No clipping: logits ±5 at T = 4 (the temperature the paper's clip [-1, 1] implies for ε = 1).
    # Pr[M(good) = a] ≈ 0.619, Pr[M(bad) = a] ≈ 0.0188: loss ≈ 3.5 per token, claim 1.
    r = _rewriter(strength=5.0, epsilon=1.0, clip=None, tokens=1)
    res = audit_rewriter(r, PAIR, RewriterAuditConfig(samples=200, final_samples=1000, seed=3))
    s = 5.0 / r.decoding.temperature
    p_x = math.exp(s) / (math.exp(s) + 1 + 4 * math.exp(-s))
    p_xp = math.exp(-s) / (math.exp(-s) + 1 + 4 * math.exp(s))
    # 'a' is drawn with probability 0.62 in each of 200 samples, so it is among them.
    assert res.detail.max_exact_token_loss == pytest.approx(math.log(p_x / p_xp), abs=1e-5)
    assert exact_violation(res)
    assert res.verdict is Verdict.VIOLATION and res.detail.lower_bound > 1.0
    assert res.detail.pairs[0].forward.analytic_token_bound == math.inf


def test_a_sampler_sharper_than_declared_is_a_mismatch() -> None:
    declared = _rewriter(strength=1.0, epsilon=4.0, clip=(-1.0, 1.0), tokens=4)
    real = dataclasses.replace(
        declared,
        decoding=dataclasses.replace(
            declared.decoding, temperature=declared.decoding.temperature / 3
        ),
    )
    res = audit_rewriter(
        declared,
        PAIR,
        RewriterAuditConfig(samples=300, final_samples=100, seed=0),
        sampler=real.sample,
    )
    assert not res.detail.declaration_matches
    assert "MISMATCH" in res.detail.pairs[0].fidelity.describe()
    # never "no violation found" on losses of a declaration the code does not follow
    if res.verdict is not Verdict.VIOLATION:
        assert res.verdict is Verdict.INCONCLUSIVE
        assert "does not match the real sampler" in res.verdict_text
        assert "record the call itself" in res.verdict_text


def test_result_serialises_and_summarises() -> None:
    import json

    r = _rewriter(strength=2.0, epsilon=2.0, clip=(-1.0, 1.0), tokens=3)
    res = audit_rewriter(r, PAIR, RewriterAuditConfig(samples=50, final_samples=100, seed=0))
    data = json.loads(json.dumps(res.to_dict()))
    assert data["kind"] == "rewriter" and len(data["detail"]["statements"]) == 2
    assert AuditResult.from_dict(data).to_dict() == data
    text = summary(res)
    assert "witness" in text and res.verdict.value.upper() in text


@pytest.mark.slow  # starts Ray (5 s)
def test_local_pool_refused_ray_spreads_pairs_bit_identically() -> None:
    import json

    from dpaudit.engine.config import ExecutionConfig
    from dpaudit.errors import InvalidArgumentError

    r = _rewriter(strength=2.0, epsilon=2.0, clip=(-1.0, 1.0), tokens=3)
    cfg = RewriterAuditConfig(samples=20, final_samples=20, seed=0)
    pairs = [*PAIR, ("good", "good good", "length")]
    with pytest.raises(InvalidArgumentError, match="execution"):
        audit_rewriter(r, pairs, cfg, execution=ExecutionConfig(workers=2))
    pytest.importorskip("ray", reason="Ray is in the all extra")
    here = audit_rewriter(r, pairs, cfg).to_dict()
    there = audit_rewriter(r, pairs, cfg, execution=ExecutionConfig(backend="ray", workers=2))
    there = there.to_dict()
    for d in (here, there):
        d.pop("timing")
    assert json.dumps(here, default=str) == json.dumps(there, default=str)
