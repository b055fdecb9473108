"""Reconstruction sanity check (ACL 2022 §4): closed forms, both paths, bounds, bad mechanisms."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pytest
from scipy import stats

from dpaudit.auditors.core.statistics import clopper_pearson_lower, clopper_pearson_upper
from dpaudit.auditors.sanity import check as sc
from dpaudit.auditors.sanity.check import (
    empirical_loss,
    plan_sanity_check,
    sanity_check,
    sanity_epsilon_lower_bound,
)
from dpaudit.auditors.sanity.decision_set import DecisionSet, attack_decision_set
from dpaudit.claims import Definition, InputDomain, PrivacyClaim
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.errors import InvalidArgumentError, MechanismError
from dpaudit.mechanisms import Mechanism, make_mechanism, mechanism_names
from dpaudit.reproduce.acl_grid import reference_effective_runs, run_acl2022_grid

ONE = ExecutionConfig(workers=1)


def laplace_vote_probability(eps: float, n: int, x: int, tie_rule: str = "half-even") -> float:
    """Closed form of Pr[vote = 1 | x] for vanilla Laplace (b = n/ε) on x ∈ {0^n, 1^n}.

    One coordinate rounds to 1 with p = Pr[x + Lap(b) >= 0.5]; the vote is 1 when
    more than n/2 coordinates do (plus the tie share of the tie rule).
    """
    b = n / eps
    tail = 0.5 * math.exp(-0.5 / b)
    p = tail if x == 0 else 1.0 - tail
    above = stats.binom.sf(n // 2, n, p)
    tie = stats.binom.pmf(n // 2, n, p) if n % 2 == 0 else 0.0
    share = {"half-even": 0.0, "half-up": 1.0, "random": 0.5}[tie_rule]
    return float(above + share * tie)


def assert_counts_match(counts: Any, runs: int, p0: float, p1: float) -> None:
    # Each f[x][1] is Binomial(runs, p_x): tolerate 5 standard errors.
    for x, p in ((0, p0), (1, p1)):
        se = math.sqrt(runs * p * (1 - p))
        assert abs(counts[x][1] - runs * p) <= 5 * se + 1e-9, (x, counts, runs * p)
        assert counts[x][0] + counts[x][1] == runs


# ------------------------------------------------------------------ closed forms
@pytest.mark.parametrize("path", ["fused", "generic"])
@pytest.mark.parametrize(("eps", "n"), [(0.5, 1), (1.0, 2), (2.0, 7), (1.0, 8)])
def test_laplace_counts_match_closed_form(path: str, eps: float, n: int) -> None:
    mech = make_mechanism("laplace", epsilon=eps, dim=n)
    runs = 100_000
    r = sanity_check(mech, runs, seed=11, path=path, execution=ONE)
    assert r.detail.path == path
    p0 = laplace_vote_probability(eps, n, 0)
    p1 = laplace_vote_probability(eps, n, 1)
    assert_counts_match(r.detail.counts, runs, p0, p1)
    assert not r.violation  # correct mechanism; the bound holds at 95%


def test_the_result_says_the_float_representation_was_not_examined() -> None:
    """Its one attack reads ``value >= 0.5``: a flaw in which floats occur is out of sight,
    and the result says so and where it is tested."""
    r = sanity_check(make_mechanism("laplace", epsilon=2.0, dim=2), 1000, seed=0, execution=ONE)
    (note,) = [n for n in r.notes if n.startswith("float representation")]
    assert "not examined" in note and "dpaudit audit" in note


@pytest.mark.parametrize("tie_rule", ["half-even", "half-up", "random"])
def test_tie_rules_at_n2(tie_rule: str) -> None:
    mech = make_mechanism("laplace", epsilon=2.0, dim=2)
    runs = 100_000
    r = sanity_check(mech, runs, seed=3, tie_rule=tie_rule, execution=ONE)
    assert_counts_match(
        r.detail.counts,
        runs,
        laplace_vote_probability(2.0, 2, 0, tie_rule),
        laplace_vote_probability(2.0, 2, 1, tie_rule),
    )


def test_decision_set_is_the_exact_laplace_threshold() -> None:
    mech = make_mechanism("laplace", epsilon=1.0, dim=4)
    for x in (0.0, 1.0):
        d = attack_decision_set(mech, x)
        assert d is not None and not d.first and len(d.flips) == 1
        k = d.flips[0]
        # The flip is the first 32-bit grid point whose output rounds to 1 — exactly.
        below, at = (np.array([k - 1, k]) + 0.5) * 2.0**-32
        assert x + mech.noise_from_uniform(np.array([below]))[0] < 0.5
        assert x + mech.noise_from_uniform(np.array([at]))[0] >= 0.5
        tail = 0.5 * math.exp(-0.5 / mech.scale)
        expected = tail if x == 0 else 1 - tail
        assert d.probability == pytest.approx(expected, abs=2.0**-31)


def test_dptext_decision_set_has_the_nan_branch() -> None:
    mech = make_mechanism("dptext", epsilon=1.0, dim=1)
    d0 = attack_decision_set(mech, 0.0)
    d1 = attack_decision_set(mech, 1.0)
    # x = 0: rounds to 1 only for u in [u*, 1/2), since T = 0 (NaN -> 0) for u > 1/2.
    assert d0 is not None and d0.first is False and d0.flips[1] == 2**31
    assert d0.probability == pytest.approx(0.5 - 0.5 * (1 - math.exp(-0.5)), abs=2.0**-31)
    # x = 1: the noise is never negative, so every coordinate rounds to 1.
    assert d1 == DecisionSet(first=True, flips=())


@dataclass(frozen=True)
class StripedNoise(Mechanism):
    """Test double: additive noise +1 or −0.4 in alternating bands of u (not monotone)."""

    name: ClassVar[str] = "striped-noise"
    dim: int = 3
    stripes: int = 10

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim(Definition.PURE, self.epsilon, InputDomain((self.dim,), 0.0, 1.0))

    @property
    def output_shape(self) -> tuple[int, ...]:
        return (self.dim,)

    def noise_from_uniform(self, u: np.ndarray) -> np.ndarray:
        band = np.floor(np.asarray(u) * self.stripes).astype(np.int64)
        return np.where(band % 2 == 0, 1.0, -0.4)

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return x + self.noise_from_uniform(rng.random((n, self.dim)))


def test_non_monotone_transform_uses_exact_union_of_intervals() -> None:
    mech = StripedNoise(epsilon=1.0, stripes=10)
    d = attack_decision_set(mech, 0.0)
    assert d is not None and len(d.flips) == 9 and d.cyclic_interval() is None
    assert d.probability == pytest.approx(0.5, abs=1e-9)
    runs = 50_000
    r = sanity_check(mech, runs, seed=2, execution=ONE)
    assert r.detail.path == "fused"
    # One coordinate rounds to 1 w.p. 1/2 for x = 0 and always for x = 1 (1 − 0.4 >= 0.5).
    p0 = stats.binom.sf(1, 3, 0.5)
    assert_counts_match(r.detail.counts, runs, p0, 1.0)


def test_too_many_flips_falls_back_to_generic_path() -> None:
    mech = StripedNoise(epsilon=1.0, stripes=1000)
    assert attack_decision_set(mech, 0.0) is None
    plan = plan_sanity_check(mech, 10)
    assert plan.path == "generic" and plan.decisions is None and plan.final.draw.decisions is None
    with pytest.raises(InvalidArgumentError, match="path"):
        plan_sanity_check(mech, 10, path="fused")


# ------------------------------------------------------------ loss and bound
def test_empirical_loss_is_the_papers_mle() -> None:
    f = [[700, 300], [400, 600]]
    expected = max(abs(math.log(700 / 400)), abs(math.log(300 / 600)))
    assert empirical_loss(f) == pytest.approx(expected)
    assert empirical_loss([[10, 0], [0, 10]]) == math.inf
    assert empirical_loss([[10, 5], [10, 0]]) == math.inf
    # A guess never made carries no evidence; the other column decides.
    assert empirical_loss([[0, 10], [0, 10]]) == 0.0
    with pytest.raises(InvalidArgumentError):
        empirical_loss([[1, 2, 3]])


def test_bound_is_bonferroni_over_four_candidates() -> None:
    f = [[7000, 3000], [4000, 6000]]
    bound, witness = sanity_epsilon_lower_bound(f, 10_000, 0.9)
    a = 0.1 / 8  # 4 candidates x 2 one-sided bounds
    candidates = [
        math.log(clopper_pearson_lower(7000, 10_000, a))
        - math.log(clopper_pearson_upper(4000, 10_000, a)),
        math.log(clopper_pearson_lower(6000, 10_000, a))
        - math.log(clopper_pearson_upper(3000, 10_000, a)),
    ]
    assert bound == pytest.approx(max(candidates))
    assert witness is not None and witness.event == "guess(y) = 1"
    assert witness.x == (1.0,) and witness.x_prime == (0.0,)  # numerator: true input 1
    assert (witness.p1.hits, witness.p2.hits) == (6000, 3000)
    assert witness.epsilon_lower_bound == bound and witness.confidence == 0.9
    assert bound < empirical_loss(f)


def test_identity_bound_is_limited_only_by_runs() -> None:
    runs = 100_000
    r = sanity_check(make_mechanism("identity", epsilon=1.0, dim=8), runs, execution=ONE)
    assert r.detail.counts == ((runs, 0), (0, runs))
    assert r.detail.empirical_loss == math.inf
    q = (0.05 / 8) ** (1 / runs)  # closed forms of the k = n and k = 0 bounds
    assert r.epsilon_lower_bound == pytest.approx(math.log(q) - math.log(1 - q), rel=1e-9)
    assert r.violation


@pytest.mark.parametrize("n", [1, 8, 128])
def test_dptext_flagged_with_finite_bound(n: int) -> None:
    r = sanity_check(make_mechanism("dptext", epsilon=1.0, dim=n), 20_000, seed=1, execution=ONE)
    assert r.detail.counts[1] == (0, 20_000)  # noise >= 0: the ones are never mistaken
    assert r.detail.empirical_loss == math.inf
    assert math.isfinite(r.epsilon_lower_bound) and r.violation


def test_adept_acl22_flagged_at_large_n() -> None:
    r = sanity_check(make_mechanism("adept-acl22", epsilon=1.0, dim=32), 20_000, execution=ONE)
    assert r.violation and r.epsilon_lower_bound > 2.0


def test_random_bits_matches_closed_form_and_passes() -> None:
    runs = 100_000
    r = sanity_check(make_mechanism("random-bits", epsilon=0.1, dim=8), runs, execution=ONE)
    assert r.detail.path == "generic"
    p = stats.binom.sf(4, 8, 0.5)
    assert_counts_match(r.detail.counts, runs, p, p)
    assert not r.violation


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("laplace", {}),
        ("adept-acl22", {}),
        ("dptext", {}),
        ("dptext", {"nan_policy": "keep"}),
        ("dptext", {"nan_policy": "discard"}),
        ("identity", {}),
    ],
)
@pytest.mark.parametrize("n", [1, 8])
def test_fused_and_generic_paths_agree(name: str, params: dict[str, str], n: int) -> None:
    if name not in mechanism_names():
        pytest.skip(f"{name} not registered")
    mech = make_mechanism(name, epsilon=1.0, dim=n, **params)
    runs = 50_000
    fused = sanity_check(mech, runs, seed=21, path="fused", execution=ONE)
    generic = sanity_check(mech, runs, seed=22, path="generic", execution=ONE)
    # Two-sample comparison of each f[x][1]: within 5 standard errors of the difference.
    for x in (0, 1):
        a, b = fused.detail.counts[x][1], generic.detail.counts[x][1]
        p = (a + b) / (2 * runs)
        se = math.sqrt(2 * runs * p * (1 - p))
        assert abs(a - b) <= 5 * se + 1e-9, (x, fused.detail.counts, generic.detail.counts)


def test_counts_accumulate_over_units_and_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sc, "_UNIT_COORDS", 1 << 12)  # chunk_rows = 4096 at n = 8
    monkeypatch.setattr(sc, "_BLOCK_COORDS", 1000)  # several blocks per unit, ragged last one
    mech = make_mechanism("laplace", epsilon=1.0, dim=8)
    runs = 20_001
    plan = plan_sanity_check(mech, runs)
    assert len(plan.units) == 2 * 5
    for path in ("fused", "generic"):
        r = sanity_check(mech, runs, seed=4, path=path, execution=ONE)
        assert_counts_match(
            r.detail.counts,
            runs,
            laplace_vote_probability(1.0, 8, 0),
            laplace_vote_probability(1.0, 8, 1),
        )


def test_reference_effective_runs() -> None:
    assert reference_effective_runs(8) == 10_000_000
    assert reference_effective_runs(32) == 1_000_000


def test_grid_is_tidy_and_ordered() -> None:
    rows = run_acl2022_grid(
        2_000, mechanisms=("laplace", "identity"), epsilons=(1.0, 2.0), dims=(1, 8), execution=ONE
    )
    assert [(r.mechanism, r.epsilon, r.dim) for r in rows] == [
        (m, e, n) for m in ("laplace", "identity") for e in (1.0, 2.0) for n in (1, 8)
    ]
    for r in rows:
        assert r.f00 + r.f01 == r.f10 + r.f11 == 2_000
        assert r.violation == (r.mechanism == "identity")
    family = run_acl2022_grid(
        500, mechanisms=("laplace",), epsilons=(1.0,), dims=(1, 2), familywise=True, execution=ONE
    )
    assert family[0].confidence == pytest.approx(1 - 0.05 / 2)


# ------------------------------------------------------------- bad input
def test_rejects_bad_arguments() -> None:
    mech = make_mechanism("laplace", epsilon=1.0)
    with pytest.raises(InvalidArgumentError, match="runs"):
        sanity_check(mech, 0)
    with pytest.raises(InvalidArgumentError, match="confidence"):
        sanity_check(mech, 10, confidence=1.0)
    with pytest.raises(InvalidArgumentError, match="tie_rule"):
        sanity_check(mech, 10, tie_rule="up")
    with pytest.raises(InvalidArgumentError, match=r"\[0, 1\]\^n"):
        sanity_check(make_mechanism("laplace", epsilon=1.0, domain=(2.0, 3.0)), 10)
    with pytest.raises(InvalidArgumentError, match="path"):
        sanity_check(make_mechanism("random-bits", epsilon=1.0), 10, path="fused")


@dataclass(frozen=True)
class Misbehaving(Mechanism):
    """Test double returning a chosen kind of bad output."""

    name: ClassVar[str] = "misbehaving"
    problem: str = "nan"

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim(Definition.PURE, self.epsilon, InputDomain((2,), 0.0, 1.0))

    @property
    def output_shape(self) -> tuple[int, ...]:
        return (2,)

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        out = x + rng.random((n, 2))
        if self.problem == "nan":
            out[n // 2, 0] = np.nan
        elif self.problem == "inf":
            out[0, 1] = np.inf
        elif self.problem == "dtype":
            out = out.astype(np.complex128)
        elif self.problem == "shape":
            out = out[:, :1]
        elif self.problem == "raise":
            raise RuntimeError("boom")
        return out


@pytest.mark.parametrize(
    ("problem", "message"),
    [
        ("nan", "NaN"),
        ("inf", "inf"),
        ("dtype", "complex"),
        ("shape", "shape"),
        ("raise", "RuntimeError: boom"),
    ],
)
def test_misbehaving_mechanism_stops_the_audit(problem: str, message: str) -> None:
    with pytest.raises(MechanismError, match=message) as info:
        sanity_check(Misbehaving(epsilon=1.0, problem=problem), 100, execution=ONE)
    assert "misbehaving" in str(info.value)
    assert "x = " in str(info.value) or "input" in str(info.value)


@dataclass(frozen=True)
class NaNTransform(StripedNoise):
    """Additive test double whose transform returns NaN without declaring a NaN policy."""

    name: ClassVar[str] = "nan-transform"

    def noise_from_uniform(self, u: np.ndarray) -> np.ndarray:
        return np.where(np.asarray(u) > 0.5, np.nan, 0.0)


def test_nan_from_noise_transform_is_rejected() -> None:
    with pytest.raises(MechanismError, match="nan-transform"):
        sanity_check(NaNTransform(epsilon=1.0), 10, execution=ONE)
