"""SUE / OUE (Wang et al. 2017 §4.2) and their embedding application: GOF, pmf, exact loss."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import special, stats

from dpaudit.analysis.randomized_response import max_abs_log_ratio
from dpaudit.errors import DPAuditError
from dpaudit.mechanisms import make_mechanism
from dpaudit.mechanisms.unary_encoding import slots_for_max, unary_encode

# GOF tolerance: chi-square p-value of a correct sampler is uniform on (0, 1); we
# require p > 1e-3 at a fixed seed (fails for one seed in a thousand).
ALPHA = 1e-3


def test_unary_encode_by_hand() -> None:
    np.testing.assert_array_equal(unary_encode([2], 4), [0, 0, 1, 0])
    np.testing.assert_array_equal(
        unary_encode([[0, 2], [1, 1]], 3), [[1, 0, 0, 0, 0, 1], [0, 1, 0, 0, 1, 0]]
    )
    assert unary_encode([3, 0], 4).dtype == np.uint8
    np.testing.assert_array_equal(unary_encode(np.array([1.0]), 2), [0, 1])


@pytest.mark.parametrize("bad", [[4], [-1], [0.5], [math.nan]])
def test_unary_encode_rejects(bad: list[float]) -> None:
    with pytest.raises(DPAuditError, match="categories"):
        unary_encode(bad, 4)


def test_probabilities_are_the_papers() -> None:
    e = math.e
    sue = make_mechanism("sue", epsilon=2.0, k=5)
    assert (sue.p, sue.q) == pytest.approx((e / (1 + e), 1 / (1 + e)))
    oue = make_mechanism("oue", epsilon=1.0, k=5)
    assert (oue.p, oue.q) == pytest.approx((0.5, 1 / (1 + e)))
    # r values: budget ε/r per block (standard composition).
    oue_emb = make_mechanism("oue-embedding", epsilon=1.0, dim=50, k=11)
    assert oue_emb.q == pytest.approx(1 / (1 + math.exp(1 / 50)))
    # ...not the OME reference's q = 1/(1 + e^{ε/2r}) (documented, not reproduced).
    assert oue_emb.q != pytest.approx(1 / (1 + math.exp(1 / 100)))


def _all_outputs(bits: int) -> np.ndarray:
    return np.array(list(itertools.product([0, 1], repeat=bits)), dtype=float)


@pytest.mark.parametrize(
    ("name", "params", "x"),
    [
        ("sue", {"k": 3}, [1]),
        ("oue", {"k": 3}, [2]),
        ("sue", {"k": 2, "dim": 2}, [1, 0]),
        ("oue-embedding", {"k": 2, "dim": 2}, [0.3, 1.7]),
    ],
)
def test_joint_chi_square_against_log_prob(name: str, params: dict, x: list[float]) -> None:
    """Sampled output patterns follow exp(log_prob): checks sampler and pmf together."""
    mech = make_mechanism(name, epsilon=1.3, **params)
    n = 60_000
    out = mech.sample(x, n, np.random.default_rng(21))
    assert out.shape == (n, mech.dim * mech.k)
    assert out.dtype == np.uint8
    patterns = _all_outputs(out.shape[1])
    probs = np.exp(mech.log_prob(x, patterns))
    assert probs.sum() == pytest.approx(1.0, abs=1e-12)
    codes = out.astype(np.int64) @ (1 << np.arange(out.shape[1])[::-1])
    counts = np.bincount(codes, minlength=len(patterns))
    assert stats.chisquare(counts, n * probs).pvalue > ALPHA
    # Power: the pmf of a different input is rejected at the same sample size.
    other = [0] * len(x) if x[0] >= 1 else [1] * len(x)
    wrong = np.exp(mech.log_prob(other, patterns))
    assert stats.chisquare(counts, n * wrong).pvalue < ALPHA


@pytest.mark.parametrize("name", ["sue", "oue", "sue-embedding", "oue-embedding"])
def test_exact_loss_by_enumeration(name: str) -> None:
    mech = make_mechanism(name, epsilon=0.9, k=3, dim=2)
    outputs = _all_outputs(6)
    inputs = list(itertools.product(range(3), repeat=2))
    logps = {x: mech.log_prob(list(x), outputs) for x in inputs}
    for lp in logps.values():
        assert special.logsumexp(lp) == pytest.approx(0.0, abs=1e-12)
    worst = 0.0
    for a, b in itertools.product(inputs, repeat=2):
        brute = max_abs_log_ratio(logps[a], logps[b])
        assert mech.privacy_loss(list(a), list(b)) == pytest.approx(brute, rel=1e-12, abs=1e-14)
        worst = max(worst, brute)
    truth = mech.truth()
    assert truth.true_epsilon == pytest.approx(worst, rel=1e-12)
    assert truth.true_epsilon == pytest.approx(0.9, rel=1e-12)
    assert not truth.violates(mech.claim)


def test_embedding_categories_are_integer_parts() -> None:
    mech = make_mechanism("sue-embedding", epsilon=1.0, dim=4, k=4)
    np.testing.assert_array_equal(mech.categories([0.0, 0.99, 3.5, 4.0]), [0, 0, 3, 3])
    np.testing.assert_array_equal(mech.encode([0.0, 0.99, 3.5, 2.0])[:8], [1, 0, 0, 0] * 2)
    # The largest value of the data range has its slot (the reference's off-by-one is fixed).
    k = slots_for_max(3.7)
    assert k == 4
    top = make_mechanism("sue-embedding", epsilon=1.0, dim=1, k=k)
    np.testing.assert_array_equal(top.encode([3.7]), [0, 0, 0, 1])


@pytest.mark.parametrize(
    ("name", "x"),
    [
        ("sue", [4]),
        ("sue", [1.5]),
        ("oue", [[1]]),
        ("sue-embedding", [11.5] + [0.0] * 49),
        ("oue-embedding", [-0.1] + [0.0] * 49),
        ("oue-embedding", [math.nan] + [0.0] * 49),
        ("oue-embedding", [0.0] * 49),
    ],
)
def test_bad_inputs(name: str, x: list) -> None:
    mech = make_mechanism(name, epsilon=1.0)
    with pytest.raises(DPAuditError, match="x"):
        mech.sample(x, 3, np.random.default_rng(0))


@pytest.mark.parametrize(
    ("params", "argument"),
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": 1.0, "k": 1}, "k"),
        ({"epsilon": 1.0, "dim": 0}, "dim"),
    ],
)
def test_bad_parameters(params: dict, argument: str) -> None:
    for name in ("sue", "oue-embedding"):
        with pytest.raises(DPAuditError, match=argument):
            make_mechanism(name, **params)
