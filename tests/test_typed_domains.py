"""Typed input domains: validation, candidate pairs inside the domain, parsing, and
black-box audits of typed user functions (correct ones pass, broken ones are flagged)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from dpaudit import AuditConfig, ExecutionConfig, audit_mechanism, progress
from dpaudit.claims import Definition, PrivacyClaim
from dpaudit.domains import (
    Boolean,
    Categories,
    Dataset,
    IntRange,
    RealBox,
    Vector,
    Words,
    parse_domain,
    parse_pair,
)
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.output_grid import round_to_grid
from dpaudit.testing import as_mechanism, assert_no_violation

DOMAINS = [
    RealBox(0.0, 1.0, 5),
    IntRange(0, 10),
    Boolean(),
    Categories(("a", "b", "c")),
    Categories(tuple(range(12))),
    Words(["alice", "bob", "carol"]),
    Vector(IntRange(0, 3), 3),
    Dataset(IntRange(0, 100), 20, "add-remove"),
    Dataset(Words(["x", "y"]), 5, "replace-one"),
]


@pytest.mark.parametrize("domain", DOMAINS, ids=lambda d: d.describe())
def test_pairs_and_points_lie_inside_the_domain(domain: Any) -> None:
    pairs = domain.candidate_pairs()
    assert pairs
    for a, b in pairs:
        assert a != b
        domain.validate(a)
        domain.validate(b, "x_prime")
        if isinstance(domain, Dataset):
            assert domain.are_neighbours(a, b)
    points = domain.index_points()
    assert len(points) >= 2
    for p in points:
        domain.validate(p)
    if isinstance(domain, Dataset):  # any two index points must be neighbours
        assert all(domain.are_neighbours(p, q) for p in points for q in points if p != q)


def test_box_patterns_include_the_reflection_through_the_centre() -> None:
    # A pair and its swap are one pair (the audit scores both orientations).
    pairs = {tuple(sorted((tuple(a), tuple(b)))) for a, b in RealBox(0.0, 1.0, 5).candidate_pairs()}
    # DP-Sniper's best ReportNoisyMax1 pair (1,1,1,1,1)/(0,2,2,2,2), placed in the unit box.
    assert ((0.0, 1.0, 1.0, 1.0, 1.0), (1.0, 0.0, 0.0, 0.0, 0.0)) in pairs
    # A step from the centre and its reflection through the centre.
    assert ((0.5,) * 5, (1.0, 0.0, 0.0, 0.0, 0.0)) in pairs
    assert ((0.0, 1.0, 1.0, 1.0, 1.0), (0.5,) * 5) in pairs
    # Nothing is clipped: every value is a face or the midpoint.
    assert {v for p in pairs for x in p for v in x} == {0.0, 0.5, 1.0}


@pytest.mark.parametrize(
    ("domain", "bad"),
    [
        (IntRange(0, 10), 11),
        (IntRange(0, 10), 2.5),
        (IntRange(0, 10), True),
        (Boolean(), 1),
        (Categories(("a", "b")), "c"),
        (Words(["alice", "bob"]), "eve"),
        (Vector(IntRange(0, 3), 3), [0, 1]),
        (Dataset(IntRange(0, 9), 3), [1, 2, 3, 4]),
        (Dataset(IntRange(0, 9), 3), [1, 20]),
        (RealBox(0.0, 1.0, 2), [0.5, 2.0]),
    ],
)
def test_bad_values_are_refused_naming_the_argument(domain: Any, bad: Any) -> None:
    with pytest.raises(InvalidArgumentError, match="x"):
        domain.validate(bad, "x")


def test_parse_domain_and_pair() -> None:
    assert parse_domain("int:0..10") == IntRange(0, 10)
    assert parse_domain("bool") == Boolean()
    assert parse_domain("cat:a,b,c") == Categories(("a", "b", "c"))
    assert parse_domain("str:alice,bob") == Words(["alice", "bob"])
    assert parse_domain("real:0..1x5") == RealBox(0.0, 1.0, 5)
    assert parse_domain("vec:3:int:0..3") == Vector(IntRange(0, 3), 3)
    d = parse_domain("dataset:int:0..100,max=20,neighbours=add-remove")
    assert d == Dataset(IntRange(0, 100), 20, "add-remove")
    assert parse_domain("dataset:cat:a,b,max=4,neighbours=replace-one").record.values == ("a", "b")
    assert parse_pair(d, "[1, 2]|[1, 2, 100]") == ([1, 2], [1, 2, 100])
    assert parse_pair(parse_domain("str:alice,bob"), "alice|bob") == ("alice", "bob")
    with pytest.raises(InvalidArgumentError, match="--pair"):
        parse_pair(d, "[1]|[2]")  # not add/remove neighbours
    for text in ("float:0..1", "int:5", "dataset:int:0..3,size=3", "bool:x"):
        with pytest.raises(InvalidArgumentError, match="--domain"):
            parse_domain(text)


# --- audits of typed user functions -------------------------------------------------
EPS = 1.0
CONFIG = {"samples": 3_000, "final_samples": 6_000}


def _audit(fn: Any, domain: Any, seed: int = 0, eps: float = EPS) -> Any:
    progress.ENABLED = False
    claim = PrivacyClaim(Definition.PURE, eps, domain)
    mech = as_mechanism(fn, claim)
    return audit_mechanism(mech, AuditConfig(seed=seed, **CONFIG), ExecutionConfig(workers=1))


def rr_bool(x: bool, n: int, rng: np.random.Generator) -> list[bool]:
    keep = rng.random(n) < np.exp(EPS) / (1 + np.exp(EPS))
    return [bool(x) if k else not x for k in keep]


def rr_bool_broken(x: bool, n: int, rng: np.random.Generator) -> list[bool]:
    keep = rng.random(n) < 0.9  # ln 9 ≈ 2.2 > ε
    return [bool(x) if k else not x for k in keep]


CATS = ("red", "green", "blue", "other")


def krr(x: str, n: int, rng: np.random.Generator) -> list[str]:
    k = len(CATS)
    p = np.exp(EPS) / (np.exp(EPS) + k - 1)
    others = [c for c in CATS if c != x]
    return [x if rng.random() < p else others[rng.integers(k - 1)] for _ in range(n)]


def krr_broken(x: str, n: int, rng: np.random.Generator) -> list[str]:
    return [x if rng.random() < 0.5 else "other" for _ in range(n)]  # "red" never from "blue"


def laplace_count(d: list[int], n: int, rng: np.random.Generator) -> np.ndarray:
    return round_to_grid(len(d) + rng.laplace(0.0, 1.0 / EPS, size=n), 1.0 / EPS)


def laplace_sum_broken(d: list[int], n: int, rng: np.random.Generator) -> np.ndarray:
    return sum(d) + rng.laplace(0.0, 1.0 / EPS, size=n)  # scaled for sensitivity 1; true: 100


def int_geometric_broken(x: int, n: int, rng: np.random.Generator) -> list[int]:
    return [int(v) for v in x + rng.geometric(0.5, size=n)]  # support shifts with x


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    ("fn", "domain"),
    [
        (rr_bool, Boolean()),
        (krr, Categories(CATS)),
        (laplace_count, Dataset(IntRange(0, 100), 10, "add-remove")),
    ],
    ids=["rr-bool", "krr-cat", "laplace-count-dataset"],
)
def test_correct_typed_mechanisms_are_not_flagged(fn: Any, domain: Any, seed: int) -> None:
    r = _audit(fn, domain, seed)
    assert not r.violation, (seed, r.epsilon_lower_bound)


@pytest.mark.parametrize(
    ("fn", "domain"),
    [
        (rr_bool_broken, Boolean()),
        (krr_broken, Categories(CATS)),
        (laplace_sum_broken, Dataset(IntRange(0, 100), 10, "add-remove")),
        (int_geometric_broken, IntRange(0, 10)),
    ],
    ids=["rr-bool", "krr-cat", "laplace-sum-dataset", "int-shift"],
)
def test_broken_typed_mechanisms_are_flagged(fn: Any, domain: Any) -> None:
    r = _audit(fn, domain)
    assert r.violation and r.epsilon_lower_bound > EPS


# --- datasets expose several neighbouring pairs ----------------------------------------
@pytest.mark.parametrize("neighbours", ["add-remove", "replace-one"])
def test_dataset_exposes_several_neighbouring_pairs(neighbours: str) -> None:
    domain = Dataset(IntRange(0, 100), 6, neighbours)
    mech = as_mechanism(laplace_count, PrivacyClaim(Definition.PURE, EPS, domain))
    listed = mech.neighbouring_pairs()
    assert len(listed) >= 4
    points = mech.index_points()
    for x, xp, origin in listed:
        a, b = points[int(x[0])], points[int(xp[0])]
        assert domain.are_neighbours(a, b), origin
        assert repr(a)[:10] in origin


def count_exact_when_full(d: list[int], n: int, rng: np.random.Generator) -> np.ndarray:
    """Laplace count, but a full dataset (6 records) is released exactly: ε = ∞ there."""
    if len(d) == 6:
        return np.full(n, 6.0)
    return round_to_grid(len(d) + rng.laplace(0.0, 1.0 / EPS, size=n), 1.0 / EPS)


def test_a_leak_only_at_the_full_dataset_is_flagged() -> None:
    # Only the "remove from a full dataset" pair shows it (the first pair, a small
    # base and one more record, never reaches 6 records).
    r = _audit(count_exact_when_full, Dataset(IntRange(0, 100), 6, "add-remove"))
    assert r.violation and r.epsilon_lower_bound > EPS


def test_typed_pairs_in_assert_no_violation() -> None:
    progress.ENABLED = False
    claim = PrivacyClaim(Definition.PURE, EPS, Categories(CATS))
    r = assert_no_violation(krr, claim, samples=3_000, pairs=[("red", "blue")])
    assert r.detail.pairs_tried >= 1
    with pytest.raises(InvalidArgumentError, match="x_prime"):
        assert_no_violation(krr, claim, samples=3_000, pairs=[("red", "purple")])
