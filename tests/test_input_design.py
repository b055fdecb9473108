"""The black-box input design (dpaudit.auditors.blackbox.design): leaks away from the corners.

Statistics: every audit certifies on fresh final samples, so a flag is a valid bound
whatever the design chose; what these tests check is *power*.  The interior leak below
has an exact loss of ln 20 ≈ 3 on a set of mass ≈ 0.5 against a claim of 1, so at
10⁵ final samples the certified bound is far above 1 whenever the design puts a pair
inside the interval (its 128 points are 1/128 apart, the interval 1/50 wide).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit import progress
from dpaudit.auditors.blackbox.auditor import AuditConfig, SearchConfig, audit
from dpaudit.auditors.blackbox.design import OutputSets, design_points, pair_scores
from dpaudit.auditors.blackbox.pairs import InputPair
from dpaudit.auditors.core.statistics import clopper_pearson_lower, clopper_pearson_upper
from dpaudit.claims import Definition, InputDomain, PrivacyClaim
from dpaudit.domains import IntRange
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.mechanisms.output_grid import round_to_grid
from dpaudit.testing import as_mechanism

ONE = ExecutionConfig(workers=1)
UNIT = PrivacyClaim(Definition.PURE, 1.0, InputDomain((1,), 0.0, 1.0))
K = 64


def interior(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Laplace(1) noise (1-DP on [0, 1]) except for x in [0.61, 0.63], where it is 20× smaller."""
    scale = 0.05 if 0.61 <= float(x[0]) <= 0.63 else 1.0
    return round_to_grid(x[0] + scale * rng.laplace(0.0, 1.0, size=(n, 1)), scale)


def laplace(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    return round_to_grid(x[0] + rng.laplace(0.0, 1.0, size=(n, 1)), 1.0)


def randomized_response(v: int, n: int, rng: np.random.Generator, broken: int = 37) -> np.ndarray:
    """k-RR over 64 values at ε = 1, except value ``broken`` kept as at ε = 3 (loss 2 extra)."""
    eps = 3.0 if v == broken else 1.0
    keep = rng.random(n) < math.exp(eps) / (math.exp(eps) + K - 1)
    other = rng.integers(0, K - 1, size=n)
    return np.where(keep, v, other + (other >= v))


def correct_response(v: int, n: int, rng: np.random.Generator) -> np.ndarray:
    return randomized_response(v, n, rng, broken=-1)


def _audit(fn: object, claim: PrivacyClaim, seed: int, design: bool = True) -> object:
    progress.ENABLED = False
    cfg = AuditConfig(
        samples=20_000,
        final_samples=100_000,
        seed=seed,
        search=SearchConfig(input_design=design),
    )
    return audit(as_mechanism(fn, claim), cfg, ONE)


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow), 2])
def test_an_interior_interval_leak_is_found_without_a_pair(seed: int) -> None:
    off = _audit(interior, UNIT, seed, design=False)
    on = _audit(interior, UNIT, seed)
    assert not off.violation  # the patterns and their moves never visit the interval
    assert on.violation and on.epsilon_lower_bound > 2.0
    inside = [v for v in (*on.witness.x, *on.witness.x_prime) if 0.61 <= v <= 0.63]
    assert inside and "design" in on.witness.pair_origin


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow), 2])
def test_one_broken_category_of_64_is_found(seed: int) -> None:
    claim = PrivacyClaim(Definition.PURE, 1.0, IntRange(0, K - 1))
    r = _audit(randomized_response, claim, seed)
    assert r.violation and r.epsilon_lower_bound > 1.5
    assert 37 in r.witness.values
    assert any("screened every pair of the domain's 64 inputs" in n for n in r.notes)


@pytest.mark.parametrize("fn", [laplace, correct_response])
def test_where_the_corners_are_worst_nothing_changes(fn: object) -> None:
    """A correct mechanism: the design adds no pair, so the bound is bit-identical."""
    claim = UNIT if fn is laplace else PrivacyClaim(Definition.PURE, 1.0, IntRange(0, K - 1))
    on, off = _audit(fn, claim, 0), _audit(fn, claim, 0, design=False)
    assert not on.violation
    assert on.epsilon_lower_bound == off.epsilon_lower_bound
    assert on.detail.pairs_tried == off.detail.pairs_tried
    assert on.samples["design"] > 0 and "design" not in off.samples


def test_pair_scores_are_the_clopper_pearson_ratio_of_the_best_set() -> None:
    # Two sets, three points of 100 outputs: point 0 hits set 0 often, point 1 rarely.
    hits = np.array([[90.0, 10.0], [5.0, 95.0], [50.0, 50.0]])
    n = np.array([100, 100, 100])
    scores, errors = pair_scores(hits, n)
    e = 1e-3
    expect = math.log(clopper_pearson_lower(90, 100, e)) - math.log(
        clopper_pearson_upper(5, 100, e)
    )
    assert scores[0, 1] == pytest.approx(expect)
    assert errors[0, 1] == pytest.approx(math.sqrt(1 / 90 + 1 / 5))
    assert np.all(np.isneginf(np.diag(scores)))


def test_output_sets_count_tails_bins_atoms_and_nan() -> None:
    v = np.array([[0.0], [1.0], [1.0], [1.0], [2.0], [np.nan]])
    w = np.ones(len(v))
    sets = OutputSets.read(v, w)
    assert list(sets.atoms[0]) == [1.0]  # the one value seen at least 3 times
    hits = sets.count(v, w)
    edges = sets.edges[0]
    below = [(v[:, 0] < e).sum() for e in edges]
    assert list(hits[: len(edges)]) == below  # lower tails {y < e}
    assert hits[-2] == 3 and hits[-1] == 1  # the atom {y = 1}, then NaN


def test_the_design_is_seeded_and_keeps_the_audits_own_points_first() -> None:
    mech = as_mechanism(laplace, UNIT)
    own = [InputPair((0.0,), (1.0,), "box pattern")]
    a = design_points(mech, own, 128, seed=3)
    assert a[:2] == [(0.0,), (1.0,)] and len(a) == 128
    assert a == design_points(mech, own, 128, seed=3)
    assert a != design_points(mech, own, 128, seed=4)
    assert all(0.0 <= p[0] <= 1.0 for p in a)
