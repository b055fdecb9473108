"""DP-MLM and DP-BART on tiny random Hugging Face models (needs PyTorch: extra ``lm``).

The models are built here from transformers configs with a word-level
tokenizer, so nothing is downloaded.  Closed forms are computed from the
models' own forward passes, independently of the rewriter classes.
"""

from __future__ import annotations

import dataclasses
import math
import os
from types import SimpleNamespace

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
torch = pytest.importorskip("torch", reason="the rewriter tests need PyTorch (extra lm)")
transformers = pytest.importorskip("transformers", reason="the rewriter tests need transformers")
tokenizers = pytest.importorskip("tokenizers", reason="the rewriter tests need tokenizers")

from dpaudit.analysis.gaussian import classic_gaussian_sigma, gaussian_delta  # noqa: E402
from dpaudit.auditors.rewriter import (  # noqa: E402
    RewriterAuditConfig,
    audit_rewriter,
    exact_violation,
)
from dpaudit.errors import InvalidArgumentError  # noqa: E402
from dpaudit.mechanisms.rewriters import (  # noqa: E402
    ReleasedDPMLM,
    dp_bart,
    dp_bart_privfill,
    dp_mlm,
)
from dpaudit.mechanisms.rewriters.lm import sample_rows  # noqa: E402
from dpaudit.mechanisms.rewriters.masked import _merge_classes  # noqa: E402
from dpaudit.verdicts import Verdict  # noqa: E402

SPECIAL = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
WORDS = ["good", "bad", "a", "b", "c", "movie", "film", "the"]


def _tokenizer() -> object:
    vocab = {w: i for i, w in enumerate(SPECIAL + WORDS)}
    tk = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="<unk>"))
    tk.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    tk.post_processor = tokenizers.processors.TemplateProcessing(
        single="<s> $A </s>",
        pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", 0), ("</s>", 2)],
    )
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tk,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
        mask_token="<mask>",
    )


def _masked_lm(kind: str = "roberta", head_scale: float = 30.0, seed: int = 0) -> SimpleNamespace:
    """A one-layer masked LM; a wide init and a scaled head make the mask logits span ±50."""
    torch.manual_seed(seed)
    common = dict(
        vocab_size=len(SPECIAL) + len(WORDS),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        pad_token_id=1,
        initializer_range=0.3,
    )
    if kind == "roberta":
        model = transformers.RobertaForMaskedLM(transformers.RobertaConfig(**common)).eval()
        head = model.lm_head
        with torch.no_grad():
            head.decoder.weight.mul_(head_scale)
            head.bias.mul_(head_scale)
    else:
        model = transformers.BertForMaskedLM(transformers.BertConfig(**common)).eval()
    return SimpleNamespace(model=model, tokenizer=_tokenizer(), source="tiny random MLM")


def _logit_roundoff(logits: np.ndarray) -> float:
    """How far two float32 computations of the tiny models' logits may differ.

    Each logit is a 16-term dot product, so its rounding error is up to 16 unit
    roundoffs of the largest logit (not of its own value); twice, one per computation.
    """
    return 2 * 16 * 2.0**-24 * float(np.max(np.abs(logits)))


def _bart(seed: int = 0) -> SimpleNamespace:
    torch.manual_seed(seed)
    config = transformers.BartConfig(
        vocab_size=len(SPECIAL) + len(WORDS),
        d_model=16,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=64,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        decoder_start_token_id=2,
    )
    model = transformers.BartForConditionalGeneration(config).eval()
    return SimpleNamespace(model=model, tokenizer=_tokenizer(), source="tiny random BART")


@pytest.fixture(scope="module")
def mlm() -> SimpleNamespace:
    # Seed 2: a model whose unclipped mask distributions for "good" and "bad" differ a lot.
    return _masked_lm(seed=2)


def _unclipped(rewriter: object) -> object:
    return dataclasses.replace(rewriter, decoding=dataclasses.replace(rewriter.decoding, clip=None))


# ---------------------------------------------------------------- DP-MLM


