"""The float-representation family: bit fields, its gate, and audits of raw float outputs.

Closed forms for the bit fields; the gate's null (snapped and exactly rounded samplers)
over seeds with a binomial tolerance; the textbook samplers (numpy, diffprivlib) flagged
on their raw outputs, and dpaudit's own additive mechanisms not.
"""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

import dpaudit
from dpaudit import AuditConfig, Definition, InputDomain, PrivacyClaim
from dpaudit.auditors.blackbox.config import SearchConfig
from dpaudit.auditors.blackbox.representation import (
    GATE_P_VALUE,
    bit_fields,
    train_representation,
)
from dpaudit.auditors.blackbox.scores import TrainingData
from dpaudit.mechanisms.output_grid import grid_step, round_to_grid

CLAIM = PrivacyClaim(Definition.PURE, 1.0, InputDomain((1,), 0.0, 1.0))
SMALL = AuditConfig(samples=20_000, final_samples=100_000)


def textbook(x, n, rng):
    return x + rng.laplace(0.0, 1.0, size=(n, x.size))


def snapped(x, n, rng):
    return round_to_grid(x + rng.laplace(0.0, 1.0, size=(n, x.size)), 1.0)


def _data(y: np.ndarray) -> TrainingData:
    y = np.asarray(y, dtype=np.float64).reshape(len(y), -1)
    return TrainingData(y, np.ones(len(y)))


def test_bit_fields_match_closed_forms():
    values = np.array([1.0, 0.75, 3 * 2.0**-60, 5e-324, 0.0, -6.0, np.inf, 2.0**-1022])
    f = bit_fields(values)
    assert f.lowest[:4].tolist() == [0, -2, -60, -1074]
    assert f.lowest[5] == 1 and f.negative[5]  # −6 = −3·2¹
    assert f.lowest[7] == -1022
    assert f.zero.tolist() == [False] * 4 + [True] + [False] * 3
    assert f.finite.tolist() == [True] * 6 + [False, True]
    assert f.trailing_zeros[:2].tolist() == [52, 51]  # 1.0 and 0.75's significands


def test_round_to_grid_moves_values_by_at_most_half_a_step():
    rng = np.random.default_rng(3)
    y = rng.laplace(0.0, 2.0, 10_000)
    out = round_to_grid(y.copy(), 2.0)
    step = grid_step(2.0)
    assert step == 2.0**-39
    assert np.all(np.abs(out - y) <= step / 2)
    assert np.all(np.fmod(out, step) == 0.0)
    big = np.array([2.0**60, np.nan, -np.inf])
    assert np.array_equal(round_to_grid(big.copy(), 2.0), big, equal_nan=True)


@pytest.mark.parametrize("pair", [(0.0, 1.0), (0.3, 0.7)])
def test_the_gate_finds_textbook_samplers(pair):
    rng = np.random.default_rng(0)
    a, b = pair
    for draw in (
        lambda m: m + rng.laplace(0.0, 1.0, 1 << 15),
        lambda m: m + rng.normal(0.0, 1.0, 1 << 15),
    ):
        score, look = train_representation(_data(draw(a)), _data(draw(b)))
        assert score is not None and look.differing and look.differing[0][1] < GATE_P_VALUE


def test_the_gate_stays_closed_on_value_only_representations():
    """Snapped Laplace at (0, 1) and snapped Gaussian at (0.3, 0.7), 20 seeds each.

    Under the null each gate passes with probability ≤ 10⁻³, so 2 or more passes in
    40 runs have probability below 10⁻³ (binomial).
    """
    passes = 0
    for seed in range(20):
        rng = np.random.default_rng(seed)
        n = 1 << 15
        ya = round_to_grid(rng.laplace(0.0, 1.0, n), 1.0)
        yb = round_to_grid(1.0 + rng.laplace(0.0, 1.0, n), 1.0)
        passes += train_representation(_data(ya), _data(yb))[0] is not None
        za = round_to_grid(0.3 + rng.normal(0.0, 2.0, n), 2.0)
        zb = round_to_grid(0.7 + rng.normal(0.0, 2.0, n), 2.0)
        passes += train_representation(_data(za), _data(zb))[0] is not None
    assert passes <= 1


def test_integer_and_discrete_outputs_are_left_to_the_value_families():
    rng = np.random.default_rng(1)
    counts = rng.geometric(0.3, (1 << 14, 1)).astype(float)
    _, look = train_representation(_data(counts), _data(counts + 1))
    assert look.examined == 0


def test_raw_textbook_laplace_is_flagged_with_a_bit_witness():
    result = dpaudit.audit(textbook, CLAIM, config=SMALL)
    assert result.violation
    w = result.witness
    assert w.attack.family == "representation"
    assert "lowest set bit" in w.output_set
    assert w.p2.hits == 0 and w.p1.estimate > 0.25  # Pr[|Lap(1)| < 1/2 and bits below 2⁻⁵³] ≈ 0.27
    note = next(n for n in result.notes if n.startswith("float representation"))
    assert "differed" in note


