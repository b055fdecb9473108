"""The pyPANTERA adapter (``pypantera:NAME``) on small cases, and the package's findings.

Everything runs on the 2 000 most frequent words of GloVe 6B 50-d (the package
loads them itself from a file the adapter writes), seeded.  Statistical checks
are chi-square tests at α = 1e-3 (a correct adapter fails one time in 1 000);
audit verdicts rest on Clopper–Pearson bounds at confidence 0.95, with fixed
seeds, so each test is deterministic and can fail only if the code changes.
"""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from dpaudit.adapters import pypantera as pp

if not pp.available():
    pytest.skip("pypantera is not installed (extra 'pypantera')", allow_module_level=True)

from dpaudit.adapters import word_adapter
from dpaudit.adapters.pypantera import PypanteraMechanism, embedding_file, make_pypantera
from dpaudit.analysis.word_embedding import glove_embedding
from dpaudit.auditors.core.goodness_of_fit import pooled_chi_square
from dpaudit.auditors.metric.auditor import VIOLATION, MetricAuditConfig, audit_metric
from dpaudit.engine.config import ExecutionConfig
from dpaudit.errors import InvalidArgumentError, UnknownNameError
from dpaudit.mechanisms.registry import make_word_mechanism
from dpaudit.mechanisms.word.base import CRASH

SIZE = 2000


def _mech(name: str, epsilon: float, **kw: object) -> PypanteraMechanism:
    return PypanteraMechanism(epsilon=epsilon, mechanism=name, size=SIZE, **kw)  # type: ignore[arg-type]


def _audit(mech: PypanteraMechanism, pair: tuple[str, str], n: int, seed: int = 1) -> object:
    cfg = MetricAuditConfig(samples=n, final_samples=2 * n, pairs=(pair,), search=False, seed=seed)
    return audit_metric(mech, cfg, ExecutionConfig(workers=1))


def test_names_reach_the_adapter() -> None:
    mech = word_adapter("pypantera:tem")(epsilon="2", size="2000")  # type: ignore[misc]
    assert isinstance(mech, PypanteraMechanism) and mech.mechanism == "TEM"
    assert mech.epsilon == 2.0 and mech.size == SIZE
    with pytest.raises(InvalidArgumentError):
        make_pypantera("pypantera:nope", epsilon=1)
    with pytest.raises(UnknownNameError):
        make_pypantera("pypantera:CMP", epsilon=1, lambda_=1)
    with pytest.raises(InvalidArgumentError, match="epsilon"):
        make_pypantera("pypantera:CMP")


def test_a_shadowing_src_package_is_refused(tmp_path: Path) -> None:
    # pyPANTERA installs a top-level package named 'src': another one earlier on sys.path
    # wins, and the adapter must refuse it rather than audit someone else's code.
    fake = tmp_path / "src" / "EmbeddingPerturbationMechanism"
    fake.mkdir(parents=True)
    (tmp_path / "src" / "__init__.py").write_text("")
    (fake / "__init__.py").write_text("")
    (fake / "cmp.py").write_text("class CMP:\n    pass\n")
    code = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        from dpaudit.adapters.pypantera import import_pypantera
        from dpaudit.errors import DPAuditError
        try:
            import_pypantera("CMP")
        except DPAuditError as e:
            print("refused" if "shadows" in str(e) else e)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert out.stdout.strip() == "refused", out.stderr[-2000:]


def test_vocabulary_is_what_the_package_loaded() -> None:
    mech = _mech("CMP", 1.0)
    glove = glove_embedding(SIZE)
    assert mech.vocabulary.words == glove.words  # 2 000 words: no line at a chunk boundary
    assert np.array_equal(mech.vocabulary.matrix, glove.matrix)  # float32 written exactly
    assert mech.lost_words == ()


def test_the_loader_drops_the_line_at_a_chunk_boundary(monkeypatch: pytest.MonkeyPatch) -> None:
    # Package finding: Vocab skips the first line of every chunk but the first, and the
    # previous chunk stops before a line starting exactly at its end.  For the 20 000-word
    # file, 36 chunks (cores) put a boundary at the start of the line of 'belief'.
    from multiprocessing.pool import ThreadPool

    vocab_module = sys.modules[pp.import_pypantera("CMP").__module__.split(".")[0] + ".utils.vocab"]
    monkeypatch.setattr(vocab_module.mp, "cpu_count", lambda: 36)
    monkeypatch.setattr(vocab_module.mp, "Pool", ThreadPool)
    loaded = vocab_module.Vocab(str(embedding_file(20_000))).embeddings
    lost = [w for w in glove_embedding(20_000).words if w not in loaded]
    assert lost == ["belief"]


