"""Released generate() calls: the decoding read by HF's rules matches HF's real sampler.

Tiny random models (no weights downloaded); needs PyTorch and transformers (extra lm).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

pytest.importorskip("transformers", reason="the generate() adapters need transformers (extra lm)")

from lm_threads import one_torch_thread  # noqa: F401  (autouse fixture)

from dpaudit.adapters.hf_generate import (
    DP_PROMPT_RELEASED,
    LLMDP_DP_PARAPHRASE,
    LLMDP_DP_PROMPT,
    PRIVFILL_DP_PROMPT,
    ReleasedRewriter,
    effective_decoding,
)
from dpaudit.auditors.rewriter import RewriterAuditConfig, audit_rewriter
from dpaudit.text.models import tiny_model

X, X_LONG = "the film was good", "the film was good and the people were very happy"


@pytest.fixture(scope="module")
def model():
    return tiny_model("causal", seed=0)


def _short(call, tokens=6):
    return dataclasses.replace(call, max_new_tokens=tokens)


def test_decoding_is_read_by_hf_rules(model) -> None:
    prompt = effective_decoding(LLMDP_DP_PROMPT, model.model, 1.0)
    assert prompt.top_k is None and not prompt.greedy and prompt.clip == LLMDP_DP_PROMPT.clip
    paraphrase = effective_decoding(LLMDP_DP_PARAPHRASE, model.model, 1.0)
    assert paraphrase.top_k == 50  # no top_k argument: HF's default
    assert paraphrase.epsilon_per_token == math.inf
    greedy = effective_decoding(
        dataclasses.replace(LLMDP_DP_PARAPHRASE, kwargs={}), model.model, 1.0
    )
    assert greedy.greedy  # neither do_sample nor a sampling generation config: greedy
    assert effective_decoding(DP_PROMPT_RELEASED, model.model, 1.0).clip is None
    # T = 2·(b_hi − b_lo)/ε, as privfill and LLMDP.py compute it
    rr = ReleasedRewriter(PRIVFILL_DP_PROMPT, model, 103.0)
    assert rr.declared.decoding.temperature == pytest.approx(2.0)


@pytest.mark.parametrize("call", [LLMDP_DP_PROMPT, LLMDP_DP_PARAPHRASE, DP_PROMPT_RELEASED])
def test_real_sampler_matches_the_decoding_read_from_the_call(model, call) -> None:
    # Level 1e-3 per pair: a correct reading fails with probability 1e-3 (fixed seed here).
    rr = ReleasedRewriter(_short(call), model, 50.0 if call.clip else 1.5)
    cfg = RewriterAuditConfig(samples=150, final_samples=10, seed=1)
    res = audit_rewriter(
        rr.declared, [(X, "the film was bad", "one word")], cfg, sampler=rr.sample_ids
    )
    assert res.detail.declaration_matches, res.detail.pairs[0].fidelity.describe()


def test_paper_decoding_is_refuted_by_a_sampler_with_hf_default_top_k(model) -> None:
    # The paper's mechanism samples from the full vocabulary; a call that leaves top_k out
    # (as LLMDP.py's DP-Paraphrase does) keeps 50 tokens.  DP-Prompt's clip bounds here, as
    # the tiny model's logits all lie below DP-Paraphrase's b_hi = -8.7: clipped to one value,
    # they tie, and HF's top-k keeps every tied token.
    no_top_k = dataclasses.replace(LLMDP_DP_PROMPT, kwargs={"do_sample": True})
    rr = ReleasedRewriter(_short(no_top_k), model, 5.0)
    assert rr.declared.decoding.top_k == 50 and rr.claimed.decoding.top_k is None
    cfg = RewriterAuditConfig(samples=150, final_samples=10, seed=2)
    res = audit_rewriter(
        rr.claimed, [(X, "the film was bad", "one word")], cfg, sampler=rr.sample_ids
    )
    assert not res.detail.declaration_matches


def test_input_length_cap_gives_an_infinite_exact_loss(model) -> None:
    rr = ReleasedRewriter(_short(LLMDP_DP_PROMPT, 64), model, 20.0)
    assert rr.declared.length_cap(X_LONG) > rr.declared.length_cap(X)
    cfg = RewriterAuditConfig(samples=60, final_samples=30, seed=0)
    res = audit_rewriter(rr.declared, [(X_LONG, X, "length")], cfg, sampler=rr.sample_ids)
    forward = res.detail.pairs[
        0
    ].forward  # rewrites of the long document scored against the short one
    assert forward.max_token_loss == math.inf
    assert res.detail.exact_verdict.value == "violation"


def test_sampling_is_reproducible_from_the_seed(model) -> None:
    rr = ReleasedRewriter(_short(LLMDP_DP_PROMPT), model, 50.0)
    a = rr.sample(X, 5, np.random.default_rng(7))
    b = rr.sample(X, 5, np.random.default_rng(7))
    assert a == b
