"""DP synthetic text audited with canaries: corpus scores, the DP bigram generator, invink."""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.api import audit_training
from dpaudit.auditors.training.one_run import OneRunConfig
from dpaudit.claims import ApproxDP
from dpaudit.errors import InvalidArgumentError, MechanismError
from dpaudit.mechanisms.training.dp_bigram import DPBigramText
from dpaudit.mechanisms.training.synthetic import (
    CallableSyntheticText,
    SyntheticCorpus,
    corpus_scores,
)


def test_corpus_scores_by_hand() -> None:
    corpus = SyntheticCorpus(("a b c", "a b", "x y"))
    scores = corpus_scores(corpus, ["A B c", "q r"])
    # "a b c": bigrams <s>a, ab, bc, c</s>, all four in the first text (case folded).
    assert scores["echo"][0] == 1.0 and scores["echo"][1] == 0.0
    # Add-one bigram model: counts n(<s>,a)=2, n(<s>)=3, vocabulary {<s>,</s>,a,b,c,x,y} + 1.
    v = 8
    by_hand = np.mean(
        [
            math.log((2 + 1) / (3 + v)),  # <s> a
            math.log((2 + 1) / (2 + v)),  # a b
            math.log((1 + 1) / (2 + v)),  # b c
            math.log((1 + 1) / (1 + v)),  # c </s>
        ]
    )
    assert scores["bigram"][0] == pytest.approx(by_hand, rel=1e-12)
    assert scores["bigram"][1] < scores["bigram"][0]


def test_novel_counts_only_the_canarys_bigrams_no_base_text_holds() -> None:
    corpus = SyntheticCorpus(("a b c", "x y z"))
    base = ["a b", "q"]
    # "a b c y z": inner bigrams ab (in the base), bc, cy, yz; bc and yz are in the corpus.
    scores = corpus_scores(corpus, ["a b c y z", "a b", "m n"], base)
    assert scores["novel"][0] == pytest.approx(2 / 3)
    assert scores["novel"][1] == 0.0  # nothing of its own: ab is the base's
    assert scores["novel"][2] == 0.0  # its own bigram never released
    assert set(scores) == {"echo", "bigram", "novel"}


def test_echo_canaries_use_frequent_words_in_bigrams_no_one_else_holds() -> None:
    from itertools import pairwise

    from dpaudit.auditors.training.canaries import ECHO_TOKENS, ECHO_VOCABULARY, draw_canaries

    gen = DPBigramText()
    drawn = draw_canaries("echo", 200, gen.base, np.random.default_rng(3))
    assert drawn.base == tuple(gen.base) and len(drawn.records) == 200
    texts = [r.text.casefold().split() for r in gen.base]
    counts: dict[str, int] = {}
    for t in texts:
        for w in t:
            counts[w] = counts.get(w, 0) + 1
    frequent = set(sorted(counts, key=lambda w: -counts[w])[:ECHO_VOCABULARY])
    held = {g for t in texts for g in pairwise(t)}
    used: set[tuple[str, str]] = set()
    for canary in drawn.records:
        words = canary.text.split()
        assert len(words) == ECHO_TOKENS and set(words) <= frequent
        grams = set(pairwise(words))
        assert len(grams) == ECHO_TOKENS - 1 and not grams & held and not grams & used
        used |= grams
    again = draw_canaries("echo", 200, gen.base, np.random.default_rng(3))
    assert again == drawn  # from the seed alone
    with pytest.raises(InvalidArgumentError, match="fewer echo canaries"):
        draw_canaries("echo", 10, ["a b", "b a"], np.random.default_rng(0))


def test_one_text_moves_the_table_by_at_most_the_sensitivity_the_claim_assumes() -> None:
    gen = DPBigramText(max_bigrams=4)
    base = [r.text for r in gen.base[:50]]
    long = " ".join(f"w{i}" for i in range(30))  # 31 distinct bigrams, 30 unknown words
    diff = gen.counts([*base, long]) - gen.counts(base)
    assert diff.min() >= 0 and diff.sum() <= 4 and np.sqrt((diff**2).sum()) <= 2.0
    assert gen.claim.mu == 1.0 and gen.noise_std == pytest.approx(2.0)