def _closed_form_log_probs(model: SimpleNamespace, document: str, word: int, d) -> np.ndarray:
    """The mask position's declared log-distribution, from one plain forward pass."""
    words = document.split()
    masked = " ".join("<mask>" if i == word else w for i, w in enumerate(words))
    enc = model.tokenizer(document, masked, return_tensors="pt")
    with torch.no_grad():
        logits = model.model(**enc).logits[0].double().numpy()
    at = int(np.flatnonzero(enc["input_ids"][0].numpy() == 4)[0])
    z = np.clip(logits[at].astype(np.float32), *d.clip) / np.float32(d.temperature)
    z = z.astype(np.float64)
    return z - np.log(np.sum(np.exp(z)))


def test_dp_mlm_exact_word_loss_equals_the_closed_form(mlm: SimpleNamespace) -> None:
    r = dp_mlm(mlm, 1.0, clip=(-1.0, 1.0), max_words=4)
    assert r.decoding.temperature == pytest.approx(4.0)  # T = 2(b_hi − b_lo)/ε
    x, x_prime = "good movie", "bad movie"
    ys = r.sample_ids(x, 50, np.random.default_rng(0))
    lp_x, lp_xp = r.token_log_probs(x, ys), r.token_log_probs(x_prime, ys)
    for w in range(2):
        cf_x = _closed_form_log_probs(mlm, x, w, r.decoding)
        cf_xp = _closed_form_log_probs(mlm, x_prime, w, r.decoding)
        # float32 logits through two batch layouts and the head applied at the mask only,
        # divided by T for a log-probability.
        tol = _logit_roundoff(r.mask_logits(x)) / r.decoding.temperature
        for y, a, b in zip(ys, lp_x, lp_xp, strict=True):
            assert a[w] == pytest.approx(cf_x[y[w]], abs=tol)
            assert (a[w] - b[w]) == pytest.approx(cf_x[y[w]] - cf_xp[y[w]], abs=2 * tol)
        # Every word's loss is bounded by the exponential mechanism's worst case ≤ ε.
        assert np.max(np.abs(cf_x - cf_xp)) <= r.decoding.exact_worst_token_loss(13) + 1e-9
    assert r.decoding.exact_worst_token_loss(13) < r.claim.epsilon


def test_head_only_at_the_mask_equals_the_full_forward() -> None:
    for kind in ("roberta", "bert"):
        m = _masked_lm(kind)
        r = dp_mlm(m, 2.0, clip=(-1.0, 1.0), max_words=4, batch_size=2)
        doc = "good movie the film"
        inputs, positions = r.masked_inputs(doc)
        full = []
        for ids, at in zip(inputs, positions, strict=True):
            with torch.no_grad():
                out = m.model(input_ids=torch.tensor([ids])).logits[0, at]
            full.append(out.numpy())
        # Two batch layouts: a near-zero logit was 5e-6 off on a loaded CPU, within the
        # largest logit's roundoff though far outside its own.
        full_logits = np.array(full)
        tol = _logit_roundoff(full_logits)
        np.testing.assert_allclose(r.mask_logits(doc), full_logits, rtol=0, atol=tol)


def test_dp_mlm_output_text_round_trip_and_word_count(mlm: SimpleNamespace) -> None:
    r = dp_mlm(mlm, 5.0, clip=(-1.0, 1.0), max_words=4)
    ys = r.sample_ids("good movie the", 20, np.random.default_rng(3))
    assert all(y.shape == (3,) for y in ys)
    for y in ys:
        assert np.array_equal(r.encode_output(r.decode(y)), y)
    two_words = r.encode_output("good movie")
    assert np.isneginf(r.token_log_probs("good movie the", [two_words])[0]).all()
    with pytest.raises(InvalidArgumentError, match="3 words"):
        next(r.declared_log_probs("good movie the", [two_words]))
    with pytest.raises(InvalidArgumentError):
        r.encode_output("good zebra")
    with pytest.raises(InvalidArgumentError):
        r.sample_ids("a b c d e", 1, np.random.default_rng(0))  # more than max_words


