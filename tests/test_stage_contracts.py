"""The search stages' contracts, on a small Laplace audit: not what they tune, what they promise.

Every stage after ``train`` keeps or drops candidates and never adds one it was not
given (``rare-scan`` may add ``rare`` combinations on pairs already in); no stage
draws from the final certification's stream; each stage's recorded cost is the
number of outputs it drew; the stream keys are those the audit always used.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from dpaudit.auditors.blackbox.auditor import AuditConfig, score_families, search_budget
from dpaudit.auditors.blackbox.config import SearchConfig
from dpaudit.auditors.blackbox.pairs import generate_pairs
from dpaudit.auditors.blackbox.rare import RareSetScore
from dpaudit.auditors.blackbox.sampler import Timer
from dpaudit.auditors.blackbox.shortlist import Budget, Shortlist
from dpaudit.auditors.blackbox.stages import search, stages_for
from dpaudit.auditors.blackbox.training import Train
from dpaudit.auditors.core.procedure import certify_proposals
from dpaudit.auditors.core.streams import PAIR_SEARCH_ROUNDS, StageKey, pair_search_round
from dpaudit.claims import Definition, InputDomain, PrivacyClaim
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.mechanisms import make_mechanism
from dpaudit.mechanisms.output_grid import round_to_grid
from dpaudit.testing import as_mechanism

ONE = ExecutionConfig(workers=1)
SMALL = AuditConfig(samples=20_000, final_samples=40_000, train_samples=10_000, seed=3)


def _budget(cfg: AuditConfig = SMALL, name: str = "laplace") -> Budget:
    mech = make_mechanism(name, epsilon=1.0)
    pairs = generate_pairs(mech, mode="dpaudit", user_pairs=(), use_patterns=True)
    return search_budget(mech, cfg, ONE, pairs, score_families(mech, cfg))


def _spy(budget: Budget) -> list[tuple[str, int, int]]:
    """Record every draw of ``budget``'s sampler as (stage label, stage key, outputs)."""
    sampler, draws = budget.sampler, []
    outputs, counts = sampler.outputs, sampler.counts

    def spy_outputs(inputs, n, stage, desc, streams=None):  # type: ignore[no-untyped-def]
        draws.append((sampler.tally.label, int(stage), n * len(inputs)))
        return outputs(inputs, n, stage, desc, streams)

    def spy_counts(jobs, n, stage, *args, **kwargs):  # type: ignore[no-untyped-def]
        draws.append((sampler.tally.label, int(stage), n * len(jobs)))
        return counts(jobs, n, stage, *args, **kwargs)

    object.__setattr__(sampler, "outputs", spy_outputs)
    object.__setattr__(sampler, "counts", spy_counts)
    return draws


def _candidates(state: Shortlist) -> set[tuple[int, int]]:
    """Every candidate set the state still holds, by (combination identity, set index)."""
    if state.pool is None:
        pairs = zip(state.combos, state.tables, strict=True)
        return {(id(c), j) for c, t in pairs for j in range(t.size)}
    return {(id(state.combos[k]), j) for k, j in state.pool}


def _proposed(state: Shortlist) -> set[tuple[int, int]]:
    entries = (*state.ranked, *state.runners_up, *state.hedges, *state.rungs, *state.rare)
    return {(id(state.combos[e.combo]), e.index) for e in entries}


def test_stage_keys_keep_the_integers_every_stream_was_drawn_with() -> None:
    # Renaming a key would change every sample, hence every bound: these are fixed.
    assert (StageKey.TRAIN, StageKey.SELECT, StageKey.FINAL) == (1, 2, 3)
    assert (StageKey.PLAYOFF, StageKey.RARE_SCAN, StageKey.PAIR_SEARCH) == (5, 6, 20)
    assert (StageKey.SNIPER_TRAIN, StageKey.SNIPER_CHECK, StageKey.SNIPER_FINAL) == (11, 12, 13)
    assert (StageKey.METRIC_SELECT, StageKey.METRIC_FINAL, StageKey.METRIC_RANK) == (21, 22, 23)
    assert (StageKey.PROFILE_SELECT, StageKey.PROFILE_FINAL, StageKey.PROFILE_BAND) == (0, 1, 2)
    assert (StageKey.REWRITE_SELECT, StageKey.REWRITE_FINAL) == (0, 1)
    assert [int(pair_search_round(r)) for r in (1, PAIR_SEARCH_ROUNDS)] == [21, 29]
    with pytest.raises(ValueError):
        pair_search_round(0)
    # Within the black box's own audit no two stages share a key.
    box = [k for k in StageKey if k.name in {"TRAIN", "SELECT", "FINAL", "PLAYOFF", "RARE_SCAN"}]
    rounds = [pair_search_round(r) for r in range(1, PAIR_SEARCH_ROUNDS + 1)]
    assert len({*box, StageKey.PAIR_SEARCH, *rounds}) == len(box) + 1 + len(rounds)


