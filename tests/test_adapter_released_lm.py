"""The released ``dpmlm`` and ``privfill`` packages, run as they are, on tiny local models.

They live in their own environment (``.venv-released``, extra ``released-lm``:
privfill needs transformers < 5).  Here they are skipped unless installed;
``tests/test_released_env.py`` runs this file in that environment.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.adapters._support import library_available

if not (library_available("dpmlm") and library_available("privfill")):
    pytest.skip("dpmlm/privfill are not installed (extra 'released-lm')", allow_module_level=True)

from lm_threads import one_torch_thread  # noqa: F401  (autouse fixture)

from dpaudit.adapters.nltk_offline import NLTK_ENGLISH_STOPWORDS, ensure_nltk_data
from dpaudit.adapters.released_lm import (
    PRIVFILL_MAX_NEW_TOKENS,
    dpmlm_package,
    privfill_dp_bart,
    privfill_dp_prompt,
)
from dpaudit.auditors.rewriter.blackbox import TextAuditConfig, audit_text_mechanism
from dpaudit.auditors.rewriter.whitebox import RewriterAuditConfig, audit_rewriter
from dpaudit.claims import Unit
from dpaudit.text.models import WORDS
from dpaudit.text.models.checkpoints import save_tiny_checkpoint
from dpaudit.text.neighbours import neighbour_pairs
from dpaudit.verdicts import Verdict

DOC = "the doctor saw the patient today"


@pytest.fixture(scope="module")
def masked_dir(tmp_path_factory):
    # Words only: the package detokenises with NLTK's Treebank detokenizer, which glues a
    # drawn punctuation token to the word before it; the declared model counts words.
    vocab = [w for w in WORDS if w.isalpha()]
    return save_tiny_checkpoint("masked", tmp_path_factory.mktemp("masked"), vocab=vocab)


@pytest.fixture(scope="module")
def bart_dir(tmp_path_factory):
    return save_tiny_checkpoint("seq2seq", tmp_path_factory.mktemp("bart"))


@pytest.fixture(scope="module")
def dpmlm10(masked_dir):
    return dpmlm_package(masked_dir, 10.0)


def test_nltk_data_found_offline():
    import nltk

    found = ensure_nltk_data()
    assert found.source in {"installed", "substitute"}
    assert len(NLTK_ENGLISH_STOPWORDS) == len(set(NLTK_ENGLISH_STOPWORDS)) == 179
    english = set(nltk.corpus.stopwords.words("english"))
    assert {"the", "a", "is", "don't"} <= english
    assert nltk.word_tokenize("The doctor saw her. She was sick.")[:3] == ["The", "doctor", "saw"]


def test_dpmlm_package_reads_its_own_values(dpmlm10):
    import dpmlm

    assert dpmlm10.declared.stopwords == frozenset(dpmlm.core.stop)
    assert dpmlm10.claim.unit is Unit.WORD and dpmlm10.claim.epsilon == 10.0
    # The package's default clip bounds (roberta-base) are what its code uses.
    assert dpmlm10.declared.base.decoding.clip == pytest.approx((-3.2093127, 16.304797887802124))


def test_dpmlm_package_seeded_reproducible_and_restores_global_state(dpmlm10):
    np.random.seed(123)
    before = np.random.get_state()[1].copy()
    a = dpmlm10.sampler(DOC, 20, np.random.default_rng(7))
    b = dpmlm10.sampler(DOC, 20, np.random.default_rng(7))
    c = dpmlm10.sampler(DOC, 20, np.random.default_rng(8))
    assert a == b and a != c
    assert np.array_equal(np.random.get_state()[1], before)
    # Stopwords ("the") are copied verbatim at their positions, in every rewrite.
    assert all(y.split()[0] == "the" and y.split()[3] == "the" for y in a)


def test_dpmlm_package_white_box(dpmlm10):
    """The declared model matches the package's real draws; copied stopwords cost ∞.

    The declared-decoding check runs at level 1e-3 per pair, so on a faithful model
    it reports a mismatch with probability at most 0.002 here (two pairs, fixed seed).
    """
    pairs = neighbour_pairs(DOC, ("one_word", "stopword"))
    config = RewriterAuditConfig(samples=100, final_samples=200, seed=3)
    result = audit_rewriter(dpmlm10.declared, pairs, config, sampler=dpmlm10.sampler)
    assert all(p.fidelity.matches for p in result.detail.pairs)
    one_word, stopword = result.detail.pairs
    assert math.isinf(stopword.forward.max_token_loss)
    # A content word's replacement is the clipped exponential mechanism: within ε.
    assert one_word.forward.max_token_loss <= 10.0 + 1e-6
    assert result.detail.exact_verdict is Verdict.VIOLATION


def test_dpmlm_package_copies_case(masked_dir):
    package = dpmlm_package(masked_dir, 1.0)
    pairs = [("Anna saw the doctor", "anna saw the doctor", "case")]
    config = RewriterAuditConfig(samples=50, final_samples=100, seed=1)
    result = audit_rewriter(package.declared, pairs, config, sampler=package.sampler)
    assert result.detail.pairs[0].fidelity.matches
    assert math.isinf(result.detail.pairs[0].forward.max_token_loss)
    rewrites = package.sampler(pairs[0][0], 10, np.random.default_rng(0))
    assert all(y.split()[0][0].isupper() for y in rewrites)


def test_privfill_dp_prompt_runs_black_box(bart_dir):
    package = privfill_dp_prompt(bart_dir, 10.0)
    two = "The doctor saw the patient. She was sick."
    assert package.max_units(two) == 2 * PRIVFILL_MAX_NEW_TOKENS
    a = package.sampler(two, 3, np.random.default_rng(0))
    assert a == package.sampler(two, 3, np.random.default_rng(0))
    pairs = [(two, "The doctor saw the patient.", "length: one sentence fewer")]
    config = TextAuditConfig(samples=20, final_samples=40, statements_per_pair=1)
    result = audit_text_mechanism(
        package.sampler, pairs, package.claim, max_units=package.max_units(two), config=config
    )
    # 40 rewrites certify at most ln(40)-ish; the claim allows 64·ε: nothing can be shown.
    assert result.verdict is not Verdict.VIOLATION
    assert result.detail.ceiling < package.claim.allowed_loss(units=package.max_units(two))


def test_privfill_dp_bart_claim_and_seeding(bart_dir):
    package = privfill_dp_bart(bart_dir, 100.0)
    assert package.claim.unit is Unit.DOCUMENT and package.claim.delta == 1e-5
    doc = "The doctor saw the patient."
    a = package.sampler(doc, 2, np.random.default_rng(5))
    assert a == package.sampler(doc, 2, np.random.default_rng(5))
    assert all(isinstance(y, str) for y in a)