@pytest.mark.parametrize("name", pp.PANTERA_MECHANISMS)
def test_draws_are_a_function_of_the_unit_rng(name: str) -> None:
    mech = _mech(name, 5.0)
    np.random.seed(123)
    random.seed(123)
    before = np.random.get_state()
    word = "the" if name == "CusText" else "good"  # CusText at ε = 5 crashes on 'good'
    a = mech.sample_codes(word, 40, np.random.default_rng([7, 1]))
    b = mech.sample_codes(word, 40, np.random.default_rng([7, 1]))
    c = mech.sample_codes(word, 40, np.random.default_rng([7, 2]))
    assert np.array_equal(a, b)
    if name != "TEM":  # TEM at ε = 5 returns 'good' itself almost always
        assert not np.array_equal(a, c)
    assert a.dtype == np.int64 and a.min() >= 0 and a.max() < mech.n_codes
    after = np.random.get_state()
    assert before[0] == after[0] and np.array_equal(before[1], after[1])


def test_cmp_agrees_with_dpaudit_cmp() -> None:
    # The same mechanism (Feyisetan et al. 2020) twice: the package's through the adapter
    # and dpaudit's, on the same vocabulary.  Chi-square homogeneity of output counts
    # (cells with expected count >= 5 in the smaller sample, rest pooled), α = 1e-3.
    from scipy.stats import chi2_contingency

    eps, n = 10.0, 1500
    theirs = _mech("CMP", eps)
    ours = make_word_mechanism("cmp", theirs.vocabulary, epsilon=eps)
    k = ours.n_codes
    a = np.bincount(theirs.sample_codes("good", n, np.random.default_rng(1)), minlength=k)
    b = np.bincount(ours.sample_codes("good", 10 * n, np.random.default_rng(2)), minlength=k)
    keep = (a + b) / 11 >= 5
    table = np.array([np.append(a[keep], a[~keep].sum()), np.append(b[keep], b[~keep].sum())])
    table = table[:, table.sum(axis=0) > 0]
    assert table.shape[1] >= 3
    assert chi2_contingency(table).pvalue > 1e-3


@pytest.mark.parametrize(
    ("name", "eps", "word"),
    [("SanText", 3.0, "good"), ("CusText", 1.0, "good"), ("TEM", 5.0, "good")],
)
def test_exact_law_fits_the_real_draws(name: str, eps: float, word: str) -> None:
    # The law read from an instrumented call must describe the package's real sampler:
    # pooled chi-square of 3 000 real draws against it, α = 1e-3.
    mech = _mech(name, eps)
    law = mech.output_log_probs(word)
    assert law is not None and np.isclose(np.exp(law).sum(), 1.0)
    counts = np.bincount(
        mech.sample_codes(word, 3000, np.random.default_rng(5)), minlength=mech.n_codes
    )
    fit = pooled_chi_square(counts, law)
    assert fit.p_value > 1e-3, fit.describe()
    assert mech.output_log_probs(word) is not None  # reading it twice changes nothing
    assert np.array_equal(mech.output_log_probs(word), law)


def test_embedding_mechanisms_have_no_exact_law() -> None:
    assert _mech("CMP", 1.0).output_log_probs("good") is None


def _crashes(mech: PypanteraMechanism, word: str) -> bool:
    law = mech.output_log_probs(word)
    assert law is not None
    return bool(law[mech.vocabulary.size + CRASH] == 0.0)


def _mutual_pair(mech: PypanteraMechanism, first_crashes: bool) -> tuple[str, str]:
    """The first mutual-candidate pair (most frequent words first) where only ``w`` crashes
    (``first_crashes``), or where neither crashes and the candidate sets differ."""
    metric = mech.claim.metric
    assert isinstance(metric, pp.CandidateSetMetric)
    for w in mech.vocabulary.words[:400]:
        for w2 in sorted(metric.candidates(w)):
            if w2 == w or metric.distances([w], [w2])[0] != 1.0 or _crashes(mech, w2):
                continue
            if first_crashes and _crashes(mech, w):
                return w, w2
            differ = metric.candidates(w) != metric.candidates(w2)
            if not first_crashes and not _crashes(mech, w) and differ:
                return w, w2
    raise AssertionError("no such pair among the 400 most frequent words")


