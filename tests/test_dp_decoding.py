"""DP-Decoding (Majmudar et al. 2022, §3): each token drawn from ``λ·q + (1 − λ)/V``.

Closed forms: the largest ratio of two such distributions is ``(1 + (V − 1)λ)/(1 − λ)``
(attained by one-hot softmaxes), and with clipped logits the exponential mechanism's
extremes take the place of 1 and 0.  The rewriter at ``λ = (e^ε − 1)/(e^ε + V − 1)`` is
ε-DP per token and is not flagged; a λ chosen without the vocabulary (``1 − e^-ε``) is.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.rewriters.decoding import Decoding, process_logits

V = 50


def _extreme_ratio(decoding: Decoding, lo: float, hi: float) -> float:
    """ln p_x(0) − ln p_x′(0) for token 0 at ``hi`` under x and ``lo`` under x′, the rest
    the reverse: the configuration of the largest ratio."""
    x = np.full((1, V), lo)
    x[0, 0] = hi
    x_prime = np.full((1, V), hi)
    x_prime[0, 0] = lo
    return float(process_logits(x, decoding)[0, 0] - process_logits(x_prime, decoding)[0, 0])


@pytest.mark.parametrize("lam", [0.1, 0.5, 0.9])
def test_the_uniform_mixture_bound_is_attained_by_one_hot_softmaxes(lam: float) -> None:
    decoding = Decoding(mix=lam, dtype="float64")
    bound = math.log((1 + (V - 1) * lam) / (1 - lam))
    assert decoding.exact_worst_token_loss(V) == pytest.approx(bound, rel=1e-12)
    # logits 800 apart: the softmax is one-hot to double precision
    assert _extreme_ratio(decoding, -400.0, 400.0) == pytest.approx(bound, rel=1e-9)


def test_with_clipped_logits_the_exponential_mechanisms_extremes_take_their_place() -> None:
    decoding = Decoding(temperature=2.0, clip=(-1.0, 1.0), mix=0.6, dtype="float64")
    exact = decoding.exact_worst_token_loss(V)
    assert _extreme_ratio(decoding, -1.0, 1.0) == pytest.approx(exact, rel=1e-12)
    unmixed = Decoding(temperature=2.0, clip=(-1.0, 1.0), dtype="float64")
    assert exact < unmixed.exact_worst_token_loss(V)  # mixing only lowers the loss
    assert "mix λ = 0.6 with uniform" in decoding.describe()


def test_a_bad_mixture_is_named() -> None:
    for bad in (0.0, 1.5, math.nan):
        with pytest.raises(InvalidArgumentError, match="mix"):
            Decoding(mix=bad)
    with pytest.raises(InvalidArgumentError, match="greedy"):
        Decoding(mix=0.5, greedy=True)


torch = pytest.importorskip("torch", reason="the rewriter needs PyTorch (extra lm)")
pytest.importorskip("transformers", reason="the rewriter needs transformers")

from _tiny_lm import lively_causal  # noqa: E402
from lm_threads import one_torch_thread  # noqa: E402, F401  (autouse fixture)

from dpaudit.auditors.rewriter import RewriterAuditConfig, audit_rewriter  # noqa: E402
from dpaudit.mechanisms.rewriters.causal import CausalRewriter, dp_decoding  # noqa: E402
from dpaudit.verdicts import Verdict  # noqa: E402

PAIRS = [("the patient was sick today", "the patient was happy today", "one word")]
SMALL = RewriterAuditConfig(samples=40, final_samples=60, seed=0)


@pytest.fixture(scope="module")
def lively():
    """The tiny model with N(0, 1) weights (:func:`_tiny_lm.lively_causal`)."""
    return lively_causal()


def test_dp_decoding_at_its_lambda_is_epsilon_per_token(lively) -> None:
    rewriter = dp_decoding(lively, 3.0, max_new_tokens=4, template="{document} .", chat=False)
    vocab = int(lively.model.config.vocab_size)
    assert rewriter.decoding.exact_worst_token_loss(vocab) == pytest.approx(3.0, rel=1e-12)
    result = audit_rewriter(rewriter, PAIRS, SMALL)
    detail = result.detail
    assert detail.declaration_matches
    assert detail.exact_verdict is Verdict.NO_VIOLATION_FOUND
    assert detail.max_exact_token_loss <= 3.0 + 1e-9
    assert result.verdict is not Verdict.VIOLATION


def test_a_lambda_chosen_without_the_vocabulary_is_flagged(lively) -> None:
    """``λ = 1 − e^-ε`` reads the mixture as if V were 1: its worst token loses far more."""
    honest = dp_decoding(lively, 3.0, max_new_tokens=4, template="{document} .", chat=False)
    wrong = CausalRewriter(
        "dp-decoding, λ without V", lively, "{document} .",
        Decoding(mix=1 - math.exp(-3.0), max_new_tokens=4), honest.claim,
    )  # fmt: skip
    result = audit_rewriter(wrong, PAIRS, SMALL)
    assert result.detail.declaration_matches
    assert result.detail.exact_verdict is Verdict.VIOLATION
    assert (
        3.0
        < result.detail.max_exact_token_loss
        <= wrong.decoding.exact_worst_token_loss(int(lively.model.config.vocab_size))
    )


def test_cli_audits_dp_decoding_and_refuses_a_clip(capsys) -> None:
    from _cli import run_cli_quiet

    base = ("audit-rewriter", "dp-decoding", "--model", "tiny", "--epsilon", "3",
            "--max-new-tokens", "3", "--samples", "20", "--final-samples", "20")  # fmt: skip
    code, out, _ = run_cli_quiet(capsys, *base)
    assert code == 0 and "mix λ = " in out and "with uniform" in out
    code, out, err = run_cli_quiet(capsys, *base, "--clip", "-1", "1")
    assert code == 2 and "--clip" in err and out == ""
