"""The black-box audit's final stage: the sets the search left, proposed to the core and read back.

The search (:mod:`dpaudit.auditors.blackbox.stages`) ends with a shortlist; here its sets
become the :class:`~dpaudit.auditors.core.procedure.Proposals` the core certifies on
fresh outputs (:func:`search_proposals`):

* every set is a :class:`ThresholdSet` — ``{s > t}`` (upper tail) or ``{s < t}`` of a
  trained score, an output *on* the threshold kept with the set's tie probability — an
  event on blocks of the mechanism's outputs (:class:`VectorDraw`) whose score the core
  computes once per block for all sets that share it;
* sets on one pair share its samples, whatever their score and orientation (two streams
  per pair: ``x`` and ``x'``); the Bonferroni split needs no independence between them;
* the final stage is a fixed-size look, or with ``AuditConfig.sequential`` the doubling
  looks of :mod:`dpaudit.auditors.core.sequential`, stopping once a bound refutes ε.

:class:`SearchFinal` reads the certified sets back: the best one is the witness, every
one is recorded with its role and face projection.  Imports nothing above ``auditors/``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpaudit.auditors.blackbox.config import AuditConfig
from dpaudit.auditors.blackbox.counting import block_rows, unit_rows
from dpaudit.auditors.blackbox.outcome import (
    build_witness,
    certified_sets,
    no_witness_reading,
    proposals,
    result_reading,
    search_chosen,
)
from dpaudit.auditors.blackbox.pairs import InputPair
from dpaudit.auditors.blackbox.sampler import Sampler, Timer
from dpaudit.auditors.blackbox.scores import Score
from dpaudit.auditors.blackbox.selection import Candidate
from dpaudit.auditors.blackbox.shortlist import Budget, Entry, Shortlist
from dpaudit.auditors.core.certify import best
from dpaudit.auditors.core.counting import FinalPlan, Stream, UnitGenerators
from dpaudit.auditors.core.guard import checked_sample
from dpaudit.auditors.core.procedure import Certified, Looks, Proposals, Reading
from dpaudit.auditors.core.proposal import Proposal
from dpaudit.auditors.core.sequential import DEFAULT_LOOKS, LookPlan
from dpaudit.auditors.core.streams import StageKey, final_look
from dpaudit.engine.timeout import mechanism_on_input
from dpaudit.errors import DPAuditError, MechanismError
from dpaudit.mechanisms.base import Mechanism

__all__ = [
    "SearchFinal",
    "ThresholdSet",
    "VectorDraw",
    "final_plan",
    "nothing_to_certify",
    "search_proposals",
]


@dataclass(frozen=True)
class VectorDraw:
    """The core's draw of a vector mechanism: checked outputs of ``M(x)`` (``x`` encoded)."""

    mechanism: Mechanism

    def __call__(self, x: tuple[float, ...], rows: int, rng: np.random.Generator) -> np.ndarray:
        """``rows`` outputs of ``M(x)``, checked (shape, dtype, NaN, a raising mechanism)."""
        mech = self.mechanism
        shaped = np.asarray(x, dtype=np.float64).reshape(mech.input_shape)
        try:
            return checked_sample(mech, shaped, rows, rng)
        except MechanismError:
            raise
        except DPAuditError as exc:  # one picklable type across processes
            raise MechanismError(f"mechanism {mech.name!r}: {exc}") from None

    def describe(self, x: tuple[float, ...]) -> str:
        """What drawing on ``x`` runs, for messages."""
        return mechanism_on_input(self.mechanism, x)


@dataclass(frozen=True)
class ThresholdSet:
    """``{feature > threshold}`` (``upper``) or ``{feature < threshold}``, and the outputs on
    the threshold kept with probability ``tie_probability`` (a randomised-tie set).

    The threshold is a float32, as the search fixed it; a score value that is NaN belongs
    to the lower tail (it is neither above nor at the threshold).
    """

    feature: Score
    threshold: np.float32
    upper: bool
    tie_probability: float

    def on(self, values: np.ndarray) -> np.ndarray:
        """Outputs strictly inside the set, from their score values."""
        return values > self.threshold if self.upper else ~(values >= self.threshold)

    def ties(self, values: np.ndarray) -> np.ndarray:
        """Outputs on the threshold, each kept at random by the counting unit."""
        return values == self.threshold

    def __call__(self, block: np.ndarray) -> np.ndarray:
        """Outputs strictly inside the set (ties are the unit's to keep at random)."""
        return self.on(self.feature(block))

    @classmethod
    def of(cls, candidate: Candidate) -> ThresholdSet:
        """Candidate ``candidate``'s set."""
        return cls(
            candidate.score,
            np.float32(candidate.threshold),
            candidate.tail == "upper",
            candidate.tie_probability,
        )


def final_plan(
    mech: Mechanism, cfg: AuditConfig, streams: tuple[Stream, ...], desc: str
) -> FinalPlan:
    """How the final outputs of ``streams`` are drawn: in units and blocks sized by the output
    size, each unit from ``unit_rng(seed, key)``, stopped after ``cfg.unit_timeout``."""
    return FinalPlan(
        draw=VectorDraw(mech),
        streams=streams,
        samples=cfg.final_samples,
        generators=UnitGenerators(cfg.seed),
        unit_samples=unit_rows(mech),
        block_samples=block_rows(mech),
        desc=desc,
        timeout=cfg.unit_timeout,
    )


