"""The guessing-game certifier: members in at random, one play, guesses certified.

The core's third certifier, beside Clopper–Pearson on the counts of an event
(:mod:`~.certify`) and the DKW band on scores (:mod:`~.dkw`).  It certifies the one-run game
of Steinke, Nasr & Jagielski ("Privacy Auditing with One (1) Training Run", NeurIPS 2023):

1. **Bits** — the core draws one inclusion bit per member, independent and uniform, from
   the audit's seed (:attr:`GamePlan.bits_key`); the guarantee rests on them, so no
   auditor draws them.
2. **Play** — each round runs the auditor's :class:`GameDraw` once on its row of bits (a
   training on the base data plus the included members) and returns named scores, one
   value per member.  Rounds are pooled: each member lives in one round, so the pooled game
   has ``members · rounds`` members and the same per-member guarantee.
3. **Guess** — every rule of the proposed grid guesses *in* for its highest scores and *out*
   for its lowest (or *in* only), abstaining on the rest; one more rule per score guesses
   every member, split at the widest gap of its scores (:func:`gap_split`).  The grid is
   fixed before the play and the gap is a function of the scores alone, never of the bits.
4. **Certify** — under (ε, δ)-DP the correct guesses of every rule are bounded by
   :func:`dpaudit.analysis.one_run.p_value` (their Thm. 5.2); each rule is tested at
   ``α/G`` for the ``G`` rules on every score (Bonferroni), so the best rule's ε ≥ ε_lcb
   holds at confidence ``1 − α``.  With a :class:`CurveTest` (a curve claim) each rule is
   also tested against the claimed curve as a whole by the f-DP refinement of Mahloujifar,
   Melis & Chaudhuri (arXiv:2410.22235, 2024), and both tests of every rule run at
   ``α/(2G)``.  Reporting the best rule at ``α`` unadjusted, as the paper's code and several
   packages do, overstates the confidence ``G``-fold.

What the bound assumes: the bits are independent and uniform (the core draws them); the
play sees them only through its dataset; the claim is about adding or removing one member.
Nothing about the score or the members' mutual independence: a poor score costs power,
never validity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from dpaudit.analysis import one_run, one_run_fdp
from dpaudit.engine.config import ExecutionConfig
from dpaudit.engine.executor import run_units
from dpaudit.errors import InvalidArgumentError, MechanismError
from dpaudit.random import unit_rng
from dpaudit.results.guess import GuessRule

__all__ = [
    "GUESS_FRACTIONS",
    "CurveTest",
    "GameCertified",
    "GameDraw",
    "GamePlan",
    "GameRound",
    "GameScores",
    "auc",
    "certify_game",
    "certify_guesses",
    "draw_game",
    "game_statement",
    "gap_split",
    "guess_grid",
]

#: Fractions of the members a rule of the default grid guesses on (abstaining on the rest).
GUESS_FRACTIONS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)


class GameDraw(Protocol):
    """One round of the game (picklable): play with the members ``included`` marks, on the
    stream ``key`` of the audit's seed; every named score's value per member, and seconds."""

    def __call__(
        self, included: tuple[bool, ...], key: tuple[int, ...]
    ) -> tuple[dict[str, np.ndarray], float]: ...


@dataclass(frozen=True)
class GameRound:
    """One round's work unit: the draw, its row of bits and its stream key."""

    draw: GameDraw
    included: tuple[bool, ...]
    key: tuple[int, ...]


def run_game_round(unit: GameRound) -> tuple[dict[str, np.ndarray], float]:
    """Play one round (module-level, so that worker processes can run it)."""
    return unit.draw(unit.included, unit.key)


