"""Building blocks of the attacks against brute force: AUC, HoHo scores, likelihoods, LLR, MAP."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp
from sklearn.metrics import roc_auc_score

from dpaudit.attacks import hoho, optimal
from dpaudit.attacks.auc import auc_per_row, placement_values
from dpaudit.attacks.schemes import build_scheme
from dpaudit.errors import InvalidArgumentError, UnknownNameError
from dpaudit.mechanisms import ome


def test_auc_matches_sklearn_with_ties() -> None:
    rng = np.random.default_rng(1)
    scores = rng.integers(0, 5, size=(6, 40)).astype(float)  # many ties
    positive = rng.random((6, 40)) < 0.3
    got = auc_per_row(scores, positive)
    for i in range(6):
        assert got[i] == pytest.approx(roc_auc_score(positive[i], scores[i]), abs=1e-12)


def test_placement_values_average_to_the_auc() -> None:
    rng = np.random.default_rng(9)
    pos = rng.integers(0, 6, size=30).astype(float)
    neg = rng.integers(0, 6, size=50).astype(float)
    v10, v01 = placement_values(pos, neg)
    auc = roc_auc_score(np.r_[np.ones(30), np.zeros(50)], np.r_[pos, neg])
    assert v10.mean() == pytest.approx(auc) and v01.mean() == pytest.approx(auc)
    # Element-wise definition, ties counted 1/2.
    assert v10[0] == pytest.approx(((neg < pos[0]).sum() + 0.5 * (neg == pos[0]).sum()) / 50)
    assert v01[0] == pytest.approx(((pos > neg[0]).sum() + 0.5 * (pos == neg[0]).sum()) / 30)
    with pytest.raises(InvalidArgumentError):
        placement_values(pos, np.array([]))


def test_auc_edge_cases() -> None:
    out = auc_per_row(np.array([[1.0, 2.0], [np.inf, 0.0]]), np.array([[1, 1], [1, 0]], bool))
    assert np.isnan(out[0]) and out[1] == 1.0
    with pytest.raises(InvalidArgumentError):
        auc_per_row(np.array([[np.nan, 1.0]]), np.array([[True, False]]))


def test_matching_scores_equal_algorithm_1_loops() -> None:
    rng = np.random.default_rng(2)
    outputs = rng.integers(0, 2, size=(7, 22), dtype=np.uint8)
    clean = rng.integers(0, 2, size=(3, 22), dtype=np.uint8)
    even = np.arange(22) % 2 == 0
    got = hoho.matching_scores(outputs, clean, even)
    for m in range(7):
        for t in range(3):
            # HoHo Alg. 1: count equal even bits, divide by floor(len/2) (= 11 here).
            acc = sum(int(clean[t, i] == outputs[m, i]) for i in range(22) if i % 2 == 0)
            assert got[m, t] == pytest.approx(acc / (22 // 2))
    own = hoho.own_matching_scores(outputs[:6].reshape(3, 2, 22), clean, even)
    np.testing.assert_allclose(
        own, [[got[0, 0], got[1, 0]], [got[2, 1], got[3, 1]], [got[4, 2], got[5, 2]]]
    )
    np.testing.assert_array_equal(hoho.reconstruct(outputs, even), outputs[:, ::2])


def test_log_likelihood_matrix_equals_ome_log_likelihood() -> None:
    rng = np.random.default_rng(3)
    clean = ome.encode(rng.uniform(0, 5, size=(4, 2)))
    outputs = rng.integers(0, 2, size=(5, 22), dtype=np.uint8)
    log_one, log_zero = ome.bit_log_probabilities(clean, epsilon=0.5, lam=10.0)
    got = optimal.log_likelihood_matrix(outputs, log_one, log_zero)
    for s in range(4):
        ref = ome.log_likelihood(outputs, clean[s], epsilon=0.5, lam=10.0)
        np.testing.assert_allclose(got[:, s], ref, rtol=1e-12, atol=1e-9)


def test_log_mean_exp_excluding_matches_brute_force_even_with_a_dominant_term() -> None:
    rng = np.random.default_rng(4)
    a = rng.normal(scale=50.0, size=(9, 6))
    a[0, 2] = 5000.0  # one code dominates: naive subtraction would give log(0)
    counts = np.array([1, 2, 1, 3, 1, 1])
    excluded = rng.integers(0, 6, size=(9, 4))
    excluded[0] = [2, 2, 0, 5]
    got = optimal.log_mean_exp_excluding(a, counts, excluded)
    for m in range(9):
        for e in range(4):
            keep = np.arange(6) != excluded[m, e]
            ref = logsumexp(a[m, keep], b=counts[keep]) - np.log(counts[keep].sum())
            assert got[m, e] == pytest.approx(ref, rel=1e-12, abs=1e-9)


def test_linking_llr_is_own_minus_mixture_of_the_others() -> None:
    rng = np.random.default_rng(5)
    ll = rng.normal(size=(5, 4))
    counts = np.array([2, 1, 1, 3])
    targets = np.array([[0], [1], [2], [3], [0]])
    got = optimal.linking_llr(ll, counts, targets)[:, 0]
    for m in range(5):
        t = targets[m, 0]
        keep = np.arange(4) != t
        ref = ll[m, t] - (logsumexp(ll[m, keep], b=counts[keep]) - np.log(counts[keep].sum()))
        assert got[m] == pytest.approx(ref, rel=1e-12)


def test_map_reconstruction_hand_cases() -> None:
    # Output 1 is 9x likelier under a clean 1 than under a clean 0, output 0 likewise reversed.
    l11, l01 = np.log([0.9, 0.9]), np.log([0.1, 0.1])
    l10, l00 = np.log([0.1, 0.1]), np.log([0.9, 0.9])
    y = np.array([[1, 0], [0, 1]], dtype=np.uint8)
    # Uniform prior: MAP copies the bit.
    np.testing.assert_array_equal(
        optimal.map_reconstruction(y, np.array([0.5, 0.5]), l11, l01, l10, l00), y
    )
    # A prior of 1/100 on position 0 outweighs the evidence 9:1; position 1 keeps copying.
    est = optimal.map_reconstruction(y, np.array([0.01, 0.5]), l11, l01, l10, l00)
    np.testing.assert_array_equal(est, [[0, 0], [0, 1]])
    np.testing.assert_allclose(optimal.bit_prior(np.array([[1, 0], [1, 0]])), [0.75, 0.25])
    np.testing.assert_array_equal(
        optimal.prior_only_reconstruction(np.array([0.75, 0.25]), 2), [[1, 0], [1, 0]]
    )


def test_unary_log_probabilities_and_perturbation_rates() -> None:
    v = np.array([[0.5, 2.2]])
    scheme = build_scheme("oue", 2.0, v)  # k = 3, per-value ε/r = 1 -> p = 1/2, q = 1/(1+e)
    clean = scheme.encode(v)
    log_one, log_zero = scheme.bit_log_probabilities(clean)
    q = 1.0 / (1.0 + np.e)
    np.testing.assert_allclose(np.exp(log_one), np.where(clean == 1, 0.5, q))
    np.testing.assert_allclose(np.exp(log_one) + np.exp(log_zero), 1.0)
    rows = np.repeat(clean, 40_000, axis=0)
    freq = scheme.perturb(rows, np.random.default_rng(6)).mean(axis=0)
    expected = np.exp(log_one[0])
    # 5 binomial standard errors per position.
    assert np.all(np.abs(freq - expected) <= 5 * np.sqrt(expected * (1 - expected) / 40_000))


def test_perturbation_does_not_depend_on_batching() -> None:
    v = np.random.default_rng(7).uniform(0, 3, size=(10, 3))
    for name, params in (("ome", {"lambda": 10}), ("sue", {})):
        scheme = build_scheme(name, 1.0, v, params)
        clean = scheme.encode(v)
        whole = scheme.perturb(clean, np.random.default_rng(8))
        rng = np.random.default_rng(8)
        parts = np.vstack([scheme.perturb(clean[:4], rng), scheme.perturb(clean[4:], rng)])
        np.testing.assert_array_equal(whole, parts)


def test_build_scheme_errors() -> None:
    v = np.ones((3, 2))
    with pytest.raises(InvalidArgumentError, match="scheme"):
        build_scheme("rappor", 1.0, v)
    with pytest.raises(InvalidArgumentError, match="dim"):
        build_scheme("ome", 1.0, v, {"dim": 5})
    with pytest.raises(UnknownNameError, match="lambda"):
        build_scheme("sue", 1.0, v, {"lambda": 10})
    with pytest.raises(InvalidArgumentError, match="epsilon"):
        build_scheme("ome", -1.0, v)


def test_scheme_claims_and_exact_epsilon() -> None:
    v = np.array([[0.2, 4.4]])
    scheme = build_scheme("ome", 1.0, v, {"lambda": "100"})
    assert scheme.mechanism.params()["domain"] == (0.0, 5.0)
    assert scheme.hoho_positions.sum() == 11  # even positions of 22 bits
    truth = scheme.mechanism.truth()
    assert truth is not None and truth.true_epsilon > 1.0  # λ = 100 breaks the claim
    sue = build_scheme("sue", 0.5, v)
    assert sue.k == 5 and sue.hoho_positions.all()
    assert sue.mechanism.truth().true_epsilon == pytest.approx(0.5)
