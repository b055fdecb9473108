"""Input-pair patterns of the black-box audit (dpaudit.auditors.blackbox.pairs)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.auditors.blackbox.pairs import (
    InputPair,
    box_pairs,
    categorical_pairs,
    dedupe,
    dpsniper_pairs,
    generate_pairs,
    parse_pair,
    statdp_patterns,
)
from dpaudit.claims import InputDomain
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms import make_mechanism


def _as_set(pairs: list[InputPair], ordered: bool = True) -> set[tuple[tuple[float, ...], ...]]:
    if ordered:
        return {(p.x, p.x_prime) for p in pairs}
    return {tuple(sorted((p.x, p.x_prime))) for p in pairs}


def test_statdp_shapes_follow_dp_sniper_on_base_one() -> None:
    shapes = {name: (a.tolist(), b.tolist()) for name, a, b in statdp_patterns(4, 1.0, 2.0, 0.0)}
    assert shapes["first lowered"] == ([1, 1, 1, 1], [0, 1, 1, 1])
    assert shapes["first raised"] == ([1, 1, 1, 1], [2, 1, 1, 1])
    assert shapes["first raised, rest lowered"] == ([1, 1, 1, 1], [2, 0, 0, 0])
    assert shapes["first lowered, rest raised"] == ([1, 1, 1, 1], [0, 2, 2, 2])
    assert shapes["half raised, half lowered"] == ([1, 1, 1, 1], [2, 2, 0, 0])
    assert shapes["all raised"] == ([1, 1, 1, 1], [2, 2, 2, 2])
    assert shapes["all lowered"] == ([1, 1, 1, 1], [0, 0, 0, 0])
    assert shapes["X shape"] == ([1, 1, 0, 0], [0, 0, 1, 1])


def test_dpsniper_pairs_for_hoho_scalar_domain() -> None:
    # HoHo's DP-Sniper run: one value in [-10, 10]; base 1, steps ±1, every pair swapped.
    pairs = dpsniper_pairs(InputDomain((1,), -10.0, 10.0))
    assert _as_set(pairs) == {
        ((1.0,), (0.0,)),
        ((0.0,), (1.0,)),
        ((1.0,), (2.0,)),
        ((2.0,), (1.0,)),
    }


def test_dpsniper_pairs_are_clipped_and_swapped() -> None:
    pairs = dpsniper_pairs(InputDomain((3,), 0.0, 1.0))
    for p in pairs:
        assert all(0.0 <= v <= 1.0 for v in p.x + p.x_prime)
        assert p.x != p.x_prime
    assert _as_set(pairs) == {(b, a) for a, b in _as_set(pairs)}
    assert ((1.0, 1.0, 1.0), (0.0, 0.0, 0.0)) in _as_set(pairs)


def test_box_pairs_contain_opposite_corners_inside_domain() -> None:
    domain = InputDomain((5,), -2.0, 3.0)
    pairs = box_pairs(domain)
    assert ((-2.0,) * 5, (3.0,) * 5) in _as_set(pairs)
    for p in pairs:
        domain.validate(np.array(p.x))
        domain.validate(np.array(p.x_prime))


def test_unbounded_domain_uses_claimed_sensitivity_and_diagonal() -> None:
    mech = make_mechanism("adept", epsilon=1.0, dim=8, bound=10.0)
    pairs = generate_pairs(mech)
    diag = 10.0 / math.sqrt(8)
    found = _as_set(pairs, ordered=False)
    assert tuple(sorted(((-diag,) * 8, (diag,) * 8))) in found
    assert tuple(sorted(((-10.0,) * 8, (10.0,) * 8))) in found
    assert all(max(abs(v) for v in p.x + p.x_prime) <= 10.0 for p in pairs)


def test_categorical_pairs_all_for_small_k_subset_for_large_k() -> None:
    small = categorical_pairs(InputDomain((1,), 0, 3, integer=True))
    assert len(small) == 6
    large = categorical_pairs(InputDomain((1,), 0, 9, integer=True))
    assert _as_set(large, ordered=False) == {
        ((a,), (b,)) for a in (0.0, 1.0, 4.0, 9.0) for b in (0.0, 1.0, 4.0, 9.0) if a < b
    }


def test_dedupe_ordered_and_unordered() -> None:
    p, q = InputPair((0,), (1,), "a"), InputPair((1,), (0,), "b")
    same = InputPair((2,), (2,), "c")
    assert len(dedupe([p, q, same, p], ordered=True)) == 2
    assert len(dedupe([p, q, same, p], ordered=False)) == 1


def test_generate_pairs_puts_user_pairs_first_and_dedupes() -> None:
    mech = make_mechanism("laplace", epsilon=1.0)
    user = (InputPair((1.0,), (0.0,), "given"),)
    pairs = generate_pairs(mech, user_pairs=user)
    assert pairs[0].origin == "given"
    assert len(_as_set(pairs, ordered=False)) == len(pairs)
    only = generate_pairs(mech, user_pairs=user, use_patterns=False)
    assert [p.origin for p in only] == ["given"]


def test_parse_pair_broadcasts_one_number() -> None:
    mech = make_mechanism("laplace", epsilon=0.1, dim=20)
    pair = parse_pair("0;1", mech)
    assert pair.x == (0.0,) * 20 and pair.x_prime == (1.0,) * 20
    mech2 = make_mechanism("laplace", epsilon=0.1, dim=2)
    assert parse_pair("0, 1;1,0", mech2).x == (0.0, 1.0)


@pytest.mark.parametrize("text", ["0;2", "0", "0;1;1", "a;b", "0,0,0;1", "0;0", "nan;1", "-0.5;1"])
def test_parse_pair_rejects_bad_pairs_naming_the_option(text: str) -> None:
    mech = make_mechanism("laplace", epsilon=1.0, dim=2)
    with pytest.raises(InvalidArgumentError) as info:
        parse_pair(text, mech)
    assert info.value.argument == "--pair"


def test_user_pair_outside_domain_is_rejected() -> None:
    mech = make_mechanism("laplace", epsilon=1.0)
    with pytest.raises(InvalidArgumentError, match="domain"):
        generate_pairs(mech, user_pairs=(InputPair((0.0,), (5.0,), "given"),))
