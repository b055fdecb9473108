"""The rare-event proposer (src/dpaudit/auditors/blackbox/rare.py) and its place in the search."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest

from dpaudit.auditors.blackbox.auditor import AuditConfig, audit
from dpaudit.auditors.blackbox.config import SearchConfig
from dpaudit.auditors.blackbox.rare import propose
from dpaudit.claims import Definition, InputDomain, PrivacyClaim
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.mechanisms import Mechanism
from dpaudit.mechanisms.output_grid import round_to_grid

ONE = ExecutionConfig(workers=1)
SMALL = AuditConfig(samples=20_000, final_samples=100_000, train_samples=20_000)


@dataclass(frozen=True)
class LeakyLaplace(Mechanism):
    """``x + Lap(1/ε)`` on [0, 1] that releases ``x`` itself with probability ``leak``."""

    name: ClassVar[str] = "test-leaky-laplace"
    leak: float = 1e-3

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim(Definition.PURE, self.epsilon, InputDomain((1,), 0.0, 1.0))

    @property
    def output_shape(self) -> tuple[int, ...]:
        return (1,)

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        out = round_to_grid(
            x + rng.laplace(scale=1.0 / self.epsilon, size=(n, 1)), 1.0 / self.epsilon
        )
        hit = rng.random(n) < self.leak
        out[hit] = x
        return out


def test_atom_at_1e3_inside_continuous_column_found() -> None:
    rng = np.random.default_rng(0)
    n = 100_000
    col = rng.laplace(0.5, 1.0, (n, 1))
    col[rng.random(n) < 1e-3] = 0.5  # ~100 exact copies: 0.1 %, far below the 0.5 % atom rule
    rare = propose(col, rng.laplace(0.0, 1.0, (n, 1)))
    assert rare is not None and rare.regions == ((0, 0.5, 0.5),)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_continuous_columns_give_no_proposal(seed: int) -> None:
    # A cluster of 5 draws within 10⁻⁴ of the local spacing: probability ~10⁻¹⁴ per column.
    rng = np.random.default_rng(seed)
    assert propose(rng.laplace(0, 1, (300_000, 2)), rng.laplace(1, 1, (300_000, 2))) is None


def test_tiny_region_found() -> None:
    rng = np.random.default_rng(1)
    n = 100_000
    col = rng.laplace(0.0, 1.0, (n, 1))
    m = rng.random(n) < 1e-3
    col[m, 0] = 0.3 + rng.uniform(-5e-10, 5e-10, int(m.sum()))
    rare = propose(col, rng.laplace(1.0, 1.0, (n, 1)))
    assert rare is not None and len(rare.regions) == 1
    _, lo, hi = rare.regions[0]
    assert 0.3 - 2e-9 <= lo <= hi <= 0.3 + 2e-9


@pytest.mark.parametrize(
    "seed", [pytest.param(0, marks=pytest.mark.slow), pytest.param(1, marks=pytest.mark.slow), 2]
)  # one seed in the quick subset; the three together in the full suite
def test_exact_input_leak_1e3_flagged(seed: int) -> None:
    # 10⁵ final outputs see ~100 leaked values under x and none under x':
    # alone that certifies ε ≥ ln(p1_lower/p2_upper) ≈ ln(80/4) ≈ 3 > claim 1.
    mech = LeakyLaplace(epsilon=1.0, leak=1e-3)
    r = audit(mech, dataclasses.replace(SMALL, seed=seed), ONE)
    assert r.epsilon_lower_bound > 2.0, r.epsilon_lower_bound


def test_exact_input_leak_missed_with_the_proposer_off() -> None:
    # Not a requirement, the reason for the proposer: without it the leak goes unseen here.
    mech = LeakyLaplace(epsilon=1.0, leak=1e-3)
    off = dataclasses.replace(SMALL, seed=0, search=SearchConfig(rare_events=False))
    assert audit(mech, off, ONE).epsilon_lower_bound < 1.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_correct_laplace_not_flagged_with_the_proposer_on(seed: int) -> None:
    mech = LeakyLaplace(epsilon=1.0, leak=0.0)
    r = audit(mech, dataclasses.replace(SMALL, seed=seed), ONE)
    assert r.epsilon_lower_bound <= 1.0 + 1e-9, r.epsilon_lower_bound
    assert not math.isnan(r.epsilon_lower_bound)


#: Training too small to see a 5·10⁻⁵ leak (≈ 1 hit in 20 000), ``samples`` large enough
#: for the second look (≈ 20 hits in 400 000; ≥ 5 needed) and the ranking (≈ 10 of ≥ 3).
SCAN = AuditConfig(samples=400_000, final_samples=2_000_000, train_samples=20_000)


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow)])
def test_the_rare_scan_sees_a_leak_training_is_too_small_for(seed: int) -> None:
    # 2·10⁶ final outputs see ≈ 100 leaked values under x, none under x': ε_lcb ≈ ln 9 ≈ 2.2.
    mech = LeakyLaplace(epsilon=1.0, leak=5e-5)
    r = audit(mech, dataclasses.replace(SCAN, seed=seed), ONE)
    assert r.epsilon_lower_bound > 1.5, r.epsilon_lower_bound
    assert r.samples["rare scan"] == 400_000
    no_scan = dataclasses.replace(SCAN, seed=seed, search=SearchConfig(rare_scan_pairs=0))
    assert audit(mech, no_scan, ONE).epsilon_lower_bound < 1.0


@pytest.mark.slow  # quick sibling: test_correct_laplace_not_flagged_with_the_proposer_on
def test_the_rare_scan_leaves_a_correct_mechanism_alone() -> None:
    # Nothing found: the audit is the one without the stage, bound for bound.
    mech = LeakyLaplace(epsilon=1.0, leak=0.0)
    on = audit(mech, SCAN, ONE)
    off = audit(mech, dataclasses.replace(SCAN, search=SearchConfig(rare_scan_pairs=0)), ONE)
    assert on.epsilon_lower_bound == off.epsilon_lower_bound <= 1.0


def test_the_rare_set_score_is_one_of_the_score_types() -> None:
    """``Score`` names ``RareSetScore`` (no duck typing behind a ``type: ignore``)."""
    import typing

    from dpaudit.auditors.blackbox import scores
    from dpaudit.auditors.blackbox.rare import RareSetScore

    names = {
        getattr(a, "__forward_arg__", getattr(a, "__name__", ""))
        for a in typing.get_args(scores.Score)
    }
    assert "RareSetScore" in names
    s = RareSetScore(((0, 1.0, 1.0),))
    assert s.family == "rare" and s.parameters()["family"] == "rare" and "y[0]" in s.describe()
    assert s(np.array([[1.0], [2.0]])).tolist() == [1.0, 0.0]
