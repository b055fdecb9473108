"""The mldp-text adapter (``mldp:NAME``) on small cases.

mldp-text pins numpy < 2 and scipy < 1.13, so it lives in its own environment
(``.venv-mldp``, extra ``mldp``).  These tests run there; in the main
environment they are skipped and ``tests/test_mldp_env.py`` runs this file in
``.venv-mldp`` by subprocess.
"""

from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from dpaudit.adapters._support import library_available

if not library_available("mldp_text"):  # checked without importing it (its import may download)
    pytest.skip("mldp-text is not installed (extra 'mldp')", allow_module_level=True)

from dpaudit.adapters import word_adapter
from dpaudit.adapters._wordnet import wordnet_data_dir
from dpaudit.adapters.mldp import (
    MLDPMechanism,
    import_mldp,
    inter_word_distances,
    make_mldp,
    package_embedding,
    package_keyed_vectors,
    package_vectors,
)
from dpaudit.analysis.word_embedding import WordEmbedding
from dpaudit.auditors.metric.auditor import VIOLATION, MetricAuditConfig, audit_metric
from dpaudit.engine.config import ExecutionConfig
from dpaudit.errors import DPAuditError, InvalidArgumentError, UnknownNameError
from dpaudit.mechanisms.registry import make_word_mechanism

#: The exact inter-word distances of the package's vocabulary (inter_word_distances computes
#: them in ≈ 30 s; passing them keeps these tests fast — the search is tested below).
GUMBEL_INTER = {"min_inter_dist": 0.7446196209482931, "max_inter_dist": 16.252268213915638}


def _wordnet_available() -> bool:
    try:
        wordnet_data_dir(None)
    except DPAuditError:
        return False
    return True