@dataclass(frozen=True)
class SearchFinal:
    """What the dpaudit-mode search hands its reading: the sets and where they came from."""

    mechanism: Mechanism
    config: AuditConfig
    pairs: tuple[InputPair, ...]
    families: tuple[str, ...]
    compared: int
    chosen: tuple[Candidate, ...]
    roles: tuple[str, ...]
    faces: tuple[float, ...]
    screened: int
    representation: str
    timer: Timer
    sampler: Sampler

    def read(self, proposed: Proposals, certified: Certified) -> Reading:
        """The best certified set as the witness; every set recorded with its role."""
        streams = proposed.plan.streams if proposed.plan is not None else ()
        drawn = (certified.final_samples or 0) * len(streams)
        self.sampler.tally.drawn += drawn
        self.timer.mark("final", drawn)
        mech, cfg, pairs = self.mechanism, self.config, list(self.pairs)
        counts, certs = list(certified.counts), certified.certificates
        top = best(certs)
        c = self.chosen[top]
        sx, sxp = proposed.pair_streams[c.pair_index]
        num, den = (sx, sxp) if c.numerator_is_x else (sxp, sx)
        witness = build_witness(
            mech, pairs[c.pair_index], c, certs[top], cfg.seed,
            (StageKey.FINAL, num), (StageKey.FINAL, den), cfg.confidence,
        )  # fmt: skip
        record = certified_sets(
            pairs, proposals(list(self.roles), list(self.chosen)), list(self.faces), counts, certs
        )
        return result_reading(
            mech, cfg, witness, self.families, pairs, self.compared, len(self.chosen), record,
            screened=self.screened, representation=self.representation,
        )  # fmt: skip


def search_proposals(
    state: Shortlist,
    entries: list[Entry],
    roles: list[str],
    sets: tuple[int, int, int, int, int],
    budget: Budget,
    timer: Timer,
    representation: str,
) -> Proposals:
    """The shortlist's ``entries`` (with their ``roles``) as the proposals the core certifies.

    ``sets``: ``K`` and how many are runners-up, hedges, rungs and rare sets (for the
    confidence sentence).  One pair of streams per pair with a set, numbered in the order
    the sets name them: pair ``g``'s ``x`` draws from key ``(look, 2g, unit)``, its ``x'``
    from ``(look, 2g + 1, unit)``.  Pairs no set names have no stream.
    """
    mech, cfg, pairs = budget.mechanism, budget.config, list(state.pairs)
    chosen = [e.candidate for e in entries]
    group: dict[int, int] = {}
    for c in chosen:
        group.setdefault(c.pair_index, len(group))
    streams: list[Stream] = []
    for i, g in group.items():
        streams += [Stream(pairs[i].x, (2 * g,)), Stream(pairs[i].x_prime, (2 * g + 1,))]
    at = (cfg.final_samples, budget.alpha_side, budget.delta)  # as the ladder compares
    faces = [float(state.tables[e.combo].face_projection([e.index], *at)[0]) for e in entries]
    plan = LookPlan.of(
        cfg.final_samples, 1.0 - cfg.confidence, 1 if not cfg.sequential else DEFAULT_LOOKS
    )
    claim_epsilon = mech.claim.epsilon  # the sequential stage stops once a bound exceeds it
    chosen_text = search_chosen(
        (len(pairs), len(state.families), state.compared), bool(state.samples.get("playoff")), sets
    )
    return Proposals(
        statements=tuple(
            Proposal(c.pair_index, c.numerator_is_x, ThresholdSet.of(c), role)
            for c, role in zip(chosen, roles, strict=True)
        ),
        plan=final_plan(mech, cfg, tuple(streams), budget.sampler.tally.label + "final"),
        pair_streams={i: (2 * g, 2 * g + 1) for i, g in group.items()},
        chosen=chosen_text,
        confidence=cfg.confidence,
        mechanism=mech.spec(),
        seed=cfg.seed,
        samples={**state.samples, "final": cfg.final_samples},
        delta=budget.delta,
        timing=dict(timer.marks),
        trust=budget.trust,
        execution=budget.sampler.execution,
        looks=Looks(plan, tuple((final_look(k),) for k in range(len(plan.sizes))), claim_epsilon),
        state=SearchFinal(
            mech, cfg, tuple(pairs), state.families, state.compared, tuple(chosen), tuple(roles),
            tuple(faces), state.screened, representation, timer, budget.sampler,
        ),
    )  # fmt: skip


@dataclass(frozen=True)
class NothingToCertify:
    """The reading when no candidate set had a finite projected bound."""

    mechanism: Mechanism
    config: AuditConfig
    pairs: tuple[InputPair, ...]
    families: tuple[str, ...]
    compared: int
    screened: int
    representation: str

    def read(self, proposed: Proposals, certified: Certified) -> Reading:
        """Nothing was certified: the reading says so, and what the search looked at."""
        return no_witness_reading(
            self.mechanism, self.config, list(self.pairs), self.families, self.compared,
            screened=self.screened, representation=self.representation,
        )  # fmt: skip


def nothing_to_certify(
    state: Shortlist, budget: Budget, timer: Timer, representation: str
) -> Proposals:
    """No statement to certify (no candidate had a finite projected bound)."""
    mech, cfg = budget.mechanism, budget.config
    return Proposals(
        statements=(),
        plan=None,
        pair_streams=(),
        chosen="no candidate set separated the outputs; nothing was re-estimated",
        confidence=cfg.confidence,
        mechanism=mech.spec(),
        seed=cfg.seed,
        samples={"selection": cfg.samples, "final": 0},
        timing=dict(timer.marks),
        trust=budget.trust,
        state=NothingToCertify(
            mech, cfg, tuple(state.pairs), state.families, state.compared, state.screened,
            representation,
        ),
    )  # fmt: skip