def test_with_almost_no_noise_the_sampler_draws_the_data_bigram_law() -> None:
    gen = DPBigramText(noise_multiplier=1e-9, threshold=0.0, texts=4000)
    texts = [r.text for r in gen.base]
    out = gen.generate(texts, np.random.default_rng(0))
    first = [t.split()[0] if t else "" for t in out]
    data_first = [t.casefold().split()[0] for t in texts]
    words, expected = np.unique(data_first, return_counts=True)
    observed = np.array([first.count(w) for w in words])
    assert observed.sum() == len(out)  # no first word outside the data's
    # Pooled χ² over the first words seen ≥ 20 times in the data (the rest pooled).
    common = expected >= 20
    obs = np.append(observed[common], observed[~common].sum())
    exp = np.append(expected[common], expected[~common].sum()) * len(out) / expected.sum()
    assert stats.chisquare(obs, exp).pvalue > 1e-3


#: A canary echoes only if a sampled chain walks into its bigrams, so the echo grows with the
#: corpus released: with 1000 texts the flaw below was refuted on 3 of seeds 0-3 (μ_lcb 0.94
#: on seed 1), with 4000 on all four (μ_lcb 1.074 each, 2026-12-02).  Both tests use 4000.
RELEASED = 4000


@pytest.mark.parametrize("seed", [0, 1])
def test_the_correct_generator_is_not_flagged(seed: int) -> None:
    config = OneRunConfig(canary_kind="random-tokens", delta=1e-5, seed=seed)
    result = audit_training(DPBigramText(texts=RELEASED), method="one-run", config=config)
    assert not result.violation, result.verdict_text


@pytest.mark.parametrize("seed", [0, 1])
def test_noise_only_on_observed_bigrams_is_flagged(seed: int) -> None:
    # Support that depends on the data: a canary's bigrams echo only when it was included.
    config = OneRunConfig(canary_kind="random-tokens", delta=1e-5, seed=seed)
    trainer = DPBigramText(flaw="noise-on-observed", texts=RELEASED)
    result = audit_training(trainer, method="one-run", config=config)
    assert result.violation and result.epsilon_lower_bound > 2.0


def test_a_generator_that_copies_its_private_texts_is_flagged() -> None:
    base = [r.text for r in DPBigramText().base]

    def copy_some(texts: list[str], rng: np.random.Generator) -> list[str]:
        return [t for t in texts if rng.random() < 0.5]

    trainer = CallableSyntheticText(copy_some, base, ApproxDP(1.0, 1e-5), label="copier")
    config = OneRunConfig(canary_kind="random-tokens", seed=0)
    result = audit_training(trainer, method="one-run", config=config)
    assert result.violation and result.epsilon_lower_bound > 1.0


def test_a_generator_returning_no_texts_is_an_error_naming_it() -> None:
    trainer = CallableSyntheticText(lambda texts, rng: 3, ["a b"], ApproxDP(1.0, 1e-5), label="g")
    with pytest.raises(MechanismError, match="g returned int"):
        trainer.train(["a b"], np.random.default_rng(0))
    with pytest.raises(InvalidArgumentError, match="flaw"):
        DPBigramText(flaw="none-at-all")


@pytest.mark.skipif(importlib.util.find_spec("invink") is None, reason="invink not installed")
def test_invisible_ink_releases_one_text_per_batch_reproducibly() -> None:
    from dpaudit.adapters.invink import InvisibleInkSynthesizer
    from dpaudit.text.models import tiny_model

    tiny = tiny_model("causal", seed=0)
    tiny.tokenizer.chat_template = "{% for m in messages %}{{ m['content'] }} {% endfor %}"
    synth = InvisibleInkSynthesizer(tiny.model, tiny.tokenizer, max_toks=3, topk=50, batch_size=3)
    texts = ["the cat sat", "a dog ran", "it was good", "we ate food", "so bad"]
    first = synth(texts, np.random.default_rng(4))
    assert len(first) == 2 and all(isinstance(t, str) for t in first)  # 5 // (3 − 1)
    assert synth(texts, np.random.default_rng(4)) == first
    trainer = CallableSyntheticText(synth, texts, synth.claim, label="invink")
    corpus = trainer.train(texts, np.random.default_rng(4))
    assert corpus.texts == tuple(first)
    assert set(trainer.scores(corpus, ["the cat sat"])) == {"echo", "bigram", "novel"}


def test_the_cli_reads_the_generators_curve_at_its_own_delta_or_the_given_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from _cli import run_cli_quiet

    args = ("audit-training", "dp-bigram", "-p", "texts=200", "--canaries", "200")
    code, out, _ = run_cli_quiet(capsys, *args)
    assert code == 0 and "claim: 1-GDP at δ = 1e-05" in out
    code, out, _ = run_cli_quiet(capsys, *args, "--delta", "0.001")
    assert code == 0 and "claim: 1-GDP at δ = 0.001" in out
    code, _, err = run_cli_quiet(capsys, *args, "-p", "flaw=sometimes")
    assert code == 2 and "flaw" in err