def test_the_same_mechanism_snapped_is_not_flagged_and_says_what_was_checked():
    result = dpaudit.audit(snapped, CLAIM, config=SMALL)
    assert not result.violation
    note = next(n for n in result.notes if n.startswith("float representation"))
    assert "agreed" in note and "no sets on them were added" in note


def half_scale(x, n, rng):
    return x + rng.laplace(0.0, 0.5, size=(n, x.size))


def test_representation_off_reads_the_value_only():
    cfg = AuditConfig(
        samples=20_000, final_samples=100_000, search=SearchConfig(representation=False)
    )
    result = dpaudit.audit(half_scale, CLAIM, config=cfg)
    assert result.witness.attack.family != "representation"
    assert math.isclose(result.epsilon_lower_bound, 1.96343, abs_tol=5e-6)  # README
    assert any("not examined (SearchConfig.representation is off)" in n for n in result.notes)


@pytest.mark.parametrize("name", ["laplace", "gaussian"])
def test_builtin_additive_mechanisms_show_no_representation_leak(name):
    params = {"epsilon": 1.0} if name == "laplace" else {"epsilon": 1.0, "delta": 1e-5}
    mech = dpaudit.make_mechanism(name, **params)
    rng = np.random.default_rng(5)
    ya, yb = mech.sample(np.zeros(1), 1 << 15, rng), mech.sample(np.ones(1), 1 << 15, rng)
    score, look = train_representation(_data(ya), _data(yb))
    assert look.examined == 1 and score is None


def test_diffprivlib_samplers_are_flagged_on_raw_outputs():
    if importlib.util.find_spec("diffprivlib") is None:
        pytest.skip("diffprivlib is not installed (extra 'diffprivlib')")
    import dpaudit.adapters  # registers the adapters

    for name, params in (("diffprivlib-laplace", {}), ("diffprivlib-gaussian", {"delta": 1e-5})):
        mech = dpaudit.make_mechanism(name, epsilon=1.0, **params)
        fast = AuditConfig(5_000, 20_000, search=SearchConfig(input_design=False))
        result = dpaudit.audit(mech, mech.claim, config=fast, method="blackbox")
        assert result.violation, name
        assert result.witness.attack.family == "representation", name


@pytest.mark.slow
def test_opendp_laplace_is_not_flagged():
    if importlib.util.find_spec("opendp") is None:
        pytest.skip("opendp is not installed (extra 'opendp')")
    import dpaudit.adapters  # registers the adapters

    mech = dpaudit.make_mechanism("opendp-laplace", epsilon=1.0)
    result = dpaudit.audit(mech, mech.claim, config=AuditConfig(5_000, 20_000))
    assert not result.violation
    note = next(n for n in result.notes if n.startswith("float representation"))
    assert "agreed" in note


def textbook_3d(x, n, rng):
    return x + rng.laplace(0.0, 3.0, size=(n, x.size))


def test_a_vector_textbook_laplace_is_flagged_on_its_strongest_columns():
    claim = PrivacyClaim(Definition.PURE, 1.0, InputDomain((3,), 0.0, 1.0))
    fast = SearchConfig(input_design=False, pair_search=False)  # the bits, not the search
    result = dpaudit.audit(textbook_3d, claim, config=AuditConfig(10_000, 40_000, search=fast))
    assert result.violation and result.witness.attack.family == "representation"
    assert result.witness.attack.classifier["columns"]  # the columns its table reads


def test_a_whole_claim_audit_scores_the_bits_where_they_leak():
    from dpaudit.api import profile_score
    from dpaudit.auditors.blackbox.representation import RepresentationScore
    from dpaudit.auditors.profile.scores import ProjectionScore
    from dpaudit.claims import GaussianDP
    from dpaudit.testing import as_mechanism

    raw = as_mechanism(
        gaussian_raw, PrivacyClaim(Definition.APPROXIMATE, 1.0, InputDomain((1,), 0.0, 1.0), 1e-5)
    )
    assert isinstance(profile_score(raw, (0.0,), (1.0,)), RepresentationScore)
    assert isinstance(profile_score(raw, (0.0,), (1.0,), bits=False), ProjectionScore)
    exact = dpaudit.make_mechanism("gaussian", epsilon=1.0, delta=1e-5)
    assert not isinstance(profile_score(exact, (0.0,), (1.0,)), RepresentationScore)
    result = dpaudit.audit(raw, GaussianDP(1.0 / 3.73))
    assert result.violation


def gaussian_raw(x, n, rng):
    return x + rng.normal(0.0, 3.73, size=(n, x.size))
