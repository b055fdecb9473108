"""Exact sensitivity of norm clipping: closed form, brute force, and property tests."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.analysis.sensitivity import (
    NORMS,
    clip_to_norm,
    clipping_sensitivity,
    lp_norm,
    parse_norm,
)
from dpaudit.errors import DPAuditError, InvalidArgumentError

INF = math.inf

# The nine cases written out by hand (C = 1): 2·n^max(0, 1/q − 1/p).
HAND_TABLE = {
    (1.0, 1.0): lambda n: 2.0,
    (1.0, 2.0): lambda n: 2.0,
    (1.0, INF): lambda n: 2.0,
    (2.0, 1.0): lambda n: 2.0 * math.sqrt(n),  # Habernal 2021, Thm. 5.1
    (2.0, 2.0): lambda n: 2.0,
    (2.0, INF): lambda n: 2.0,
    (INF, 1.0): lambda n: 2.0 * n,
    (INF, 2.0): lambda n: 2.0 * math.sqrt(n),
    (INF, INF): lambda n: 2.0,
}


@pytest.mark.parametrize(("p", "q"), list(HAND_TABLE))
@pytest.mark.parametrize("n", [1, 2, 3, 7, 128])
def test_nine_cases_match_hand_table_and_witness_attains(p: float, q: float, n: int) -> None:
    bound = 2.5
    res = clipping_sensitivity(p, q, n, bound)
    assert res.sensitivity == pytest.approx(bound * HAND_TABLE[(p, q)](n), rel=1e-12)
    # The witness really attains the value, computed from the clipped vectors.
    f1 = clip_to_norm(np.array(res.r1), bound, p)
    f2 = clip_to_norm(np.array(res.r2), bound, p)
    assert float(lp_norm(f1 - f2, q)) == pytest.approx(res.sensitivity, rel=1e-12)
    assert res.witness_distance == pytest.approx(res.sensitivity, rel=1e-12)


def test_acceptance_l2_clip_l1_norm_dim_128() -> None:
    res = clipping_sensitivity(2, 1, 128, 1)
    assert abs(res.sensitivity - 2 * math.sqrt(128)) <= 1e-9
    assert res.claimed == 2.0


def _brute_force(p: float, q: float, n: int, bound: float, points_per_axis: int) -> float:
    """Max ||f(a) − f(b)||_q over a grid of inputs in [−1.5C, 1.5C]^n (includes corners, 0)."""
    axis = np.linspace(-1.5 * bound, 1.5 * bound, points_per_axis)
    grid = np.array(list(itertools.product(axis, repeat=n)))
    clipped = clip_to_norm(grid, bound, p)
    best = 0.0
    for row in clipped:  # one vectorised pass per row keeps memory small
        best = max(best, float(lp_norm(clipped - row, q).max()))
    return best


@pytest.mark.parametrize(("p", "q"), list(HAND_TABLE))
@pytest.mark.parametrize(("n", "points"), [(1, 31), (2, 21), (3, 9)])
def test_brute_force_grid_agrees(p: float, q: float, n: int, points: int) -> None:
    bound = 1.3
    exact = clipping_sensitivity(p, q, n, bound).sensitivity
    brute = _brute_force(p, q, n, bound, points)
    # The grid contains the extremal directions (axes and diagonals), so the
    # brute-force maximum equals the closed form up to rounding, and can never exceed it.
    assert brute <= exact * (1 + 1e-12)
    assert brute == pytest.approx(exact, rel=1e-12)


@pytest.mark.parametrize(("p", "q"), list(HAND_TABLE))
def test_random_search_never_exceeds(p: float, q: float) -> None:
    rng = np.random.default_rng(7)
    n, bound = 4, 0.7
    exact = clipping_sensitivity(p, q, n, bound).sensitivity
    # Random directions scaled beyond the ball, i.e. on the clipped boundary.
    a = clip_to_norm(rng.normal(size=(20000, n)) * 10, bound, p)
    b = clip_to_norm(rng.normal(size=(20000, n)) * 10, bound, p)
    dist = lp_norm(a - b, q)
    assert dist.max() <= exact * (1 + 1e-12)
    # ...and random search gets reasonably close (a sanity check of the search itself).
    assert dist.max() >= 0.8 * exact


vectors = st.integers(min_value=1, max_value=6).flatmap(
    lambda n: st.tuples(
        st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=n, max_size=n),
        st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=n, max_size=n),
    )
)


@settings(max_examples=300, deadline=None)
@given(
    pair=vectors,
    p=st.sampled_from(NORMS),
    q=st.sampled_from(NORMS),
    bound=st.floats(0.01, 100.0),
)
def test_property_no_pair_exceeds_sensitivity(
    pair: tuple[list[float], list[float]], p: float, q: float, bound: float
) -> None:
    r1, r2 = (np.array(v) for v in pair)
    exact = clipping_sensitivity(p, q, len(r1), bound).sensitivity
    dist = float(lp_norm(clip_to_norm(r1, bound, p) - clip_to_norm(r2, bound, p), q))
    assert dist <= exact * (1 + 1e-12)


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(1, 300),
    p=st.sampled_from(NORMS),
    q=st.sampled_from(NORMS),
    bound=st.floats(1e-3, 1e3),
)
def test_property_witness_attains(n: int, p: float, q: float, bound: float) -> None:
    res = clipping_sensitivity(p, q, n, bound)
    f1 = clip_to_norm(np.array(res.r1), bound, p)
    f2 = clip_to_norm(np.array(res.r2), bound, p)
    assert float(lp_norm(f1 - f2, q)) == pytest.approx(res.sensitivity, rel=1e-9)
    # The witness lies in the clipping ball, so clipping leaves it unchanged.
    assert float(lp_norm(np.array(res.r1), p)) <= bound * (1 + 1e-12)


def test_clip_is_identity_inside_and_projects_outside() -> None:
    r = np.array([[0.3, 0.4], [3.0, 4.0], [0.0, 0.0]])
    out = clip_to_norm(r, 1.0, 2.0)
    np.testing.assert_allclose(out, [[0.3, 0.4], [0.6, 0.8], [0.0, 0.0]])
    assert out[0].tolist() == [0.3, 0.4]  # bit-exact identity inside the ball
    np.testing.assert_allclose(clip_to_norm([2.0, -2.0], 1.0, 1.0), [0.5, -0.5])
    np.testing.assert_allclose(clip_to_norm([2.0, -0.5], 1.0, INF), [1.0, -0.25])


@pytest.mark.parametrize("p", NORMS)
def test_clip_survives_huge_and_tiny_vectors(p: float) -> None:
    # ‖r‖ overflows float64 here; clipping must still land on the sphere, not at 0.
    huge = clip_to_norm(np.array([1e308, -1e308, 1e308]), 2.0, p)
    assert float(lp_norm(huge, p)) == pytest.approx(2.0, rel=1e-12)
    assert np.all(np.sign(huge) == [1, -1, 1])
    tiny = np.array([5e-324, 0.0, -5e-324])
    np.testing.assert_array_equal(clip_to_norm(tiny, 2.0, p), tiny)
    np.testing.assert_array_equal(clip_to_norm(np.zeros(3), 2.0, p), np.zeros(3))


@pytest.mark.parametrize("text", ["1", "2", "inf", "INF", 1, 2.0, math.inf])
def test_parse_norm_accepts(text: object) -> None:
    assert parse_norm("p", text) in NORMS


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"clip_norm": 3, "norm": 1, "dim": 2, "bound": 1}, "clip_norm"),
        ({"clip_norm": 2, "norm": "foo", "dim": 2, "bound": 1}, "norm"),
        ({"clip_norm": 2, "norm": 1, "dim": 0, "bound": 1}, "dim"),
        ({"clip_norm": 2, "norm": 1, "dim": 2, "bound": 0.0}, "bound"),
        ({"clip_norm": 2, "norm": 1, "dim": 2, "bound": -1.0}, "bound"),
        ({"clip_norm": 2, "norm": 1, "dim": 2, "bound": math.nan}, "bound"),
    ],
)
def test_bad_input_names_the_argument(kwargs: dict[str, object], argument: str) -> None:
    with pytest.raises(DPAuditError) as info:
        clipping_sensitivity(**kwargs)  # type: ignore[arg-type]
    assert argument in str(info.value)
    assert isinstance(info.value, (InvalidArgumentError, TypeError))
