"""The core's audit procedure: one counting unit for final samples, propose → certify → read.

Closed forms where they exist: a randomised response on one bit has likelihood ratio
``e^ε`` on each output, so the certified bound of the set ``{1}`` exceeds the true ε with
probability at most α (Clopper–Pearson, one-sided at α/2 on each side), which the coverage
test checks over seeds with a binomial tolerance stated beside it.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from dpaudit.auditors.core.answer import Evidence, Judged
from dpaudit.auditors.core.certify import FinalCounts, certify
from dpaudit.auditors.core.counting import (
    FinalPlan,
    SeedListGenerators,
    Stream,
    UnitGenerators,
    count_final,
)
from dpaudit.auditors.core.game import GamePlan, certify_game, draw_game, guess_grid
from dpaudit.auditors.core.procedure import (
    Certified,
    Looks,
    Proposals,
    ProposingAuditor,
    Reading,
    certify_proposals,
    run_audit,
    run_audits,
)
from dpaudit.auditors.core.proposal import Proposal
from dpaudit.auditors.core.sequential import LookPlan
from dpaudit.auditors.metric.result import MetricDetail
from dpaudit.engine.config import ExecutionConfig
from dpaudit.errors import InvalidArgumentError, MechanismError
from dpaudit.random import unit_rng
from dpaudit.results import AuditorKind
from dpaudit.verdicts import Verdict


@dataclass(frozen=True)
class CoinDraw:
    """Outputs 1 with probability ``p[x]`` (a randomised response on one bit)."""

    p: tuple[float, ...]
    refuse: int | None = None  # an input the draw raises on, to see which streams run

    def __call__(self, x: int, rows: int, rng: np.random.Generator) -> np.ndarray:
        if x == self.refuse:
            raise MechanismError(f"drawn on input {x}")
        return (rng.random(rows) < self.p[x]).astype(np.int64)

    def describe(self, x: int) -> str:
        return f"coin on {x}"


@dataclass(frozen=True)
class IsOne:
    def __call__(self, block: np.ndarray) -> np.ndarray:
        return block == 1


@dataclass(frozen=True)
class IsZero:
    def __call__(self, block: np.ndarray) -> np.ndarray:
        return block == 0


@dataclass(frozen=True)
class WrongShape:
    def __call__(self, block: np.ndarray) -> np.ndarray:
        return block[:-1] == 1


ONE = ExecutionConfig(workers=1)


def rr(epsilon: float) -> tuple[float, float]:
    """Randomised response at ε: Pr[1 | x=0], Pr[1 | x=1]."""
    keep = math.exp(epsilon) / (1 + math.exp(epsilon))
    return (keep, 1 - keep)


def plan(p: tuple[float, ...], n: int, **kw: Any) -> FinalPlan:
    streams = tuple(Stream(x, (7, x)) for x in range(len(p)))
    return FinalPlan(CoinDraw(p, kw.pop("refuse", None)), streams, n, UnitGenerators(11), **kw)


def test_counts_are_the_draws_counted_whatever_the_units_and_workers() -> None:
    one, zero = IsOne(), IsZero()
    statements = [(0, 1, one), (1, 0, zero)]
    base = count_final(plan(rr(1.0), 10_000), statements, ExecutionConfig(workers=1))
    # One unit per stream from the stream's own key: the same draws, counted directly.
    direct = [int((unit_rng(11, (7, x)).random(10_000) < rr(1.0)[x]).sum()) for x in (0, 1)]
    assert base[0] == FinalCounts(direct[0], 10_000, direct[1], 10_000)
    assert base[1] == FinalCounts(10_000 - direct[1], 10_000, 10_000 - direct[0], 10_000)
    split = plan(rr(1.0), 10_000, unit_samples=3_000, block_samples=700)
    assert count_final(split, statements, ExecutionConfig(workers=1)) == count_final(
        split, statements, ExecutionConfig(workers=2)
    )
    assert [c.samples_x for c in count_final(split, statements)] == [10_000, 10_000]


def test_blocks_inside_a_unit_do_not_change_the_draws() -> None:
    statements = [(0, 1, IsOne())]
    whole = count_final(plan(rr(2.0), 5_000, unit_samples=5_000), statements)
    blocks = count_final(plan(rr(2.0), 5_000, unit_samples=5_000, block_samples=5_000), statements)
    assert whole == blocks


def test_only_the_streams_a_statement_names_are_drawn() -> None:
    p = (*rr(1.0), 0.5)
    counts = count_final(plan(p, 1_000, refuse=2), [(0, 1, IsOne())])
    assert len(counts) == 1
    with pytest.raises(MechanismError, match="drawn on input 2"):
        count_final(plan(p, 1_000, refuse=2), [(0, 2, IsOne())])


def test_an_event_of_the_wrong_shape_and_a_bad_stream_are_refused() -> None:
    with pytest.raises(MechanismError, match="flags for 1000 outputs"):
        count_final(plan(rr(1.0), 1_000), [(0, 1, WrongShape())])
    with pytest.raises(InvalidArgumentError, match="stream"):
        count_final(plan(rr(1.0), 1_000), [(0, 5, IsOne())])
    with pytest.raises(InvalidArgumentError, match="samples"):
        plan(rr(1.0), 0)


def test_seed_list_generators_seed_from_the_whole_key() -> None:
    p = FinalPlan(CoinDraw((0.3,)), (Stream(0, (4, 0, 2)),), 500, SeedListGenerators())
    (c,) = count_final(p, [(0, 0, IsOne())])
    expected = int((np.random.default_rng([4, 0, 2]).random(500) < 0.3).sum())
    assert c.hits_x == c.hits_x_prime == expected


@dataclass(frozen=True)
class CoinAuditor:
    """A toy proposer: the set {1} on the pair (0, 1), judged against ``claimed``."""

    claimed: float
    n: int
    seed: int
    log: list[str]
    in_process: bool = True

    kind = AuditorKind.METRIC  # its detail type is registered: an empty MetricDetail

    def supports(self, mechanism: Any, claim: Any) -> bool:
        return True

    def propose(self, mechanism: Any, claim: Any, config: Any, execution: Any) -> Proposals:
        self.log.append("propose")
        draw = LoggedDraw(mechanism, self.log)
        streams = (Stream(0, (1, 0)), Stream(1, (1, 1)))
        return Proposals(
            statements=(Proposal(0, True, IsZero(), "best"), Proposal(0, False, IsZero(), "back")),
            plan=FinalPlan(
                draw, streams, self.n, UnitGenerators(self.seed), in_process=self.in_process
            ),
            pair_streams=((0, 1),),
            chosen="Chosen without samples.",
            confidence=0.95,
            mechanism={"name": "coin"},
            seed=self.seed,
            samples={"final": self.n},
        )

    def read(self, proposals: Proposals, certified: Certified) -> Reading:
        self.log.append("read")
        bound = max(c.lower_bound for c in certified.certificates)
        return Reading(
            judged=(Judged.of_bound(max(bound, 0.0), self.claimed),),
            evidence=Evidence(refuted="refuted", held="held"),
            bound=bound,
            witness=None,
            detail=MetricDetail((), len(certified.certificates)),
        )


@dataclass(frozen=True)
class LoggedDraw:
    p: tuple[float, ...]
    log: list[str]

    def __call__(self, x: int, rows: int, rng: np.random.Generator) -> np.ndarray:
        self.log.append(f"draw {x}")
        return (rng.random(rows) < self.p[x]).astype(np.int64)

    def describe(self, x: int) -> str:
        return f"logged coin on {x}"


class Claimed:
    def __init__(self, epsilon: float) -> None:
        self.epsilon = epsilon

    def describe(self) -> str:
        return f"{self.epsilon}-DP"


def test_the_core_draws_the_final_samples_only_after_the_proposal() -> None:
    log: list[str] = []
    auditor = CoinAuditor(1.0, 2_000, 3, log)
    assert isinstance(auditor, ProposingAuditor)
    result = run_audit(auditor, rr(1.0), Claimed(1.0))
    assert log == ["propose", "draw 0", "draw 1", "read"]
    assert result.confidence_statement.startswith("Chosen without samples. All 2 certified")
    assert set(result.timing) == {"final", "total"}


def test_certificates_are_the_joint_ones_of_the_counts() -> None:
    log: list[str] = []
    auditor = CoinAuditor(1.0, 4_000, 5, log)
    proposals = auditor.propose(rr(2.0), None, None, None)
    counts = count_final(proposals.plan, proposals.oriented())
    got = certify_proposals(proposals)
    assert got.counts == counts
    assert got.certificates == certify(counts, 0.95)
    # The backward statement reads the same set with the inputs swapped.
    assert (counts[1].hits_x, counts[1].hits_x_prime) == (counts[0].hits_x_prime, counts[0].hits_x)


def test_a_violation_is_certified_and_the_true_epsilon_is_covered() -> None:
    """A claim of 1 on RR at ε = 3 is refuted at n = 4000 (the bound's sampling error at
    p ≈ 0.05 is about 0.25 in ε); at the true ε = 1 the bound exceeds the claim in at most
    α = 5 % of seeds.  60 seeds: more than 9 false alarms has probability < 0.01 under
    Binomial(60, 0.05), and Clopper–Pearson makes the real rate far smaller."""
    log: list[str] = []
    flagged = run_audit(CoinAuditor(1.0, 4_000, 0, log), rr(3.0), Claimed(1.0))
    assert flagged.verdict is Verdict.VIOLATION and flagged.epsilon_lower_bound > 1.0
    alarms = sum(
        run_audit(CoinAuditor(1.0, 4_000, seed, []), rr(1.0), Claimed(1.0)).violation
        for seed in range(60)
    )
    assert alarms <= 9


def test_proposals_are_checked() -> None:
    base = CoinAuditor(1.0, 100, 0, []).propose(rr(1.0), None, None, None)
    with pytest.raises(InvalidArgumentError, match="pair_index"):
        Proposals(
            (Proposal(3, True, IsOne(), "x"),), base.plan, base.pair_streams, "", 0.95, {}, 0, {}
        )
    empty = Proposals((), base.plan, base.pair_streams, "", 0.95, {}, 0, {})
    assert certify_proposals(empty) == Certified((), (), 0.95)  # nothing drawn, nothing paid


@dataclass
class CountingScore:
    """A feature that counts its calls (per process: the unit runs in this one here)."""

    calls: list[int]

    def __call__(self, block: np.ndarray) -> np.ndarray:
        self.calls.append(len(block))
        return block.astype(np.float64)


@dataclass(frozen=True)
class Above:
    feature: Any
    threshold: float
    tie_probability: float | None = None

    def on(self, values: np.ndarray) -> np.ndarray:
        return values > self.threshold

    def ties(self, values: np.ndarray) -> np.ndarray:
        return values == self.threshold

    def __call__(self, block: np.ndarray) -> np.ndarray:
        return self.on(self.feature(block))


def test_a_feature_read_by_several_events_is_computed_once_per_block() -> None:
    calls: list[int] = []
    score = CountingScore(calls)
    p = plan(rr(1.0), 4_000, unit_samples=4_000, block_samples=1_000)
    counts = count_final(p, [(0, 1, Above(score, 0.5)), (1, 0, Above(score, -1.0))], ONE)
    assert calls == [1_000] * 8  # 4 blocks per stream, 2 streams, one call per block
    assert counts[1].hits_x == counts[1].samples_x == 4_000  # every output is above −1


def test_ties_are_kept_with_their_probability_after_the_last_block() -> None:
    """A set {y > 0} with ties at 0 kept with probability q: its hits are the ones plus
    Binomial(#zeros, q), drawn from the unit's generator after its blocks."""
    score = CountingScore([])
    n, q = 20_000, 0.3
    p = plan((0.5, 0.5), n)
    (c,) = count_final(p, [(0, 1, Above(score, 0.0, q))], ONE)
    rng = unit_rng(11, (7, 0))
    ones = int((rng.random(n) < 0.5).sum())
    assert c.hits_x == ones + int(rng.binomial(np.array([n - ones]), q)[0])
    # q = 1 keeps every tie, q = 0 none: the set is then {y ≥ 0} or {y > 0}.
    (all_,) = count_final(p, [(0, 1, Above(score, 0.0, 1.0))], ONE)
    (none,) = count_final(p, [(0, 1, Above(score, 0.0, 0.0))], ONE)
    assert (all_.hits_x, none.hits_x) == (n, ones)


def test_a_sequential_final_stage_stops_at_the_first_look_that_refutes() -> None:
    looks_plan = LookPlan.of(64_000, 0.05, 4)
    base = CoinAuditor(0.5, 64_000, 1, []).propose(rr(3.0), None, None, None)
    prefixes = tuple((30 + k,) for k in range(len(looks_plan.sizes)))
    seq = dataclasses.replace(
        base, looks=Looks(looks_plan, prefixes, 0.5), plan=dataclasses.replace(base.plan)
    )
    got = certify_proposals(seq)
    assert got.look == 0 and got.final_samples == looks_plan.sizes[0]  # ε = 3 ≫ 0.5 at once
    assert got.error == pytest.approx(looks_plan.errors[0] / (2 * 2))
    # A claim no look could refute stops for futility after the first look.
    hopeless = certify_proposals(dataclasses.replace(seq, looks=Looks(looks_plan, prefixes, 50.0)))
    assert hopeless.futile and hopeless.look == 0
    # A claim at the truth (ε = 3) is within reach but not refuted: every look, pooled.
    calm = dataclasses.replace(seq, looks=Looks(looks_plan, prefixes, 3.0))
    last = certify_proposals(calm)
    assert last.look == len(looks_plan.sizes) - 1 and last.final_samples == 64_000
    assert not last.futile
    with pytest.raises(InvalidArgumentError, match="prefixes"):
        Looks(looks_plan, prefixes[:1], 1.0)


def test_several_audits_share_one_batch_of_final_units_and_answer_as_alone() -> None:
    jobs = [
        (CoinAuditor(1.0, 3_000, seed, [], in_process=False), rr(eps), Claimed(1.0))
        for seed, eps in ((0, 1.0), (1, 3.0))
    ]
    batch = run_audits([(a, m, c, None) for a, m, c in jobs], ONE)
    alone = [run_audit(a, m, c) for a, m, c in jobs]
    for together, single in zip(batch, alone, strict=True):
        assert together.detail == single.detail and together.verdict is single.verdict
        assert together.epsilon_lower_bound == single.epsilon_lower_bound
    assert [r.violation for r in batch] == [False, True]
    with pytest.raises(InvalidArgumentError, match="jobs"):  # a draw that must stay here
        run_audits([(CoinAuditor(1.0, 100, 0, []), rr(1.0), Claimed(1.0), None)])


# ------------------------------------------------------------- the guessing-game certifier
@dataclass(frozen=True)
class RRGame:
    """Each member's score is its inclusion bit through ε-randomised response, plus a tiny
    tie-breaker: the one-run guesses of RR are its own, so the game is exactly ε-DP."""

    epsilon: float
    log: list[str] | None = None

    def __call__(self, included: tuple[bool, ...], key: tuple[int, ...]):
        if self.log is not None:
            self.log.append("play")
        rng = unit_rng(7, key)
        bits = np.asarray(included)
        keep = rng.random(bits.size) < math.exp(self.epsilon) / (1 + math.exp(self.epsilon))
        return {"score": np.where(keep, bits, ~bits) + 1e-3 * rng.random(bits.size)}, 0.0


@dataclass(frozen=True)
class GameAuditor:
    """A toy proposer of a guessing game, judged against ``claimed`` (pure DP)."""

    claimed: float
    game: RRGame
    members: int = 1000
    rounds: int = 1
    seed: int = 0

    kind = AuditorKind.METRIC

    def supports(self, mechanism: Any, claim: Any) -> bool:
        return True

    def propose(self, mechanism: Any, claim: Any, config: Any, execution: Any) -> Proposals:
        if self.game.log is not None:
            self.game.log.append("propose")
        plan = GamePlan(self.game, self.members, self.rounds, self.seed, (5,), 6)
        return Proposals(
            statements=(),
            plan=None,
            pair_streams={},
            chosen="",
            confidence=0.95,
            mechanism={"name": "rr game"},
            seed=self.seed,
            samples={"members": self.members * self.rounds},
            game=plan,
        )

    def read(self, proposals: Proposals, certified: Certified) -> Reading:
        if self.game.log is not None:
            self.game.log.append("read")
        game = certified.game
        assert game is not None
        return Reading(
            judged=(Judged.of_bound(game.bound, self.claimed, testable=game.ceiling > 1),),
            evidence=Evidence(refuted="refuted", held="held", blind="blind"),
            bound=game.bound,
            witness=None,
            detail=MetricDetail((), 0),
            claim=Claimed(self.claimed),
        )


def test_the_core_draws_the_bits_and_plays_after_the_proposal() -> None:
    log: list[str] = []
    one = ExecutionConfig(workers=1)  # in this process, so the log sees the plays
    result = run_audit(GameAuditor(1.0, RRGame(1.0, log), rounds=2), None, None, None, one)
    assert log == ["propose", "play", "play", "read"]
    assert result.claimed_epsilon == 1.0
    assert result.confidence_statement.startswith("2 rounds with 2000 members, ")
    plan = GamePlan(RRGame(1.0), 1000, 2, 0, (5,), 6)
    played = draw_game(plan)
    bits = unit_rng(0, (5,)).random((2, 1000)) < 0.5
    assert np.array_equal(played.inside, bits.reshape(-1))


def test_the_game_certifies_each_rule_at_its_bonferroni_share() -> None:
    plan = GamePlan(RRGame(4.0), 1000, 1, 3, (5,), 6)
    game = certify_game(plan, 0.95, 0.0)
    grid = guess_grid(1000)
    assert len(game.rules) == len(grid) + 1  # and the gap split
    assert game.error == pytest.approx(0.05 / (len(grid) + 1))
    # At ε = 4 the all-in rules are ~98 % correct: ε_lcb is far above 1, below 4 + noise.
    assert 2.0 < game.bound < 4.5
    assert game.bound == max(r.epsilon_lower_bound for r in game.rules)


def test_randomised_response_at_its_own_epsilon_is_covered() -> None:
    """The game is exactly ε-DP, so ε_lcb > ε happens in at most α = 5 % of seeds (the
    Bonferroni split makes it far rarer).  40 seeds: 7 or more alarms has probability < 0.01
    under Binomial(40, 0.05)."""
    alarms = sum(
        run_audit(GameAuditor(1.0, RRGame(1.0), seed=seed), None, None).violation
        for seed in range(40)
    )
    assert alarms <= 6
    flagged = run_audit(GameAuditor(1.0, RRGame(3.0)), None, None)
    assert flagged.verdict is Verdict.VIOLATION


def test_a_game_goes_alone_and_not_into_a_batch() -> None:
    auditor = GameAuditor(1.0, RRGame(1.0))
    proposals = auditor.propose(None, None, None, None)
    with pytest.raises(InvalidArgumentError, match="game"):
        dataclasses.replace(proposals, statements=(Proposal(0, True, IsZero(), "best"),))
    with pytest.raises(InvalidArgumentError, match="jobs"):
        run_audits([(auditor, None, None, None)])
    with pytest.raises(InvalidArgumentError, match="game"):
        GamePlan(RRGame(1.0), 1, 1, 0, (5,), 6)
