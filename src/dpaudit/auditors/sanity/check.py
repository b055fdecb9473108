"""Reconstruction sanity check (Habernal, ACL 2022, §4), for any mechanism with real-vector output.

The experiment
--------------
Two neighbouring local-DP inputs: ``n`` zeros and ``n`` ones.  Each is given
to the mechanism ``N`` times (one run = one individual).  The attacker rounds
every output coordinate (``1`` iff value ``>= 0.5``; NaN rounds to 0) and takes
a majority vote over the coordinates of the row — ``round(mean(row))`` in the
paper's code, i.e. round-half-to-even, so a tie becomes 0 (``tie_rule``
changes that).  The counts form the 2×2 table ``f[true][guess]``.

Two numbers come out of the table:

* the paper's **empirical loss** (maximum-likelihood estimate, uniform prior):
  ``max(|ln(f00/f10)|, |ln(f01/f11)|)``, infinite when exactly one count of a
  column is zero (a column with no hits at all carries no evidence and is
  skipped).  It is a point estimate with no error bar.
* a **one-sided ε lower bound** at ``confidence``: for the event ``S = {guess = g}``
  and the direction ``(a, b)``, DP requires ``Pr[S | a] ≤ e^ε Pr[S | b]``, so
  ``ε ≥ ln(P_lower(S | a)) − ln(P_upper(S | b))`` with exact Clopper–Pearson
  bounds.  Four candidates are tried (two guesses × two directions); the
  confidence is corrected by **Bonferroni over all 8 one-sided bounds** (α/8
  each), so the reported maximum holds with probability ≥ ``confidence``.  With
  a zero count in the denominator the bound is finite and limited by ``N`` —
  which is how DPText and copy-input show up.  Verdict: violation iff
  ``ε_lcb > claimed ε`` (one-sided: a pass never proves privacy).

Counts accumulate over all chunks.  **The reference code did not**: for
``n > 16`` it ran 10 chunks of 1,000,000 runs and *assigned* each chunk's
counts, so the published cells for n ∈ {32, 64, 128} rest on the last 1M runs
only (see :func:`dpaudit.reproduce.acl_grid.reference_effective_runs`).  That
behaviour is not offered.  The paper's grid of cells is
:mod:`dpaudit.reproduce.acl_grid`.

Speed: the fused path
---------------------
Mechanisms of the form ``M(x) = x + T(U)`` (``mech.is_additive``) expose their
sampler's own transform ``T``.  The per-coordinate decision ``[x + T(u) >= 0.5]``
is then a function of the uniform ``u`` alone.  The fused path draws ``u`` on
the 32-bit grid ``u_k = (k + 1/2)·2⁻³²``, ``k`` uniform on ``{0, …, 2³²−1}`` (two
``k`` per raw 64-bit output of the generator), and precomputes **exactly** the
set of ``k`` whose decision is 1 by evaluating ``x + T(u_k) >= 0.5`` in float64
(the same arithmetic as the sampler): on a coarse grid, then by bisection on
``T`` itself to the single grid point where the decision flips.  This handles
monotone transforms (Laplace: one threshold) and piecewise ones (DPText's NaN→0
branch: ``T = 0`` for ``u > 1/2``) alike.  The set is then checked against
direct evaluation at 2¹⁸ further points; if it disagrees anywhere (a transform
with features narrower than a coarse cell) the generic path is used instead.
The only approximation is the 2⁻³² resolution of ``u``: each decision
probability is off by at most 2⁻³² per flip point (the generic samplers use 53
bits).  Sampling is then a wrapping subtraction and one comparison per
coordinate, counted per row in cache-sized blocks; no ``N × n`` array and no
float intermediate exists.  Every coordinate is still an independent draw of
the mechanism's output — no binomial short-cut.

Other mechanisms go through the generic path: ``mech.sample`` in chunks, with
every output checked (shape, dtype, NaN, inf) before the attack.

Reproducibility: work units are (mechanism, input, chunk index, rows, seed);
each draws from :func:`dpaudit.random.unit_rng` keyed by the mechanism spec,
input and chunk, and counts merge by addition, so results are bit-identical for
any number of workers or backend.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.auditors.core.answer import (
    Judged,
    answer,
    epsilon_evidence,
    joint_confidence,
    untestable_epsilon,
)
from dpaudit.auditors.core.certify import FinalCounts, best, certify, split_error
from dpaudit.auditors.core.guard import checked_sample
from dpaudit.auditors.core.power import power_summary
from dpaudit.auditors.core.trust import TrustReport, establish_trust
from dpaudit.auditors.sanity.decision_set import DecisionSet, attack_decision_set
from dpaudit.engine.executor import ExecutionConfig, run_units
from dpaudit.engine.timeout import mechanism_label
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.base import Mechanism
from dpaudit.random import stable_hash, unit_rng
from dpaudit.results.audit import AuditorKind, AuditResult, register_detail
from dpaudit.results.findings import DeclarationFinding
from dpaudit.serialization import to_jsonable
from dpaudit.validation import check_int, check_probability_open, check_seed
from dpaudit.witness import Witness, WitnessKind, WitnessSeeds

#: The sanity check certifies 4 statements together: guess g ∈ {0, 1} × direction.
SANITY_STATEMENTS = 4

#: How a tie (exactly half the coordinates rounded to 1) is voted.
#: ``half-even`` is numpy's ``round(0.5) = 0`` as in the reference; ``half-up``
#: votes 1; ``random`` flips a fair coin per tie from the unit's generator.
TIE_RULES = ("half-even", "half-up", "random")
#: ``auto`` uses the fused path when the mechanism is additive.
PATHS = ("auto", "fused", "generic")

#: Coordinates per block inside a unit (≈ 4 MB of 32-bit uniforms + 1 MB of flags).
_BLOCK_COORDS = 1 << 20
#: Output coordinates per work unit (≈ 0.1 s on the fused path).
_UNIT_COORDS = 1 << 26
_U64_MAX = np.uint64(0xFFFF_FFFF_FFFF_FFFF)
_SEED_TAG = stable_hash("dpaudit.sanity-check")


# ----------------------------------------------------------------- the kernels
def _count_dtype(n: int) -> type[np.unsignedinteger[Any]]:
    if n < 256:
        return np.uint8
    return np.uint16 if n < 65536 else np.uint32


def _vote_ones(counts: np.ndarray, n: int, tie_rule: str, rng: np.random.Generator) -> int:
    """Rows whose majority vote is 1, given per-row counts of coordinates rounded to 1."""
    half = n // 2
    ones = int(np.count_nonzero(counts > half))
    if n % 2 == 0 and tie_rule != "half-even":
        ties = int(np.count_nonzero(counts == half))
        ones += ties if tie_rule == "half-up" else int(rng.binomial(ties, 0.5))
    return ones


def _fused_ones(
    decision: DecisionSet, n: int, rows: int, rng: np.random.Generator, tie_rule: str
) -> int:
    """Majority votes equal to 1 among ``rows`` runs, drawing ``n`` 32-bit uniforms per run."""
    if decision.constant:
        return rows if decision.first else 0  # counts are 0 or n: no tie, nothing to draw
    interval = decision.cyclic_interval()
    flips = np.asarray(decision.flips, dtype=np.uint32)
    block_rows = max(2, (_BLOCK_COORDS // n) & ~1)
    flags = np.empty(n * block_rows, dtype=bool)
    dtype = _count_dtype(n)
    ones = 0
    for start in range(0, rows, block_rows):
        r = min(block_rows, rows - start)
        m = n * r
        raw = rng.integers(0, _U64_MAX, size=(m + 1) // 2, dtype=np.uint64, endpoint=True)
        # Layout (coordinate, run): summing over axis 0 adds contiguous rows (fast for any n).
        k = raw.view(np.uint32)[:m].reshape(n, r)
        hit = flags[:m].reshape(n, r)
        if interval is not None:
            lo, width = interval
            np.subtract(k, np.uint32(lo), out=k)  # wraps modulo 2^32
            np.less(k, np.uint32(width), out=hit)
        else:
            crossings = np.searchsorted(flips, k, side="right")
            np.not_equal(crossings & 1, int(decision.first), out=hit)
        counts = hit.sum(axis=0, dtype=dtype)
        ones += _vote_ones(counts, n, tie_rule, rng)
    return ones


def _generic_ones(
    mech: Mechanism, x: np.ndarray, rows: int, rng: np.random.Generator, tie_rule: str
) -> int:
    """Majority votes equal to 1 among ``rows`` runs of ``mech.sample``."""
    m = int(np.prod(mech.output_shape, dtype=np.int64))
    block_rows = max(1, _BLOCK_COORDS // m)
    dtype = _count_dtype(m)
    ones = 0
    for start in range(0, rows, block_rows):
        r = min(block_rows, rows - start)
        out = checked_sample(mech, x, r, rng).reshape(r, m)
        counts = (out >= 0.5).sum(axis=1, dtype=dtype)  # NaN >= 0.5 is False: rounds to 0
        ones += _vote_ones(counts, m, tie_rule, rng)
    return ones


# ------------------------------------------------------------------ work units
@dataclass(frozen=True)
class SanityUnit:
    """One chunk of runs of one mechanism on one input: the picklable work unit."""

    mechanism: Mechanism
    x_bit: int
    chunk: int
    rows: int
    seed: int
    spec_key: int
    tie_rule: str
    decision: DecisionSet | None  # None: generic path

    def describe(self) -> str:
        """What this unit samples, for messages (:class:`~dpaudit.engine.timeout.DescribedUnit`)."""
        return f"mechanism {mechanism_label(self.mechanism)!r} on input all {self.x_bit}"


def run_sanity_unit(unit: SanityUnit) -> np.ndarray:
    """Counts ``[rows, votes for 1]`` of one unit (int64), mergeable by addition."""
    rng = unit_rng(unit.seed, (_SEED_TAG, unit.spec_key, unit.x_bit, unit.chunk))
    mech = unit.mechanism
    if unit.decision is not None:
        n = int(np.prod(mech.output_shape, dtype=np.int64))
        ones = _fused_ones(unit.decision, n, unit.rows, rng, unit.tie_rule)
    else:
        x = np.full(mech.input_shape, float(unit.x_bit))
        ones = _generic_ones(mech, x, unit.rows, rng, unit.tie_rule)
    return np.array([unit.rows, ones], dtype=np.int64)


# --------------------------------------------------------------------- results
@register_detail(AuditorKind.SANITY)
@dataclass(frozen=True)
class SanityDetail:
    """What only the sanity check reports: its experiment and its 2×2 table.

    ``dim``: ``n``, the input's coordinates; ``output_dim``: output coordinates
    per run; ``runs``: runs per input; ``counts[true][guess]``: the table;
    ``empirical_loss``: the paper's MLE (:func:`empirical_loss`); ``path``:
    ``fused`` (declared transform) or ``generic`` (sampler);
    ``coordinate_probability``: the fused path's per-coordinate decision
    probability for 0^n and 1^n; ``coordinates``: output coordinates actually
    drawn — ``runs·output_dim`` per input, except an input whose decision is
    constant on the fused path (e.g. DPText on ``1^n``), for which nothing is drawn.
    """

    dim: int
    output_dim: int
    runs: int
    tie_rule: str
    counts: tuple[tuple[int, int], tuple[int, int]]
    empirical_loss: float
    path: str
    coordinate_probability: tuple[float, float] | None
    coordinates: int


def empirical_loss(counts: Any) -> float:
    """The ACL 2022 MLE loss ``max(|ln(f00/f10)|, |ln(f01/f11)|)`` of a table ``f[true][guess]``.

    A term is infinite when exactly one of its two counts is zero; a guess that
    never occurs (both zero) carries no evidence and is skipped.
    """
    f = np.asarray(counts, dtype=np.int64)
    if f.shape != (2, 2) or np.any(f < 0):
        raise InvalidArgumentError("counts", f.tolist(), "a 2x2 table of non-negative counts")
    loss = 0.0
    for g in (0, 1):
        a, b = int(f[0, g]), int(f[1, g])
        if a == 0 and b == 0:
            continue
        if a == 0 or b == 0:
            return math.inf
        loss = max(loss, abs(math.log(a / b)))
    return loss


def sanity_epsilon_lower_bound(
    counts: Any,
    runs: int,
    confidence: float,
    *,
    dim: int = 1,
    seeds: tuple[int, int] | None = None,
) -> tuple[float, Witness | None]:
    """Clopper–Pearson ε lower bound from the 2×2 table, Bonferroni-corrected over 4 candidates.

    Candidates: guess ``g`` ∈ {0, 1} × direction (a, b) ∈ {(0, 1), (1, 0)};
    each is ``ln P_lower(g | a) − ln P_upper(g | b)`` with both one-sided bounds
    at ``α/8``.  Returns ``(max(0, best), witness)``; witness is None when no
    candidate is positive.  The witness's inputs are the constant vectors
    ``a^dim`` and ``b^dim``; ``seeds`` = ``(root seed, spec key)`` of the run
    records the unit-key prefixes its counts were drawn from.
    """
    confidence = check_probability_open("confidence", confidence)
    f = np.asarray(counts, dtype=np.int64)
    # The four statements (guess g, direction a over b), certified jointly by the core.
    statements = [(g, a, b) for g in (0, 1) for a, b in ((0, 1), (1, 0))]  # SANITY_STATEMENTS
    certificates = certify(
        [FinalCounts(int(f[a, g]), runs, int(f[b, g]), runs) for g, a, b in statements],
        confidence,
    )
    top = best(certificates)
    cert = certificates[top]
    if not cert.lower_bound > 0.0:
        return 0.0, None
    g, a, b = statements[top]
    k1, k2 = cert.p1.hits, cert.p2.hits
    witness = Witness(
        kind=WitnessKind.SANITY_CHECK,
        x=(float(a),) * dim,
        x_prime=(float(b),) * dim,
        event=f"guess(y) = {g}",  # the reconstruction attack's guess from output y
        epsilon_lower_bound=cert.lower_bound,
        confidence=confidence,
        p1=cert.p1,
        p2=cert.p2,
        epsilon_estimate=math.log(k1 / k2) if k2 else math.inf,
        seeds=None
        if seeds is None
        else WitnessSeeds(seeds[0], (_SEED_TAG, seeds[1], a), (_SEED_TAG, seeds[1], b)),
    )
    return cert.lower_bound, witness


# ------------------------------------------------------------------- planning
@dataclass(frozen=True)
class SanityPlan:
    """Everything needed to run one sanity check: the units and what the result records."""

    mechanism: Mechanism
    runs: int
    seed: int
    confidence: float
    tie_rule: str
    path: str
    decisions: tuple[DecisionSet, DecisionSet] | None
    units: tuple[SanityUnit, ...]
    #: What the audit's trust call found (None: dpaudit's own mechanism, trusted), passed
    #: into the result's construction.
    trust: TrustReport | None = None

    @property
    def findings(self) -> tuple[DeclarationFinding, ...]:
        """Declarations found inconsistent while planning (the fused path was then not used)."""
        return () if self.trust is None else self.trust.findings

    @property
    def dim(self) -> int:
        """Input dimension ``n``."""
        return self.mechanism.input_domain.size

    @property
    def output_dim(self) -> int:
        """Output coordinates per run."""
        return int(np.prod(self.mechanism.output_shape, dtype=np.int64))


def _spec_key(mech: Mechanism) -> int:
    spec = {"class": f"{type(mech).__module__}.{type(mech).__qualname__}", **mech.spec()}
    return stable_hash(json.dumps(to_jsonable(spec), sort_keys=True))


def check_sanity_mechanism(mech: Mechanism) -> None:
    """Reject mechanisms the sanity check cannot run: inputs must include 0^n and 1^n."""
    if not isinstance(mech, Mechanism):
        raise InvalidArgumentError("mechanism", mech, "a dpaudit Mechanism instance")
    if mech.output_kind == "categorical":
        raise InvalidArgumentError(
            "mechanism", mech.name, "a mechanism with real-vector or binary output"
        )
    domain = mech.input_domain
    if len(domain.shape) != 1 or not (domain.low <= 0.0 and domain.high >= 1.0):
        raise InvalidArgumentError(
            "mechanism",
            f"{mech.name} on {domain.describe()}",
            "a mechanism whose inputs include [0, 1]^n (vector input, LOW <= 0, HIGH >= 1)",
        )


def plan_sanity_check(
    mech: Mechanism,
    runs: int,
    *,
    seed: int = 0,
    confidence: float = 0.95,
    tie_rule: str = "half-even",
    path: str = "auto",
    trust: TrustReport | None = None,
) -> SanityPlan:
    """Validate the arguments and split the work into units (see :func:`sanity_check`).

    ``trust`` is what :func:`~dpaudit.auditors.core.trust.establish_trust` found
    (:func:`sanity_check` makes that call): when the real sampler contradicts
    the declared transform, the finding is kept in the plan's ``findings`` and
    the generic path, which runs the real sampler, is used instead.  ``None``
    trusts the transform (only for dpaudit's own mechanisms, whose sampler *is*
    their transform).
    """
    check_sanity_mechanism(mech)
    runs = check_int("runs", runs, minimum=1)
    seed = check_seed(seed)
    confidence = check_probability_open("confidence", confidence)
    if tie_rule not in TIE_RULES:
        raise InvalidArgumentError("tie_rule", tie_rule, f"one of {', '.join(TIE_RULES)}")
    if path not in PATHS:
        raise InvalidArgumentError("path", path, f"one of {', '.join(PATHS)}")
    decisions = None
    fusable = mech.is_additive and tuple(mech.output_shape) == tuple(mech.input_shape)
    if path == "fused" and not fusable:
        raise InvalidArgumentError(
            "path", path, f"'auto' or 'generic' ({mech.name} is not an additive-noise mechanism)"
        )
    if trust is not None and trust.contradicts("noise_from_uniform"):
        fusable = False
    if path != "generic" and fusable:
        d0 = attack_decision_set(mech, 0.0)
        d1 = attack_decision_set(mech, 1.0)
        if d0 is not None and d1 is not None:
            decisions = (d0, d1)
        elif path == "fused":
            raise InvalidArgumentError(
                "path", path, f"'auto' or 'generic' ({mech.name}'s transform is too irregular)"
            )
    out_dim = int(np.prod(mech.output_shape, dtype=np.int64))
    chunk_rows = max(4096, _UNIT_COORDS // out_dim)
    key = _spec_key(mech)
    units = []
    for x_bit in (0, 1):
        for chunk, start in enumerate(range(0, runs, chunk_rows)):
            units.append(
                SanityUnit(
                    mechanism=mech,
                    x_bit=x_bit,
                    chunk=chunk,
                    rows=min(chunk_rows, runs - start),
                    seed=seed,
                    spec_key=key,
                    tie_rule=tie_rule,
                    decision=None if decisions is None else decisions[x_bit],
                )
            )
    return SanityPlan(
        mechanism=mech,
        runs=runs,
        seed=seed,
        confidence=confidence,
        tie_rule=tie_rule,
        path="fused" if decisions is not None else "generic",
        decisions=decisions,
        units=tuple(units),
        trust=trust,
    )


def finish_sanity_check(
    plan: SanityPlan, unit_counts: Sequence[np.ndarray], seconds: float
) -> AuditResult:
    """Merge the units' counts (by addition, in unit order) into the result."""
    ones = [0, 0]
    for unit, c in zip(plan.units, unit_counts, strict=True):
        ones[unit.x_bit] += int(c[1])
    n = plan.runs
    counts = ((n - ones[0], ones[0]), (n - ones[1], ones[1]))
    bound, witness = sanity_epsilon_lower_bound(
        counts, n, plan.confidence, dim=plan.dim, seeds=(plan.seed, plan.units[0].spec_key)
    )
    claim = plan.mechanism.claim
    drawn_inputs = 2 if plan.decisions is None else sum(not d.constant for d in plan.decisions)
    coords = drawn_inputs * n * plan.output_dim
    detail = SanityDetail(
        dim=plan.dim,
        output_dim=plan.output_dim,
        runs=n,
        tie_rule=plan.tie_rule,
        counts=counts,
        empirical_loss=empirical_loss(counts),
        path=plan.path,
        coordinate_probability=(
            None if plan.decisions is None else tuple(d.probability for d in plan.decisions)
        ),
        coordinates=coords,
    )
    # The power rule every auditor shares: could these runs have certified a violation of
    # the claimed size on a guess set of mass ½ at the split's error?
    error = split_error(1.0 - plan.confidence, SANITY_STATEMENTS)
    power = power_summary(claim.epsilon, n, error, claim.delta)
    testable = bound > claim.epsilon or math.isfinite(power["mass 0.5"])
    return answer(
        kind=AuditorKind.SANITY,
        mechanism=plan.mechanism.spec(),
        claim=claim,
        judged=(Judged.of_bound(bound, claim.epsilon, testable=testable),),
        evidence=epsilon_evidence(
            bound,
            claim.epsilon,
            blind=untestable_epsilon(claim.epsilon, power["ceiling"], n, "runs"),
        ),
        bound=bound,
        confidence=plan.confidence,
        confidence_statement=joint_confidence(
            plan.confidence,
            SANITY_STATEMENTS,
            "The best of 4 candidates (guess × direction) is reported.",
        ),
        witness=witness,
        seed=plan.seed,
        samples={"runs": n},
        timing={
            "total": seconds,
            "coordinates_per_second": coords / seconds if seconds > 0 else math.inf,
        },
        detail=detail,
        power={} if bound > claim.epsilon else power,
        trust=plan.trust,
        notes=(REPRESENTATION_NOTE,),
    )