def test_import_attempts_no_network() -> None:
    # A fresh interpreter whose sockets refuse (and record) every connection: importing
    # mldp_text (which calls nltk.download('wordnet') when NLTK has none) must not try.
    code = textwrap.dedent(
        """
        import socket
        tried = []
        def refuse(self, address, *a, **k):
            tried.append(address)
            raise OSError("network disabled in this test")
        socket.socket.connect = refuse
        socket.create_connection = lambda address, *a, **k: refuse(None, address)
        import nltk
        before = nltk.download
        from dpaudit.adapters.mldp import import_mldp
        import_mldp()
        assert nltk.download is before, "nltk.download not restored"
        assert not tried, tried
        print("ok")
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_package_vectors_equal_gensim_loader() -> None:
    # The adapter reads the package's GloVe file with pandas instead of gensim (≈ 1 s
    # instead of ≈ 10 s); it must be the same vocabulary and the same float32 vectors.
    from gensim.models import KeyedVectors

    words, matrix = package_vectors()
    kv = KeyedVectors.load_word2vec_format(import_mldp().utils.EMBED, unicode_errors="ignore")
    assert list(words) == list(kv.index_to_key)
    assert np.array_equal(matrix, kv.vectors)
    mine = package_keyed_vectors()
    assert mine.index_to_key == kv.index_to_key and np.array_equal(mine.vectors, kv.vectors)


@pytest.mark.parametrize("v", [2, 3, 17, 240])
def test_inter_word_distances_match_brute_force(
    v: int, tmp_path: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    rng = np.random.default_rng(v)
    m = rng.standard_normal((v, 6)).astype(np.float32)
    if v > 3:
        m[3] = m[1]  # a duplicate vector: distance 0 is skipped, as mldp-text does
    emb = WordEmbedding(tuple(f"w{i}" for i in range(v)), m)
    d = np.array(
        [
            np.linalg.norm(m[i].astype(np.float64) - m[j].astype(np.float64))
            for i, j in itertools.combinations(range(v), 2)
        ]
    )
    low, high = inter_word_distances(emb)
    assert low == pytest.approx(d[d > 0].min(), rel=1e-12)
    assert high == pytest.approx(d.max(), rel=1e-12)
    inter_word_distances.cache_clear()
    assert inter_word_distances(emb) == (low, high)  # from the disk cache


def test_truncated_gumbel_default_constructor_fails_on_this_python() -> None:
    # Why the adapter passes min/max_inter_dist: without them the package calls
    # random.sample(dict_keys, k=1), a TypeError since Python 3.11.
    with pytest.raises(TypeError, match="sequence"):
        import_mldp().get_mechanism(
            "truncated_gumbel", epsilon=1.0, embedding_matrix=package_keyed_vectors()
        )


def _mech(name: str, epsilon: float = 1.0, **kw: object) -> MLDPMechanism:
    if name == "truncated_gumbel":
        kw = {**GUMBEL_INTER, **kw}
    return MLDPMechanism(epsilon=epsilon, mechanism=name, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "n"),
    [
        ("multivariate_calibrated", 12),
        ("truncated_gumbel", 30),
        ("vickrey", 12),
        ("tem", 4),
        ("mahalanobis", 6),
    ],
)
def test_draws_are_a_function_of_the_unit_rng(name: str, n: int) -> None:
    mech = _mech(name)
    np.random.seed(123)
    random.seed(123)
    np_before, py_before = np.random.get_state(), random.getstate()
    a = mech.sample_codes("good", n, np.random.default_rng([7, 1]))
    b = mech.sample_codes("good", n, np.random.default_rng([7, 1]))
    c = mech.sample_codes("good", n, np.random.default_rng([7, 2]))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)  # P(equal) < 1e-6 for these n at ε = 1 (outputs spread)
    assert a.dtype == np.int64 and a.min() >= 0 and a.max() < mech.n_codes
    # The caller's global generators are left as they were.
    np_after = np.random.get_state()
    assert np_before[0] == np_after[0] and np.array_equal(np_before[1], np_after[1])
    assert random.getstate() == py_before


def test_multivariate_calibrated_agrees_with_dpaudit_cmp() -> None:
    # Same mechanism (Feyisetan et al., WSDM 2020) twice: mldp-text's through the adapter
    # (its default faiss index, probing 50 of 100 lists; its exact search runs at only
    # ≈ 4 words/s) and dpaudit's vectorised exact CMP, on the same embedding.  Chi-square
    # homogeneity test of their output counts (cells with an expected count ≥ 5, the
    # rest pooled) at α = 1e-3: a miscoded or mis-seeded adapter output shifts the
    # distribution; a correct one fails 1 time in 1000.
    from scipy.stats import chi2_contingency

    eps, n = 20.0, 400  # P(output = input) ≈ 0.67, the rest spread over ~500 words
    ours = make_word_mechanism("cmp", package_embedding(), epsilon=eps)
    theirs = _mech("multivariate_calibrated", eps)
    k = ours.n_codes
    a = np.bincount(theirs.sample_codes("good", n, np.random.default_rng(1)), minlength=k)
    b = np.bincount(ours.sample_codes("good", 20 * n, np.random.default_rng(2)), minlength=k)
    keep = (a + b) / 21 >= 5  # expected count of the smaller sample (n of 21n) at least 5
    table = np.array([np.append(a[keep], a[~keep].sum()), np.append(b[keep], b[~keep].sum())])
    table = table[:, table.sum(axis=0) > 0]
    assert table.shape[1] >= 2, "too few distinct outputs to compare"
    p = chi2_contingency(table).pvalue
    assert p > 1e-3, (p, table)


def test_parallel_audit_is_bit_identical_to_serial() -> None:
    mech = _mech("truncated_gumbel")
    cfg = MetricAuditConfig(
        samples=60, final_samples=60, pairs=(("good", "great"),), search=False, seed=3
    )
    one = audit_metric(mech, cfg, ExecutionConfig(workers=1))
    two = audit_metric(mech, cfg, ExecutionConfig(workers=2))
    assert [(p.p1.hits, p.p2.hits, p.set_rule) for p in one.detail.pairs] == [
        (p.p1.hits, p.p2.hits, p.set_rule) for p in two.detail.pairs
    ]


@pytest.mark.skipif(
    not _wordnet_available(), reason="no WordNet 3.0 (apt-get install wordnet-base)"
)
def test_syntf_violates_plain_dp_with_a_witness() -> None:
    # SynTF draws from the *input word's* WordNet synonyms, so 'food' can become
    # 'nutrient' and 'good' never can: the support differs and ε-DP fails for any ε.
    # With 300 draws per input a claim of ε = 1 is shown false (Clopper–Pearson,
    # one pair, confidence 0.95).
    mech = MLDPMechanism(epsilon=1.0, mechanism="syntf")
    syn = mech.library().syn_scores
    assert "nutrient" in syn["food"] and "nutrient" not in syn["good"]
    pairs = (("food", "good"),)
    cfg = MetricAuditConfig(samples=300, final_samples=300, pairs=pairs, search=False)
    result = audit_metric(mech, cfg)
    worst = result.detail.worst
    assert worst is not None and worst.verdict == VIOLATION
    assert worst.distance == 1.0 and worst.epsilon_lower_bound > 1.0
    assert worst.p2.hits == 0  # the witness set is never produced by the other word


def test_make_mldp_parses_cli_parameters() -> None:
    mech = word_adapter("mldp:mahalanobis")(epsilon="2.5", lam="0.3", use_faiss="false")
    got = (mech.mechanism, mech.epsilon, mech.lam, mech.use_faiss)
    assert got == ("mahalanobis", 2.5, 0.3, False)
    assert "Mahalanobis" in mech.claim.describe()
    with pytest.raises(InvalidArgumentError, match="MECHANISM"):
        make_mldp("mldp:nope", epsilon=1)
    with pytest.raises(UnknownNameError):
        make_mldp("mldp:tem", epsilon=1, colour="red")
    with pytest.raises(InvalidArgumentError, match="epsilon"):
        make_mldp("mldp:tem")
    with pytest.raises(InvalidArgumentError, match="use_faiss"):
        make_mldp("mldp:tem", epsilon=1, use_faiss="maybe")
    assert make_mldp("mldp:tem", epsilon=1).radius == pytest.approx(34.7)


def test_mechanism_pickles_small() -> None:
    import pickle

    mech = _mech("vickrey")
    mech.library()
    blob = pickle.dumps(mech)
    assert len(blob) < 2000  # the configuration, never the embedding or the library object
    assert pickle.loads(blob).spec() == mech.spec()


@pytest.mark.skipif(
    not _wordnet_available(), reason="no WordNet 3.0 (apt-get install wordnet-base)"
)
def test_cli_audits_mldp_names(capsys: pytest.CaptureFixture[str]) -> None:
    from _cli import run_cli_quiet

    argv = ["audit", "mldp:syntf", "--epsilon", "1", "--pair", "food;good", "--max-pairs", "1"]
    code, out, err = run_cli_quiet(
        capsys, *argv, "--samples", "200", "--final-samples", "300", "--json"
    )
    assert code == 0, err
    result = json.loads(out)
    assert result["violation"] is True and result["detail"]["pairs"][0]["w"] == "food"
    code, _, err = run_cli_quiet(capsys, *argv, "--vocabulary-size", "100")
    assert code == 2 and "--vocabulary-size" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_cli_quiet(capsys, "audit", "mldp:nope", "--epsilon", "1")
    assert code == 2 and "mldp:" in err
