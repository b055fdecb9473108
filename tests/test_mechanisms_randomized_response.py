"""Binary and k-ary randomised response: chi-square GOF, pmf, exact loss by enumeration."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import special, stats

from dpaudit.analysis.randomized_response import max_abs_log_ratio
from dpaudit.errors import DPAuditError
from dpaudit.mechanisms import make_mechanism

# GOF tolerance: the chi-square p-value of a correct sampler is uniform on (0, 1);
# requiring p > 1e-3 fails for one seed in a thousand; seeds are fixed.  Power
# checks show that a slightly wrong pmf is rejected at the same sample size.
ALPHA = 1e-3
N = 50_000


@pytest.mark.parametrize("bit", [0, 1])
def test_rr_chi_square(bit: int) -> None:
    mech = make_mechanism("randomized-response", epsilon=0.8)
    out = mech.sample(bit, N, np.random.default_rng(bit))
    assert out.shape == (N, 1)
    assert set(np.unique(out)) <= {0, 1}
    counts = np.bincount(out.ravel(), minlength=2)
    expected = np.array([mech.p, mech.q]) if bit == 0 else np.array([mech.q, mech.p])
    assert stats.chisquare(counts, N * expected).pvalue > ALPHA
    wrong = expected + np.array([0.02, -0.02])
    assert stats.chisquare(counts, N * wrong).pvalue < ALPHA


@pytest.mark.parametrize(("k", "x"), [(2, 1), (5, 0), (5, 3), (12, 11)])
def test_grr_chi_square(k: int, x: int) -> None:
    mech = make_mechanism("grr", epsilon=1.5, k=k)
    out = mech.sample(x, N, np.random.default_rng(100 + k + x))
    counts = np.bincount(out.ravel(), minlength=k)
    assert counts.size == k
    expected = np.full(k, mech.q)
    expected[x] = mech.p
    assert stats.chisquare(counts, N * expected).pvalue > ALPHA


def test_grr_power() -> None:
    mech = make_mechanism("grr", epsilon=1.5, k=5)
    counts = np.bincount(mech.sample(0, N, np.random.default_rng(1)).ravel(), minlength=5)
    wrong = np.full(5, mech.q)
    wrong[0] = mech.p
    wrong[0] -= 0.02
    wrong[1] += 0.02
    assert stats.chisquare(counts, N * wrong).pvalue < ALPHA


@pytest.mark.parametrize(("name", "k"), [("randomized-response", 2), ("grr", 2), ("grr", 6)])
def test_pmf_sums_to_one_and_exact_loss_by_enumeration(name: str, k: int) -> None:
    params = {"k": k} if name == "grr" else {}
    mech = make_mechanism(name, epsilon=0.9, **params)
    outputs = np.arange(k, dtype=float).reshape(-1, 1)
    for x in range(k):
        assert special.logsumexp(mech.log_prob(x, outputs)) == pytest.approx(0.0, abs=1e-12)
    worst = 0.0
    for x, xp in itertools.product(range(k), repeat=2):
        brute = max_abs_log_ratio(mech.log_prob(x, outputs), mech.log_prob(xp, outputs))
        assert mech.privacy_loss(x, xp) == pytest.approx(brute, rel=1e-12, abs=1e-15)
        worst = max(worst, brute)
    truth = mech.truth()
    assert truth.true_epsilon == pytest.approx(worst, rel=1e-12)
    assert truth.true_epsilon == pytest.approx(0.9, rel=1e-12)
    assert not truth.violates(mech.claim)


def test_log_prob_outside_support() -> None:
    mech = make_mechanism("grr", epsilon=1.0, k=3)
    lp = mech.log_prob(0, np.array([[3.0], [-1.0], [0.5]]))
    assert np.all(np.isneginf(lp))


@pytest.mark.parametrize(
    ("name", "params", "argument"),
    [
        ("randomized-response", {"epsilon": 0.0}, "epsilon"),
        ("grr", {"epsilon": 1.0, "k": 1}, "k"),
        ("grr", {"epsilon": 1.0, "k": "x"}, "k"),
        ("grr", {"epsilon": 1.0, "dim": 2}, "dim"),
    ],
)
def test_bad_parameters(name: str, params: dict[str, object], argument: str) -> None:
    with pytest.raises(DPAuditError, match=argument):
        make_mechanism(name, **params)


@pytest.mark.parametrize(("name", "x"), [("randomized-response", 2), ("grr", 0.5), ("grr", 4)])
def test_bad_inputs(name: str, x: float) -> None:
    mech = make_mechanism(name, epsilon=1.0)
    with pytest.raises(DPAuditError, match="x"):
        mech.sample(x, 5, np.random.default_rng(0))