def guess_grid(
    total: int, fractions: tuple[float, ...] = GUESS_FRACTIONS
) -> tuple[tuple[int, int], ...]:
    """The ``(positive, negative)`` guess counts tried on ``total`` members, fixed in advance:
    for each fraction, that many guesses all *in*, and half *in*, half *out*."""
    rules: list[tuple[int, int]] = []
    for f in fractions:
        r = max(1, round(f * total))
        for rule in ((r, 0), ((r + 1) // 2, r // 2)):
            if rule not in rules:
                rules.append(rule)
    return tuple(rules)


def gap_split(scores: np.ndarray) -> tuple[int, int]:
    """Guess every member, split at the widest gap of the sorted scores (middle 90 % of ranks).

    A function of the scores alone, never of the inclusion bits, so it is a guess rule the
    bound allows without any cost beyond its one Bonferroni share: when a flaw separates in
    from out, the gap falls between them whatever the share of members included.
    """
    values = np.sort(np.asarray(scores, dtype=np.float64))
    m = values.size
    lo, hi = max(1, m // 20), max(1, m - m // 20)
    if hi <= lo:
        return (m + 1) // 2, m // 2
    below = lo + int(np.argmax(np.diff(values)[lo - 1 : hi - 1]))
    return m - below, below


@dataclass(frozen=True)
class CurveTest:
    """The f-DP test of a curve claim: its ``B⁻¹`` and whether it is μ-GDP (then μ_lcb too)."""

    inverse_blowup: Any
    gdp: bool

    @classmethod
    def of(cls, claim: Any) -> CurveTest:
        """The test of ``claim``'s own curve (:func:`one_run_fdp.claim_inverse_blowup`)."""
        return cls(one_run_fdp.claim_inverse_blowup(claim), one_run_fdp.is_gaussian_claim(claim))

    def rule(self, m: int, g: int, v: int, err: float) -> tuple[bool, float | None]:
        """Whether ``v`` correct of ``g`` refute the curve at ``err``, and μ_lcb if μ-GDP."""
        refuted = bool(one_run_fdp.refutes(self.inverse_blowup, m, g, v, err)[0])
        return refuted, (one_run_fdp.gdp_lower_bound(m, g, v, err) if self.gdp else None)

    def power(self, total: int, grid: tuple, err: float) -> tuple[bool, float | None]:
        """Whether all-correct guesses of some rule of ``grid`` refute the curve; μ's ceiling."""
        testable = any(self.rule(total, p + n, p + n, err)[0] for p, n in grid)
        if not self.gdp:
            return testable, None
        return testable, max(one_run_fdp.gdp_ceiling(total, p + n, err) for p, n in grid)


@dataclass(frozen=True)
class GamePlan:
    """What an auditor proposes for a guessing game, before any bit is drawn.

    ``draw``: one round (:class:`GameDraw`); ``members`` per round; ``rounds`` pooled;
    ``seed``, ``bits_key``, ``round_key``: the bits come from ``unit_rng(seed, bits_key)``,
    round ``r`` plays on the stream ``(round_key, r)``; ``grid``: the ``(positive,
    negative)`` rules (None: :func:`guess_grid` of the pooled members); ``gap``: add the
    gap split on every score; ``curve``: test each rule against a claimed curve too;
    ``round_noun``, ``member_noun``: how the confidence sentence names them; ``source``:
    what produces the scores, as errors name it; ``execution``: how the rounds run (None:
    the audit's).
    """

    draw: GameDraw
    members: int
    rounds: int
    seed: int
    bits_key: tuple[int, ...]
    round_key: int
    grid: tuple[tuple[int, int], ...] | None = None
    gap: bool = True
    curve: CurveTest | None = None
    round_noun: str = "round"
    member_noun: str = "members"
    source: str = "the game"
    execution: ExecutionConfig | None = None

    def __post_init__(self) -> None:
        if self.members < 2 or self.rounds < 1:
            raise InvalidArgumentError(
                "game", (self.members, self.rounds), "at least 2 members and 1 round"
            )

    @property
    def total(self) -> int:
        """Members of the pooled game."""
        return self.members * self.rounds

    def rules(self) -> tuple[tuple[int, int], ...]:
        """The grid the plan proposes (fixed before the play)."""
        return self.grid if self.grid is not None else guess_grid(self.total)


@dataclass(frozen=True)
class GameScores:
    """What a play gave: every score's values per member (rounds pooled, in round order),
    the inclusion bits, and the seconds of each round."""

    scores: dict[str, np.ndarray]
    inside: np.ndarray
    seconds: tuple[float, ...]


def draw_game(plan: GamePlan, execution: ExecutionConfig | None = None) -> GameScores:
    """Draw the bits, play every round (as work units), pool the scores."""
    bits = unit_rng(plan.seed, plan.bits_key).random((plan.rounds, plan.members)) < 0.5
    units = [
        GameRound(plan.draw, tuple(bits[r].tolist()), (plan.round_key, r))
        for r in range(plan.rounds)
    ]
    runs = plan.execution or execution or ExecutionConfig()
    outs = run_units(run_game_round, units, runs, desc=f"{plan.round_noun}s")
    names = tuple(outs[0][0])
    if any(tuple(s) != names for s, _ in outs):
        raise MechanismError(
            f"{plan.source} named different scores in different {plan.round_noun}s"
        )
    pooled = {name: np.concatenate([s[name] for s, _ in outs]) for name in names}
    return GameScores(pooled, bits.reshape(-1), tuple(t for _, t in outs))


def _rules(
    scores: np.ndarray,
    inside: np.ndarray,
    grid: tuple,
    gap: bool,
    err: float,
    delta: float,
    name: str,
    curve: CurveTest | None,
) -> list[GuessRule]:
    """Every rule of ``grid`` (and the gap split) on one score, each certified at ``err``."""
    order = np.argsort(-scores, kind="stable")
    out = []
    for pos, neg in (*grid, *((gap_split(scores),) if gap else ())):
        lowest = order[len(order) - neg :] if neg else order[:0]
        correct = int(inside[order[:pos]].sum()) + int((~inside[lowest]).sum())
        bound = one_run.epsilon_lower_bound(inside.size, pos + neg, correct, err, delta)
        refuted, mu = curve.rule(inside.size, pos + neg, correct, err) if curve else (None, None)
        out.append(GuessRule(pos, neg, correct, bound, name, refuted, mu))
    return out


def certify_guesses(
    scores: dict[str, np.ndarray],
    inside: np.ndarray,
    confidence: float,
    delta: float,
    curve: CurveTest | None = None,
    grid: tuple[tuple[int, int], ...] | None = None,
    gap: bool = True,
) -> tuple[tuple[GuessRule, ...], float, float]:
    """Every rule of ``grid`` (default :func:`guess_grid`) and the gap split on every score,
    each at ``α/(rules · scores · tests)``: the rules, the error of each test, and the ceiling
    (the largest ε_lcb all-correct guesses could give; ``curve``: two tests per rule)."""
    total = int(inside.size)
    grid = guess_grid(total) if grid is None else grid
    tests = 2 if curve is not None else 1
    err = (1.0 - confidence) / ((len(grid) + int(gap)) * len(scores) * tests)
    rules = tuple(
        rule
        for name, values in scores.items()
        for rule in _rules(values, inside, grid, gap, err, delta, name, curve)
    )
    ceiling = max(one_run.epsilon_ceiling(total, p + n, err, delta) for p, n in grid)
    return rules, err, ceiling


def _strength(rule: GuessRule) -> tuple[bool, float, float]:
    """A rule's rank: refuting the claimed curve first, then μ_lcb, then ε_lcb."""
    mu = rule.mu_lower_bound if rule.mu_lower_bound is not None else 0.0
    return bool(rule.refutes_curve), mu, rule.epsilon_lower_bound


@dataclass(frozen=True)
class GameCertified:
    """A certified game: every rule, the best, and what the game could have shown.

    ``error``: each test's error; ``ceiling``: the largest ε_lcb of all-correct guesses;
    ``best``: the strongest rule (refuting the curve, then μ_lcb, then ε_lcb);
    ``curve_testable``/``mu_ceiling``: under a curve test, whether all-correct guesses of some
    rule refute the curve, and the largest μ the grid could certify (μ-GDP).
    """

    rules: tuple[GuessRule, ...]
    error: float
    ceiling: float
    best: int
    played: GameScores
    tests: int
    curve_testable: bool | None = None
    mu_ceiling: float | None = None

    @property
    def bound(self) -> float:
        """The largest certified ε_lcb of any rule."""
        return max(r.epsilon_lower_bound for r in self.rules)


def certify_game(
    plan: GamePlan, confidence: float, delta: float, execution: ExecutionConfig | None = None
) -> GameCertified:
    """Play ``plan`` (:func:`draw_game`) and certify its rules at ``confidence`` and ``δ``."""
    played = draw_game(plan, execution)
    grid = plan.rules()
    rules, err, ceiling = certify_guesses(
        played.scores, played.inside, confidence, delta, plan.curve, grid, plan.gap
    )
    best = max(range(len(rules)), key=lambda i: _strength(rules[i]))
    testable, mu_ceiling = plan.curve.power(plan.total, grid, err) if plan.curve else (None, None)
    tests = 2 if plan.curve is not None else 1
    return GameCertified(rules, err, ceiling, best, played, tests, testable, mu_ceiling)


def game_statement(plan: GamePlan, game: GameCertified, confidence: float) -> str:
    """The confidence sentence of a certified game: the play, the best rule, the split."""
    top = game.rules[game.best]
    k, scores = len(game.rules), len({r.score for r in game.rules})
    alpha = 1.0 - confidence
    if game.tests == 1:
        how = (
            f"Each rule is tested at error α/{k} = {game.error:.4g} (α = {alpha:.4g}, "
            "Bonferroni) with the bound of Steinke, Nasr & Jagielski (NeurIPS 2023, Thm. 5.2), "
            f"so ε ≥ ε_lcb holds with probability ≥ {confidence:g}."
        )
    else:
        how = (
            f"Each rule is tested twice, each time at error α/(2·{k}) = {game.error:.4g} "
            f"(α = {alpha:.4g}, Bonferroni over rules and tests): on ε at δ with the bound of "
            "Steinke, Nasr & Jagielski (NeurIPS 2023, Thm. 5.2), and against the claimed curve "
            "as a whole with the f-DP bound of Mahloujifar, Melis & Chaudhuri "
            f"(arXiv:2410.22235, 2024), so every statement holds with probability ≥ "
            f"{confidence:g}."
        )
    rounds = f"{plan.rounds} {plan.round_noun}{'s' if plan.rounds > 1 else ''}"
    return (
        f"{rounds} with {plan.total} {plan.member_noun}, {int(game.played.inside.sum())} "
        f"included at random; the best of {k} guess rules that never see the bits "
        f"({k // max(1, scores)} per score, on {scores} score(s)) guessed on {top.score!r} "
        f"{top.guesses} times ({top.positive} in, {top.negative} out), {top.correct} correct. "
        f"{how}"
    )


def auc(scores: np.ndarray, inside: np.ndarray) -> float:
    """The area under the ROC curve of ``scores``, in against out (descriptive only)."""
    from scipy.stats import rankdata  # here: the procedure's import stays free of scipy

    n_in, n_out = int(inside.sum()), int((~inside).sum())
    if n_in == 0 or n_out == 0:
        return math.nan
    ranks = rankdata(scores)
    return float((ranks[inside].sum() - n_in * (n_in + 1) / 2) / (n_in * n_out))