@pytest.mark.parametrize("name", ["laplace", "randomized-response"])
def test_every_stage_only_keeps_or_drops_the_candidates_it_was_given(name: str) -> None:
    budget = _budget(name=name)
    state = Shortlist(pairs=tuple(budget.pairs))
    for stage in stages_for(SMALL.search):
        before, held = _candidates(state), state.combos
        out = stage.run(state, budget)
        after = _candidates(out)
        assert _proposed(out) <= after | _proposed(state) | before or stage.name == "train"
        if stage.name == "train":
            assert after and len(out.pairs) >= len(budget.pairs)
            assert out.pairs[: len(budget.pairs)] == tuple(budget.pairs)
        elif stage.name == "rare-scan":
            new = [c for c in out.combos if all(c is not h for h in held)]
            assert all(isinstance(c.score, RareSetScore) for c in new), stage.name
            assert {c.pair_index for c in new} <= {c.pair_index for c in held}
            assert out.pairs == state.pairs
        else:
            assert after <= before, stage.name
            assert out.pairs == state.pairs, stage.name
            assert {id(c) for c in out.combos} <= {id(c) for c in held}, stage.name
        state = out
    # What certification receives was held by the last stage.
    assert _proposed(state) and _proposed(state) <= _candidates(state) | _proposed(state)


def _certified(budget: Budget, timer: Timer) -> tuple[Any, Any]:
    """The search's proposals, certified by the core, and the search's reading of them."""
    proposals = search(budget, timer)
    certified = certify_proposals(proposals, ONE)
    return proposals, proposals.state.read(proposals, certified)


def test_no_stage_before_certification_draws_from_the_final_stream() -> None:
    budget = _budget()
    draws = _spy(budget)
    proposals = search(budget, Timer())
    final_keys = {int(StageKey.FINAL), int(StageKey.SNIPER_FINAL)}
    final_keys |= {int(StageKey.FINAL_LOOK) + k for k in range(1, 10)}
    assert draws and all(key not in final_keys for _, key, _ in draws)
    # The final outputs are the core's to draw, after the search, from the FINAL streams.
    assert proposals.statements and proposals.looks is not None
    assert proposals.looks.prefixes[0] == (StageKey.FINAL,)
    keys = [s.key for s in proposals.plan.streams]
    assert keys == [(j,) for j in range(len(keys))]
    # Each stage draws only from its own keys.
    own: dict[str, set[int]] = {
        "design": {int(StageKey.DESIGN), int(StageKey.DESIGN_CONFIRM)},
        "train": {int(StageKey.TRAIN), *range(21, 30)},
        "rare-scan": {int(StageKey.RARE_SCAN)},
        "rank": {int(StageKey.SELECT)},
        "playoff": {int(StageKey.PLAYOFF)},
    }
    for label, key, _ in draws:
        stage = label.split("(")[1].split(")")[0]
        assert key in own.get(stage, set()), (stage, key)


def test_each_stage_records_the_outputs_it_drew() -> None:
    budget = _budget()
    draws = _spy(budget)
    timer = Timer()
    proposals, _ = _certified(budget, timer)
    drawn: dict[str, int] = {}
    for label, _, n in draws:
        stage = label.split("(")[1].split(")")[0]
        drawn[stage] = drawn.get(stage, 0) + n
    final = SMALL.final_samples * len(proposals.plan.streams)  # the core's fixed-size look
    assert timer.drawn == {s.name: drawn.get(s.name, 0) for s in stages_for(SMALL.search)} | {
        "final": final
    }
    assert sum(timer.drawn.values()) == budget.sampler.tally.drawn
    assert timer.drawn["screen"] == 0 and timer.drawn["ladder"] == 0  # they only choose


def _signed_sum(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    # x0 + x1 - x2 + Lap(1) on [0, 1]^3: the pair search moves the box patterns.
    return round_to_grid(x[0] + x[1] - x[2] + rng.laplace(0.0, 1.0, n), 1.0).reshape(n, 1)


def test_the_pair_search_returns_its_pairs_in_the_state_and_leaves_the_budget_alone() -> None:
    mech: Any = as_mechanism(
        _signed_sum, PrivacyClaim(Definition.PURE, 1.5, InputDomain((3,), 0.0, 1.0))
    )
    search_cfg = SearchConfig(pair_search_rounds=2, pair_search_parents=1, pair_search_moves=12)
    # Small sizes: the test is about where the pairs go, not about the bound.
    cfg = AuditConfig(
        samples=4_000, final_samples=8_000, train_samples=2_000, seed=3, search=search_cfg
    )
    pairs = generate_pairs(mech, mode="dpaudit", user_pairs=(), use_patterns=True)
    given = tuple(pairs)
    budget = search_budget(mech, cfg, ONE, pairs, score_families(mech, cfg))
    out = Train.of(search_cfg).run(Shortlist(), budget)
    assert len(out.pairs) > len(given) and out.pairs[: len(given)] == given
    assert tuple(budget.pairs) == given  # no stage writes to the budget
    assert {c.pair_index for c in out.combos} <= set(range(len(out.pairs)))
    _, reading = _certified(budget, Timer())
    assert reading.detail.pairs_tried == len(out.pairs) and tuple(budget.pairs) == given
