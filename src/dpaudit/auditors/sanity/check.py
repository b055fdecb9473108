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

Reproducibility: the runs are drawn by the core's one counting unit
(:mod:`dpaudit.auditors.core.counting`, with :class:`~dpaudit.auditors.sanity.runs.SanityDraw`)
in chunks; each chunk draws from :func:`dpaudit.random.unit_rng` keyed by the mechanism
spec, input and chunk, and counts merge by addition, so results are bit-identical for any
number of workers or backend.  The four statements are fixed before any run is drawn, and
the core certifies them (:mod:`dpaudit.auditors.core.procedure`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.auditors.core.answer import Judged, epsilon_evidence, untestable_epsilon
from dpaudit.auditors.core.certify import Certificate, FinalCounts, best, certify
from dpaudit.auditors.core.counting import EventUnit, FinalPlan, Stream, UnitGenerators, final_units
from dpaudit.auditors.core.power import power_summary
from dpaudit.auditors.core.procedure import Certified, Proposals, Reading, run_audit
from dpaudit.auditors.core.proposal import Proposal
from dpaudit.auditors.core.trust import TrustReport, establish_trust
from dpaudit.auditors.sanity.decision_set import DecisionSet, attack_decision_set
from dpaudit.auditors.sanity.runs import GuessIs, SanityDraw
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.base import Mechanism
from dpaudit.random import stable_hash
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
_SEED_TAG = stable_hash("dpaudit.sanity-check")


#: The four statements, in certification order: (guess g, numerator input a, denominator b).
STATEMENTS = tuple((g, a, b) for g in (0, 1) for a, b in ((0, 1), (1, 0)))


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
    certificates = certify(
        [FinalCounts(int(f[a, g]), runs, int(f[b, g]), runs) for g, a, b in STATEMENTS],
        confidence,
    )
    return _best_statement(certificates, confidence, dim, seeds)


def _best_statement(
    certificates: Sequence[Certificate],
    confidence: float,
    dim: int,
    seeds: tuple[int, int] | None,
) -> tuple[float, Witness | None]:
    """The largest of the four certified bounds (floored at 0) and its witness."""
    top = best(certificates)
    cert = certificates[top]
    if not cert.lower_bound > 0.0:
        return 0.0, None
    g, a, b = STATEMENTS[top]
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
    """Everything needed to run one sanity check: how its runs are drawn, what it records.

    ``final``: the core's plan of the runs (:class:`~dpaudit.auditors.core.counting.FinalPlan`:
    one stream per constant input, keyed by the mechanism's spec); :meth:`proposals` the
    four statements on them.
    """

    mechanism: Mechanism
    runs: int
    seed: int
    confidence: float
    tie_rule: str
    path: str
    decisions: tuple[DecisionSet, DecisionSet] | None
    final: FinalPlan
    spec_key: int
    #: What the audit's trust call found (None: dpaudit's own mechanism, trusted), passed
    #: into the result's construction.
    trust: TrustReport | None = None

    def proposals(self) -> Proposals:
        """The four statements (guess × direction) on the runs of ``0^n`` and ``1^n``."""
        guess = (GuessIs(0), GuessIs(1))
        return Proposals(
            statements=tuple(
                Proposal(0, a == 0, guess[g], f"guess {g}, {a}^n over {b}^n")
                for g, a, b in STATEMENTS
            ),
            plan=self.final,
            pair_streams=((0, 1),),
            chosen="The best of 4 candidates (guess × direction) is reported.",
            confidence=self.confidence,
            mechanism=self.mechanism.spec(),
            seed=self.seed,
            samples={"runs": self.runs},
            trust=self.trust,
            state=self,
        )

    @property
    def units(self) -> tuple[EventUnit, ...]:
        """The work units that draw the runs (two streams, split into chunks)."""
        return final_units(self.final, self.proposals().oriented()).units

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
    key = _spec_key(mech)
    # Runs per block: the fused path draws two 32-bit uniforms per 64-bit word, so an even count.
    fused = decisions is not None
    block = max(2, (_BLOCK_COORDS // out_dim) & ~1) if fused else max(1, _BLOCK_COORDS // out_dim)
    final = FinalPlan(
        draw=SanityDraw(mech, tie_rule, decisions),
        streams=(Stream(0, (_SEED_TAG, key, 0)), Stream(1, (_SEED_TAG, key, 1))),
        samples=runs,
        generators=UnitGenerators(seed),
        unit_samples=max(4096, _UNIT_COORDS // out_dim),
        block_samples=block,
        desc=f"sanity-check {mech.name}",
    )
    return SanityPlan(
        mechanism=mech,
        runs=runs,
        seed=seed,
        confidence=confidence,
        tie_rule=tie_rule,
        path="fused" if decisions is not None else "generic",
        decisions=decisions,
        final=final,
        spec_key=key,
        trust=trust,
    )


def _read(proposals: Proposals, certified: Certified) -> Reading:
    """The 2×2 table, the paper's loss, the best certified bound and the power of the runs."""
    plan: SanityPlan = proposals.state
    zero, one = certified.counts[0], certified.counts[2]  # guess 0 and 1, 0^n over 1^n
    counts = ((zero.hits_x, one.hits_x), (zero.hits_x_prime, one.hits_x_prime))
    n = plan.runs
    bound, witness = _best_statement(
        certified.certificates, plan.confidence, plan.dim, (plan.seed, plan.spec_key)
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
    power = power_summary(claim.epsilon, n, certified.error, claim.delta)
    testable = bound > claim.epsilon or math.isfinite(power["mass 0.5"])
    return Reading(
        judged=(Judged.of_bound(bound, claim.epsilon, testable=testable),),
        evidence=epsilon_evidence(
            bound,
            claim.epsilon,
            blind=untestable_epsilon(claim.epsilon, power["ceiling"], n, "runs"),
        ),
        bound=bound,
        witness=witness,
        detail=detail,
        power={} if bound > claim.epsilon else power,
        notes=(REPRESENTATION_NOTE,),
        final_work={"coordinates": coords},
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
    auditor = SanityAuditor(runs, tie_rule, path)
    return run_audit(auditor, mech, mech.claim, {"seed": seed, "confidence": confidence}, execution)


def _establish(mech: Mechanism, seed: int, path: str) -> TrustReport:
    """The sanity check's one trust call (see :func:`sanity_check`)."""
    check_sanity_mechanism(mech)
    return establish_trust(
        mech,
        seed=seed,
        probe=np.zeros(mech.input_shape),
        # the fused path is the only user of the transform: test it only if it may run
        declarations=() if path == "generic" else ("noise_from_uniform",),
        transform_inputs=[np.zeros(mech.input_shape), np.ones(mech.input_shape)],
    )


@dataclass(frozen=True)
class SanityAuditor:
    """The ACL 2022 sanity check as an :class:`~dpaudit.auditors.core.protocol.Auditor`.

    ``runs`` per input, ``tie_rule`` and ``path`` as in :func:`sanity_check`; ``config`` of
    :meth:`audit` is ``{"seed": …, "confidence": …}`` (either may be left out).  It supports a
    mechanism of real or binary vectors whose inputs include ``0^n`` and ``1^n``.
    ``trusted``: skip the trust call and use the declared transform as it is — only for
    dpaudit's own mechanisms, whose sampler *is* their transform (the ACL 2022 grid).
    """

    runs: int
    tie_rule: str = "half-even"
    path: str = "auto"
    trusted: bool = False

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
        """Run the core's procedure (:func:`~dpaudit.auditors.core.procedure.run_audit`)."""
        return run_audit(self, mechanism, claim, config, execution)

    def propose(
        self,
        mechanism: Mechanism,
        claim: object,
        config: dict[str, Any] | None,
        execution: ExecutionConfig | None,
    ) -> Proposals:
        """The trust call, the plan of the runs and the four fixed statements on them."""
        options = dict(config or {})
        seed = options.get("seed", 0)
        trust = None if self.trusted else _establish(mechanism, seed, self.path)
        plan = plan_sanity_check(
            mechanism,
            self.runs,
            seed=seed,
            confidence=options.get("confidence", 0.95),
            tie_rule=self.tie_rule,
            path=self.path,
            trust=trust,
        )
        return plan.proposals()

    def read(self, proposals: Proposals, certified: Certified) -> Reading:
        """The table, the paper's loss and the best certified bound (:func:`_read`)."""
        return _read(proposals, certified)