#: What the sanity check does not look at, said in every result: its one attack reads each
#: coordinate as ``value >= 0.5``, so a flaw in the floats themselves (Mironov, CCS 2012)
#: is out of its sight.
REPRESENTATION_NOTE = (
    "float representation: not examined: the sanity check reads each output coordinate "
    "only through the paper's attack (value ≥ 0.5, majority vote); which float values can "
    "occur under each input (low mantissa bits, a grid) is tested by the black-box audit, "
    "dpaudit audit"
)


def sanity_check(
    mech: Mechanism,
    runs: int,
    *,
    seed: int = 0,
    confidence: float = 0.95,
    tie_rule: str = "half-even",
    path: str = "auto",
    execution: ExecutionConfig | None = None,
) -> AuditResult:
    """Run the ACL 2022 reconstruction sanity check on ``mech`` with ``runs`` runs per input.

    ``path``: ``auto`` (fused when the mechanism is additive and its declared
    transform agrees with its sampler), ``fused`` or ``generic``.  ``execution``
    chooses the executor (backend, workers), as in the other auditors.  The
    mechanism's randomness is probed and the declared transform tested first, in one call
    (:func:`dpaudit.auditors.core.trust.establish_trust`): a fixed seed raises
    :class:`~dpaudit.errors.MechanismError`; an unseedable source gives
    ``reproducible = False`` and a note; a contradicted transform is a finding,
    and the generic path runs.
    """
    check_sanity_mechanism(mech)
    trust = establish_trust(
        mech,
        seed=seed,
        probe=np.zeros(mech.input_shape),
        # the fused path is the only user of the transform: test it only if it may run
        declarations=() if path == "generic" else ("noise_from_uniform",),
        transform_inputs=[np.zeros(mech.input_shape), np.ones(mech.input_shape)],
    )
    plan = plan_sanity_check(
        mech, runs, seed=seed, confidence=confidence, tie_rule=tie_rule, path=path, trust=trust
    )
    start = time.perf_counter()
    results = run_units(run_sanity_unit, plan.units, execution, desc=f"sanity-check {mech.name}")
    return finish_sanity_check(plan, results, time.perf_counter() - start)