def test_dp_mlm_empty_replacements_stay_words() -> None:
    # An LM head one row wider than the tokenizer (13 ids): id 13 decodes to nothing.
    config = transformers.RobertaConfig(
        vocab_size=14,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        pad_token_id=1,
    )
    wide = transformers.RobertaForMaskedLM(config).eval()
    r = dp_mlm(SimpleNamespace(model=wide, tokenizer=_tokenizer()), 1.0, clip=(-1.0, 1.0))
    ids = np.array([5, 13, 12])
    assert r.decode(ids) == "good  the"
    assert np.array_equal(r.encode_output("good  the"), ids)
    assert r.declared_matrix("good movie").shape == (2, 14)


def test_dp_mlm_caches_the_latest_documents(mlm: SimpleNamespace) -> None:
    r = dp_mlm(mlm, 1.0, clip=(-1.0, 1.0), max_words=4)
    first = r.declared_matrix("good movie")
    assert r.declared_matrix("good movie") is first and not first.flags.writeable
    for doc in ("a", "b", "c", "the film"):  # four newer documents evict the first
        r.declared_matrix(doc)
    again = r.declared_matrix("good movie")
    assert again is not first and np.array_equal(again, first)
    uncached = dataclasses.replace(r, cached_documents=0)
    assert uncached.declared_matrix("a") is not uncached.declared_matrix("a")


def test_merged_token_classes_carry_their_total_mass() -> None:
    lp = np.log(np.array([[0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.25, 0.25]]))
    canonical = np.array([0, 1, 0, 1])  # ids 0, 2 share a text; so do 1, 3
    merged = _merge_classes(lp, canonical)
    np.testing.assert_allclose(np.exp(merged), [[0.4, 0.6, 0, 0], [0.5, 0.5, 0, 0]], atol=1e-15)
    assert _merge_classes(lp, np.arange(4)) is lp


def test_dp_mlm_draws_are_those_of_lm_sample_rows(mlm: SimpleNamespace) -> None:
    # Same inverse-CDF rule and the same random stream as one sample_rows call per output.
    r = dp_mlm(mlm, 3.0, clip=(-1.0, 1.0), max_words=4)
    ys = r.sample_ids("good movie the", 50, np.random.default_rng(11))
    matrix, rng = r.declared_matrix("good movie the"), np.random.default_rng(11)
    expected = [sample_rows(matrix, rng) for _ in range(50)]
    assert all(np.array_equal(a, b) for a, b in zip(ys, expected, strict=True))