def test_custext_crashes_on_most_words_and_the_audit_reports_it() -> None:
    # Package finding: CusText hands np.random.choice a list of float32 probabilities whose
    # float64 sum misses 1 by more than numpy's tolerance (√eps64): ValueError on every draw.
    mech = _mech("CusText", 1.0)
    v = mech.vocabulary.size
    codes = mech.sample_codes("the", 50, np.random.default_rng(0))
    assert np.all(codes == v + CRASH)
    assert _crashes(mech, "the") and not _crashes(mech, "good")
    crashing = [w for w in mech.vocabulary.words[:200] if _crashes(mech, w)]
    assert len(crashing) > 100  # measured: 1 367 of the 2 000 most frequent words at ε = 1
    # A crash is an outcome: one word that always raises beside a mutual candidate that
    # does not is a certified violation of ε-DP.
    result = _audit(mech, _mutual_pair(mech, first_crashes=True), 300)
    (pair,) = result.detail.pairs
    assert pair.verdict == VIOLATION and pair.set_preview == ("<crash>",)


def test_custext_with_k_1_crashes_on_every_word() -> None:
    mech = _mech("CusText", 1.0, k=1)
    v = mech.vocabulary.size
    for word in ("good", "film", "the"):
        assert np.all(mech.sample_codes(word, 5, np.random.default_rng(0)) == v + CRASH)


def test_custext_candidate_sets_differ_a_certified_violation() -> None:
    # Two mutual candidates whose own candidate sets differ: an output of one is
    # impossible for the other (exact loss inf > ε·d = ε).  The sampled audit certifies it.
    mech = _mech("CusText", 1.0)
    result = _audit(mech, _mutual_pair(mech, first_crashes=False), 1000)
    (pair,) = result.detail.pairs
    assert pair.distance == 1.0  # mutual candidates: the claim is plain ε-DP
    assert pair.verdict == VIOLATION and pair.epsilon_lower_bound > 1.0
    assert pair.exact_loss == np.inf


def test_a_correct_mechanism_is_not_flagged() -> None:
    # Control: CMP is the paper's mechanism, correctly sampled (test above); at ε = 10
    # on one near pair the audit must not report a violation.
    result = _audit(_mech("CMP", 10.0), ("good", "great"), 1000)
    assert result.detail.pairs[0].verdict != VIOLATION


def test_tem_bottom_branch_returns_the_input_itself() -> None:
    # Package finding: TEM's ⊥ branch calls np.random.choice on a list of vectors, which
    # raises; the bare except returns the input.  No word outside the γ-ball is ever
    # output, so two words farther apart than γ have exact loss inf.
    mech = _mech("TEM", 10.0)
    lib, vocab = mech.library(), mech.vocabulary
    law = np.exp(mech.output_log_probs("good"))
    d = np.linalg.norm(vocab.matrix - vocab.vector("good"), axis=1)
    outside = d > lib.gamma
    assert outside.sum() > 100 and np.all(law[: vocab.size][outside] == 0.0)
    sim = mech.sample_codes("good", 2000, np.random.default_rng(3))
    assert not np.any(outside[sim[sim < vocab.size]])
    result = _audit(mech, ("good", "great"), 200)
    assert result.detail.pairs[0].exact_loss == np.inf  # d = 3.37 > γ = 2.9


def test_santext_float32_underflow_gives_impossible_outputs_at_large_epsilon() -> None:
    # At ε = 50 (the README's largest) exp(−ε·d/2) underflows float32 for d > ≈ 4.1:
    # those outputs get probability exactly 0 from 'good' but not from words near them.
    mech = _mech("SanText", 50.0)
    law = mech.output_log_probs("good")
    assert law is not None
    assert np.isneginf(law[: mech.vocabulary.size]).sum() > 100
    assert not np.any(np.isneginf(_mech("SanText", 3.0).output_log_probs("good")[:SIZE]))
