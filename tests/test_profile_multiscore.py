"""Profile audits of a score with several columns: each a candidate, chosen on selection.

A training game's trainer names several statistics (``sum``, ``likelihood-ratio``, ``range``
...); the whole-claim certifier then offers every column's thresholds to its selection, and
each criterion keeps its best set over all of them, so the number of certified statements
— the Bonferroni count — does not grow with the columns.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.auditors.core.counting import EventUnit, UnitGenerators, run_event_unit
from dpaudit.auditors.profile.counting import ScoreAbove, ScoredDraw
from dpaudit.auditors.profile.selection import select_sets
from dpaudit.errors import MechanismError
from dpaudit.mechanisms import make_mechanism

EPS = np.linspace(0.0, 4.0, 9)


def _select(sx, sxp, **kw):
    return select_sets(
        sx, sxp, final_samples=10_000, error=1e-3, epsilons=EPS, orders=(2.0,), candidates=64, **kw
    )


def test_one_column_selects_as_a_plain_score() -> None:
    rng = np.random.default_rng(0)
    sx, sxp = rng.normal(1.0, 1.0, 4000), rng.normal(0.0, 1.0, 4000)
    plain = _select(sx, sxp)
    wide = _select(sx[:, None], sxp[:, None])
    assert [(p.threshold, p.above, p.forward) for p in plain] == [
        (p.threshold, p.above, p.forward) for p in wide
    ]
    assert all(p.column == 0 for p in wide)


def test_the_informative_column_is_chosen_and_statements_do_not_grow() -> None:
    rng = np.random.default_rng(1)
    noise_x, noise_xp = rng.normal(0, 1, 4000), rng.normal(0, 1, 4000)
    signal_x, signal_xp = rng.normal(2.0, 1, 4000), rng.normal(0, 1, 4000)
    wide = _select(
        np.column_stack([noise_x, signal_x]),
        np.column_stack([noise_xp, signal_xp]),
        column_names=("noise", "signal"),
    )
    alone = _select(signal_x, signal_xp)
    assert {p.column for p in wide} == {1}
    assert len(wide) <= len(EPS) + 2  # one per ε, μ and the Rényi order at most
    assert len(wide) == len(alone)
    assert "score[signal]" in wide[0].describe()


def test_a_wide_count_unit_counts_each_column_against_its_own_thresholds() -> None:
    class TwoColumns:
        family = "two columns"

        def __call__(self, outputs):
            flat = np.asarray(outputs, dtype=np.float64).reshape(len(outputs), -1)
            return np.column_stack([flat[:, 0], -flat[:, 0]])

    mech = make_mechanism("laplace", epsilon=1.0)
    t0, t1 = np.array([-1.0, 0.0, 0.5]), np.array([0.0, 2.0])
    sets = tuple(ScoreAbove(0, t, True) for t in t0) + tuple(ScoreAbove(1, t, True) for t in t1)
    seeds = UnitGenerators(3)
    wide = run_event_unit(
        EventUnit(ScoredDraw(mech, TwoColumns(), 2), (0.0,), sets, 5000, (9,), seeds)
    )

    def first(outputs):
        return np.asarray(outputs, dtype=np.float64).reshape(len(outputs), -1)[:, 0]

    def second(outputs):
        return -first(outputs)

    one = tuple(ScoreAbove(0, t, True) for t in t0)
    a = run_event_unit(EventUnit(ScoredDraw(mech, first), (0.0,), one, 5000, (9,), seeds))
    two = tuple(ScoreAbove(0, t, True) for t in t1)
    b = run_event_unit(EventUnit(ScoredDraw(mech, second), (0.0,), two, 5000, (9,), seeds))
    assert wide.tolist() == [*a.tolist(), *b.tolist()]
    with pytest.raises(MechanismError, match="column"):
        run_event_unit(EventUnit(ScoredDraw(mech, first, 2), (0.0,), one, 10, (9,), seeds))