@dataclass(frozen=True)
class SanityAuditor:
    """The ACL 2022 sanity check as an :class:`~dpaudit.auditors.core.protocol.Auditor`.

    ``runs`` per input, ``tie_rule`` and ``path`` as in :func:`sanity_check`; ``config`` of
    :meth:`audit` is ``{"seed": …, "confidence": …}`` (either may be left out).  It supports a
    mechanism of real or binary vectors whose inputs include ``0^n`` and ``1^n``.
    """

    runs: int
    tie_rule: str = "half-even"
    path: str = "auto"

    kind = AuditorKind.SANITY

    def supports(self, mechanism: object, claim: object) -> bool:
        """A mechanism :func:`check_sanity_mechanism` accepts, with a pure or (ε, δ) claim."""
        if not isinstance(mechanism, Mechanism) or not hasattr(claim, "epsilon"):
            return False
        try:
            check_sanity_mechanism(mechanism)
        except InvalidArgumentError:
            return False
        return True

    def audit(
        self,
        mechanism: Mechanism,
        claim: object,
        config: dict[str, Any] | None,
        execution: ExecutionConfig | None,
    ) -> AuditResult:
        """:func:`sanity_check` of ``mechanism`` against its own claim."""
        options = dict(config or {})
        return sanity_check(
            mechanism,
            self.runs,
            seed=options.get("seed", 0),
            confidence=options.get("confidence", 0.95),
            tie_rule=self.tie_rule,
            path=self.path,
            execution=execution,
        )
