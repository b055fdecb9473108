"""Blocks of outputs of any type, on a real box as on a typed domain, read in one place
(:func:`dpaudit.adapters.encoding.encode_block`): numbers keep the array fast path
bit for bit, strings and records become categories with the same codes for both
inputs of a pair and for every domain, and bad blocks are refused naming the output."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import dpaudit
from dpaudit import AuditConfig, ExecutionConfig, progress
from dpaudit.adapters.encoding import encode_block, layout_of, stable_code
from dpaudit.claims import Definition, InputDomain, PrivacyClaim
from dpaudit.domains import Categories
from dpaudit.errors import MechanismError
from dpaudit.testing import as_mechanism

EPS = 1.0
KEEP = float(np.exp(EPS) / (1.0 + np.exp(EPS)))  # ε-RR: report the bit with e^ε/(1+e^ε)
BITS = InputDomain((1,), 0.0, 1.0, integer=True)
UNIT = InputDomain((1,), 0.0, 1.0)
WHERE = "mechanism 'm' on input [0.0]"


def _claim(domain: Any = BITS) -> PrivacyClaim:
    return PrivacyClaim(Definition.PURE, EPS, domain)


def _audit(fn: Any, domain: Any = BITS, seed: int = 0) -> Any:
    progress.ENABLED = False
    config = AuditConfig(samples=3_000, final_samples=6_000, seed=seed)
    return dpaudit.audit(fn, _claim(domain), config=config, execution=ExecutionConfig(workers=1))


def rr_words(x: np.ndarray, n: int, rng: np.random.Generator) -> list[str]:
    """ε-randomized response on the bit x > 0.5, answering 'yes'/'no': correct."""
    bit = float(x[0]) > 0.5
    return ["yes" if (u < KEEP) == bit else "no" for u in rng.random(n)]


def leaky_words(x: np.ndarray, n: int, rng: np.random.Generator) -> list[str]:
    """'yes' deterministically for x > 0.5, randomized response otherwise: ε = ∞."""
    return ["yes"] * n if float(x[0]) > 0.5 else rr_words(x, n, rng)


def rr_records(x: np.ndarray, n: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    """The same answers as records with a constant field: correct."""
    return [{"answer": w, "version": 2} for w in rr_words(x, n, rng)]


def leaky_records(x: np.ndarray, n: int, rng: np.random.Generator) -> list[tuple[str, bool]]:
    """Mixed tuples whose flag is the input bit: ε = ∞."""
    return [(w, float(x[0]) > 0.5) for w in rr_words(x, n, rng)]


def laplace_array(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    return x[0] + rng.laplace(0.0, 1.0 / EPS, size=n)


def laplace_list(x: np.ndarray, n: int, rng: np.random.Generator) -> list[float]:
    return [float(v) for v in laplace_array(x, n, rng)]


def pair_array(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    return x[0] + rng.laplace(0.0, 2.0 / EPS, size=(n, 2))


def pair_tuples(x: np.ndarray, n: int, rng: np.random.Generator) -> list[tuple[float, float]]:
    return [(float(a), float(b)) for a, b in pair_array(x, n, rng)]


@pytest.mark.parametrize("fn", [rr_words, rr_records], ids=["strings", "dicts"])
def test_correct_string_and_dict_outputs_on_a_box_are_not_flagged(fn: Any) -> None:
    r = _audit(fn)
    assert not r.violation, r.epsilon_lower_bound


@pytest.mark.parametrize("fn", [leaky_words, leaky_records], ids=["strings", "tuples"])
def test_leaky_string_and_tuple_outputs_on_a_box_are_flagged(fn: Any) -> None:
    r = _audit(fn)
    assert r.violation and r.epsilon_lower_bound > EPS


def test_the_issue_example_on_a_real_box_is_audited() -> None:
    def rr(x: np.ndarray, n: int, rng: np.random.Generator) -> list[str]:
        p = 0.5 + 0.2 * float(x[0])
        return ["yes" if u < p else "no" for u in rng.random(n)]

    r = _audit(rr, UNIT)
    assert not r.violation  # true ε = ln(0.5 / 0.3) ≈ 0.51


@pytest.mark.parametrize(
    ("as_list", "as_array"),
    [(laplace_list, laplace_array), (pair_tuples, pair_array)],
    ids=["list-of-floats", "tuples"],
)
def test_lists_and_tuples_of_numbers_audit_exactly_as_the_array(
    as_list: Any, as_array: Any
) -> None:
    a, b = _audit(as_list, UNIT), _audit(as_array, UNIT)
    assert a.epsilon_lower_bound == b.epsilon_lower_bound
    assert as_mechanism(as_list, _claim(UNIT)).output_shape == (
        as_mechanism(as_array, _claim(UNIT)).output_shape
    )


def test_numeric_arrays_pass_through_unchanged() -> None:
    out = np.arange(6.0).reshape(3, 2)
    layout = layout_of(out, 3, WHERE)
    assert (layout.kind, layout.shape) == ("array", (2,))
    assert encode_block(out, 3, layout, WHERE) is out
    ints = np.arange(3)
    got = encode_block(ints, 3, layout_of(ints, 3, WHERE), WHERE)
    assert got.dtype == ints.dtype and got.shape == (3, 1)


def test_numbers_keep_their_values() -> None:
    block = [(1, 2.5), (np.float32(0.5), np.int64(-3))]
    layout = layout_of(block, 2, WHERE)
    assert (layout.kind, layout.shape, layout.structure) == ("numbers", (2,), "t(#,#)")
    assert encode_block(block, 2, layout, WHERE).tolist() == [[1.0, 2.5], [0.5, -3.0]]
    nested = [[[1.0, 2.0], [3.0, 4.0]]] * 2
    assert encode_block(nested, 2, layout_of(nested, 2, WHERE), WHERE).shape == (2, 4)


def test_codes_agree_across_the_pair_and_across_domains() -> None:
    box = as_mechanism(rr_words, _claim())
    a = box.sample(np.array([0.0]), 500, np.random.default_rng(1))
    b = box.sample(np.array([1.0]), 500, np.random.default_rng(2))
    codes = {stable_code('s"yes"'), stable_code('s"no"')}
    assert set(a[:, 0]) == set(b[:, 0]) == codes

    def typed(x: bool, n: int, rng: np.random.Generator) -> list[str]:
        return rr_words(np.array([float(x)]), n, rng)

    cat = as_mechanism(typed, _claim(Categories((False, True))))
    c = cat.sample(np.array([1.0]), 500, np.random.default_rng(2))
    assert np.array_equal(b, c)  # the same outputs, the same codes, whatever the domain


def test_typed_domain_numbers_take_the_numeric_layout() -> None:
    def count(x: int, n: int, rng: np.random.Generator) -> list[float]:
        return [x + float(v) for v in rng.laplace(0.0, 1.0, size=n)]

    mech = as_mechanism(count, _claim(Categories((0, 1, 2))))
    assert mech.output_shape == (1,)
    out = mech.sample(np.array([2.0]), 4, np.random.default_rng(0))
    expected = 2 + np.random.default_rng(0).laplace(0.0, 1.0, size=4)
    assert out[:, 0].tolist() == expected.tolist()


BAD_BLOCKS = [
    ("wrong count", [1.0, 2.0, 3.0], "list of 3 outputs for n = 2"),
    ("one string", "yes", "returned str"),
    ("None", None, "returned NoneType"),
    ("a dict", {"a": 1.0}, "returned dict"),
    ("a number", 1.5, "returned float"),
    ("unencodable", [object(), object()], "cannot encode an output of type object"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("block", "words"), [c[1:] for c in BAD_BLOCKS], ids=[c[0] for c in BAD_BLOCKS]
)
def test_bad_blocks_are_refused_naming_what_was_wrong(block: Any, words: str) -> None:
    with pytest.raises(MechanismError, match=words) as info:
        layout_of(block, 2, WHERE)
    assert WHERE in str(info.value)


def test_an_output_that_breaks_the_numeric_layout_is_named() -> None:
    layout = layout_of([1.0, 2.0], 2, WHERE)
    with pytest.raises(MechanismError, match=r"returned None \(NoneType\) as output 2 of 3"):
        encode_block([1.0, 2.0, None], 3, layout, WHERE)
    pairs = layout_of([(1.0, 2.0), (3.0, 4.0)], 2, WHERE)
    with pytest.raises(MechanismError, match=r"as output 1 of 2.*numbers shaped t"):
        encode_block([(1.0, 2.0), (3.0,)], 2, pairs, WHERE)
    array = layout_of(np.zeros((2, 1)), 2, WHERE)
    with pytest.raises(MechanismError, match="numpy array of numbers"):
        encode_block(["a", "b"], 2, array, WHERE)


def test_wrong_count_and_nan_in_a_list_stop_the_audit() -> None:
    def too_many(x: np.ndarray, n: int, rng: np.random.Generator) -> list[str]:
        return ["yes"] * (n + 1)

    with pytest.raises(MechanismError, match="outputs for n = 2: expected 2"):
        _audit(too_many)

    def nan_later(x: np.ndarray, n: int, rng: np.random.Generator) -> list[float]:
        out = laplace_list(x, n, rng)
        if n > 2:
            out[0] = float("nan")
        return out

    with pytest.raises(MechanismError, match="NaN"):
        _audit(nan_later)