def test_dp_mlm_sampling_follows_the_declared_distribution(mlm: SimpleNamespace) -> None:
    r = dp_mlm(mlm, 8.0, clip=(-1.0, 1.0), max_words=4)
    n = 20000
    ys = np.array(r.sample_ids("good movie", n, np.random.default_rng(7)))
    probs = np.exp(r.declared_matrix("good movie"))
    for w in range(2):
        freq = np.bincount(ys[:, w], minlength=probs.shape[1]) / n
        sd = np.sqrt(probs[w] * (1 - probs[w]) / n)
        # 13 cells × 2 words at 5 binomial standard deviations: a false failure has p < 1e-5.
        assert np.all(np.abs(freq - probs[w]) <= 5 * sd + 1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_correct_dp_mlm_never_flagged(mlm: SimpleNamespace, seed: int) -> None:
    r = dp_mlm(mlm, 1.0, clip=(-1.0, 1.0), max_words=2)
    pairs = [("good movie", "bad movie", "sentiment word"), ("good", "bad", "one word")]
    res = audit_rewriter(r, pairs, RewriterAuditConfig(samples=200, final_samples=1000, seed=seed))
    assert res.verdict is not Verdict.VIOLATION
    assert res.detail.max_exact_token_loss <= r.claim.epsilon + 1e-6
    assert not exact_violation(res)
    assert res.detail.declaration_matches  # fidelity level 1e-3 per pair: a false mismatch is rare


def test_unclipped_dp_mlm_is_flagged(mlm: SimpleNamespace) -> None:
    # The same mechanism without the clip: the scaled head's logits span about ±50, so at
    # T = 4 single replacements carry losses of several nats (7.6 seen) against 1 per word.
    r = _unclipped(dp_mlm(mlm, 1.0, clip=(-1.0, 1.0), max_words=1))
    res = audit_rewriter(
        r, [("good", "bad", "one word")], RewriterAuditConfig(samples=200, final_samples=1000)
    )
    assert res.detail.max_exact_token_loss > 3.0
    assert exact_violation(res)
    assert res.verdict is Verdict.VIOLATION and res.detail.lower_bound > 1.0


# ---------------------------------------------------------------- DP-BART


def _clipped_states(model: SimpleNamespace, document: str, length: int, c: float) -> np.ndarray:
    enc = model.tokenizer(
        document, padding="max_length", max_length=length, truncation=True, return_tensors="pt"
    )
    with torch.no_grad():
        h = model.model.get_encoder()(**enc).last_hidden_state[0]
    return torch.clamp(h, -c, c).double().numpy()


def test_dp_bart_noise_scale_is_sensitivity_over_epsilon() -> None:
    m = _bart()
    r = dp_bart(m, 2.0, clip=0.1, max_length=6)
    k = 6 * 16  # n·d coordinates
    assert r.true_sensitivity == pytest.approx(2 * 0.1 * k)  # L1 of value clipping
    assert r.noise_scale == pytest.approx(2 * 0.1 * k / 2.0)
    assert r.calibration_covers and r.worst_case_epsilon() == pytest.approx(2.0)
    g = dp_bart(m, 2.0, delta=1e-5, noise="gaussian", clip=0.1, max_length=6)
    assert g.true_sensitivity == pytest.approx(2 * 0.1 * math.sqrt(k))  # L2
    assert g.noise_scale == pytest.approx(
        2 * 0.1 * math.sqrt(k) * math.sqrt(2 * math.log(1.25e5)) / 2
    )
    assert g.noise_scale == pytest.approx(classic_gaussian_sigma(2.0, 1e-5, g.true_sensitivity))


def test_dp_bart_analytic_loss_equals_the_closed_form() -> None:
    m = _bart()
    r = dp_bart(m, 2.0, clip=0.1, max_length=6)
    x, x_prime = "good movie", "bad film the"
    a, b = _clipped_states(m, x, 6, 0.1), _clipped_states(m, x_prime, 6, 0.1)
    l1 = float(np.sum(np.abs(a - b)))
    # float32 encoder states computed twice: each of the 96 coordinates agrees to a few ulps.
    assert r.analytic_loss(x, x_prime) == pytest.approx(l1 / r.noise_scale, rel=1e-6)
    assert 0 < r.analytic_loss(x, x_prime) <= r.claim.epsilon
    # The Laplace loss random variable never exceeds ‖c − c'‖₁/b (triangle inequality).
    released = r.release(x, 500, np.random.default_rng(0))
    assert np.all(r.privacy_loss(x, x_prime, released) <= l1 / r.noise_scale + 1e-9)
    g = dp_bart(m, 2.0, delta=1e-5, noise="gaussian", clip=0.1, max_length=6)
    eps_pair = g.analytic_loss(x, x_prime)
    l2 = float(np.linalg.norm((a - b).ravel()))
    assert gaussian_delta(eps_pair, g.noise_scale, l2) == pytest.approx(1e-5, rel=1e-6)
    # Gaussian loss of releases from x: N(η, 2η), η = Δ²/2σ²; mean within 5 standard errors.
    eta = l2**2 / (2 * g.noise_scale**2)
    loss = g.privacy_loss(x, x_prime, g.release(x, 4000, np.random.default_rng(1)))
    assert abs(loss.mean() - eta) <= 5 * math.sqrt(2 * eta / 4000)


def test_dp_bart_calibrated_per_coordinate_exceeds_its_claim() -> None:
    # Noise for sensitivity 2C (one coordinate) on a release of n·d = 96 coordinates.
    m = _bart()
    r = dp_bart(m, 1.0, clip=0.1, max_length=6, claimed_sensitivity=0.2)
    assert not r.calibration_covers
    assert r.worst_case_epsilon() == pytest.approx(96.0)
    losses = [r.analytic_loss("good movie", y) for y in ("bad movie", "good film", "the")]
    assert max(losses) > r.claim.epsilon


def test_dp_bart_classic_gaussian_true_epsilon() -> None:
    # The authors' scripts: classic Gaussian at ε = 250, δ = 1e-5 (the ratio σ/Δ₂ alone sets
    # the exact ε, so the tiny model gives the same numbers as bart-base).
    m = _bart()
    true = {
        e: dp_bart(m, e, delta=1e-5, noise="gaussian").worst_case_epsilon() for e in (1.0, 250.0)
    }
    assert true[1.0] == pytest.approx(0.75098, abs=1e-4)  # valid (conservative) below ε ≈ 8
    assert true[250.0] == pytest.approx(1550.48, abs=0.01)
    analytic = dp_bart(m, 250.0, delta=1e-5, noise="analytic_gaussian")
    assert analytic.worst_case_epsilon() == pytest.approx(250.0, rel=1e-9)


def test_dp_bart_lengths_padding_and_sampling() -> None:
    m = _bart()
    unpadded = dp_bart(m, 1.0, max_length=6, pad=False)
    assert unpadded.analytic_loss("good", "good movie") == math.inf
    assert unpadded.worst_case_epsilon() == math.inf
    r = dp_bart(m, 1000.0, max_length=6)
    texts = r.sample("good movie", 5, np.random.default_rng(0))
    assert len(texts) == 5 and all(isinstance(t, str) for t in texts)
    small = dataclasses.replace(r, batch_size=2)  # batching does not change the decoding
    assert small.sample("good movie", 5, np.random.default_rng(0)) == texts


def test_dp_mlm_text_sampler_audits_like_the_token_sampler(mlm: SimpleNamespace) -> None:
    # The black-box path: released text is re-tokenised word by word (encode_output).
    r = dp_mlm(mlm, 1.0, clip=(-1.0, 1.0), max_words=2)
    res = audit_rewriter(
        r,
        [("good movie", "bad movie", "sentiment word")],
        RewriterAuditConfig(samples=200, final_samples=500, seed=1),
        sampler=r.sample,
    )
    assert res.detail.declaration_matches and not exact_violation(res)
    assert res.verdict is not Verdict.VIOLATION


def test_dp_mlm_word_count_is_released_without_noise(mlm: SimpleNamespace) -> None:
    # One output word per input word: documents of different lengths are told apart with
    # certainty (outside the claim's equal-length neighbours, but a fact of the mechanism).
    r = dp_mlm(mlm, 1.0, clip=(-1.0, 1.0), max_words=2)
    res = audit_rewriter(
        r,
        [("good movie", "good", "length")],
        RewriterAuditConfig(samples=100, final_samples=500, seed=0),
    )
    assert res.detail.pairs[0].forward.max_token_loss == math.inf
    # The equal-length claim does not cover the pair: reported, never a violation ...
    assert res.verdict is Verdict.OUTSIDE_CLAIM and res.detail.lower_bound > 2.0
    assert (
        res.detail.exact_verdict is Verdict.NO_VIOLATION_FOUND and not res.detail.pairs[0].covered
    )
    # ... whereas a claim over any two documents is broken by it.
    anyone = dataclasses.replace(r, claim=dataclasses.replace(r.claim, neighbours="any"))
    res = audit_rewriter(
        anyone,
        [("good movie", "good", "length")],
        RewriterAuditConfig(samples=100, final_samples=500, seed=0),
    )
    assert res.verdict is Verdict.VIOLATION and res.detail.exact_verdict is Verdict.VIOLATION


def test_privfill_dp_bart_shared_noise_and_box() -> None:
    m = _bart()
    r = dp_bart_privfill(m, 10.0, noise="laplace", max_length=8)
    assert r.box == (-0.2, 0.1) and r.sensitivity == pytest.approx(0.2 * 16)
    assert not r.calibration_covers  # true L1: 0.3 per coordinate on 8·16 coordinates
    assert r.worst_case_epsilon() == math.inf
    # Same token length, so the shapes agree; the state differences vary by position.
    assert r.analytic_loss("good movie", "bad movie") == math.inf
    released = r.release("good movie", 200, np.random.default_rng(0))
    assert np.allclose(np.diff(released, axis=1), np.diff(r.clipped_states("good movie"), axis=0))
    loss = r.privacy_loss("good movie", "bad movie", released)
    assert np.all(loss == math.inf)  # every release is impossible under x'
    assert np.all(r.privacy_loss("good movie", "good movie", released) == 0.0)
    # One position: the release is d coordinates of true sensitivity 0.3·d, 1.5× the claimed.
    one = dataclasses.replace(r, max_length=1, pad=True)
    assert one.worst_case_epsilon() == pytest.approx(15.0)
    with pytest.raises(InvalidArgumentError):
        one.clipped_states("good")  # <s> good </s> cannot be truncated to one token


# ---------------------------------------------------------------- DP-MLM, released code


def test_released_dpmlm_without_copies_is_the_paper_mechanism(mlm: SimpleNamespace) -> None:
    base = dp_mlm(mlm, 1.0, clip=(-1.0, 1.0), max_words=2)
    released = ReleasedDPMLM(base, copy_case=False)
    lp_base = base.declared_matrix("good movie")
    lp = released.declared_matrix("good movie")
    table = released.tokenizer.index
    for v, text in enumerate(base.token_texts):  # word-level vocabulary: texts are distinct
        np.testing.assert_array_equal(lp[:, table[text]], lp_base[:, v])
    res = audit_rewriter(
        released,
        [("good movie", "bad movie", "sentiment word")],
        RewriterAuditConfig(samples=200, final_samples=1000, seed=0),
    )
    assert res.verdict is not Verdict.VIOLATION and not exact_violation(res)
    assert res.detail.max_exact_token_loss <= base.claim.epsilon + 1e-6
    assert res.detail.declaration_matches


def test_released_dpmlm_numbers_its_outputs_in_a_fixed_order(mlm: SimpleNamespace) -> None:
    """Output ids follow the sorted case styles, not a set's PYTHONHASHSEED-dependent order.

    The ids decide which output a seeded draw gives; numbered in a set's order, the
    lm-rewriters figure changed between processes (a fidelity p of 0.866 or 0.365).
    """
    released = ReleasedDPMLM(dp_mlm(mlm, 1.0, clip=(-1.0, 1.0), max_words=2))
    released.declared_matrix("good Movie")  # two styles: "capitalize" sorts before "lower"
    texts = released.base.token_texts
    assert (
        released.tokenizer.strings[: len(texts)]
        == list(dict.fromkeys(t.capitalize() for t in texts))[: len(texts)]
    )


@pytest.mark.parametrize(
    ("x", "x_prime", "origin"),
    [("good the", "good a", "stopword copied"), ("Good movie", "good movie", "case copied")],
)
def test_released_dpmlm_copies_are_infinite_losses(
    mlm: SimpleNamespace, x: str, x_prime: str, origin: str
) -> None:
    base = dp_mlm(mlm, 1.0, clip=(-1.0, 1.0), max_words=2)
    released = ReleasedDPMLM(base, stopwords=frozenset({"the"}))
    assert released.copied("the") and released.copied("()") and not released.copied("a")
    res = audit_rewriter(
        released, [(x, x_prime, origin)], RewriterAuditConfig(samples=200, final_samples=500)
    )
    assert res.detail.max_exact_token_loss == math.inf and exact_violation(res)
    assert res.verdict is Verdict.VIOLATION and res.detail.lower_bound > 2.0
    out = released.sample(x, 3, np.random.default_rng(0))
    if origin == "stopword copied":
        assert all(t.split(" ")[1] == "the" for t in out)
    else:
        assert all(t[:1].isupper() or t.startswith("<") for t in out)


def test_released_dpmlm_units_stay_in_this_process(mlm: SimpleNamespace) -> None:
    """Its output ids number strings in the order this process met them: never shipped to
    Ray (refused, naming the backend) and never checkpointed (a later run could not read them)."""
    from dpaudit.engine.config import ExecutionConfig

    released = ReleasedDPMLM(dp_mlm(mlm, 1.0, clip=(-1.0, 1.0), max_words=2))
    with pytest.raises(InvalidArgumentError, match="numbered in this process"):
        audit_rewriter(
            released, [("good the", "good a", "stopword")],
            RewriterAuditConfig(samples=10, final_samples=10),
            execution=ExecutionConfig(backend="ray", workers=1),
        )  # fmt: skip
