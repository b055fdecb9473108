"""Black-box ε lower bound: DP-Sniper's method, and a stronger search without its ceiling.

Given a mechanism ``M`` and its claim, find an input pair ``(x, x')`` and a set
``S`` with ``Pr[M(x) ∈ S] > e^ε·Pr[M(x') ∈ S] + δ`` and state, with confidence
``1 − α``, the lower bound

    ε_lcb = ln(p1_lower − δ) − ln(p2_upper)

from one-sided Clopper–Pearson bounds on ``p1 = Pr[M(x) ∈ S]`` and
``p2 = Pr[M(x') ∈ S]`` (:mod:`dpaudit.auditors.core.statistics`).  It is valid because
(ε, δ)-DP implies ``p1 ≤ e^ε p2 + δ`` for every ``S`` (Dwork & Roth 2014,
Def. 2.4); for δ = 0 it is DP-Sniper's bound (Bichsel et al., S&P 2021, eq. 9).

Two modes:

``dpsniper`` — DP-Sniper as published (Bichsel et al. 2021, Alg. 1–2, §6):
  StatDP input patterns (ordered, swapped too); a classifier (logistic
  regression, or an MLP with hidden layers 10 and 5) trained on ``M(x)`` (label
  0) against ``M(x')`` (label 1); its probability ``P(x | y)`` rounded to 3
  decimals; threshold at target mass ``c`` on samples of ``M(x')`` with
  randomised ties so ``Pr[M(x') ∈ S] = c``; ``p1, p2`` estimated on fresh
  samples; best pair re-estimated on ``final_samples``.  Because
  ``p2 ≈ c``, its estimate cannot exceed about ``ln(1/c)`` (4.6 at c = 0.01).

``dpaudit`` — named stages on disjoint samples (:mod:`~dpaudit.auditors.blackbox.stages`;
every size and switch below is a field of
:class:`~dpaudit.auditors.blackbox.config.SearchConfig`):

  1. *training*: a small sample per input trains the classifiers and fixes a
     grid of candidate thresholds (every distinct score, or quantiles at tail
     masses from ``1/n`` to ``1/2``) — stage ``train``; the best ``screen_pairs``
     (default 32) (pair, score) combinations go on (stage ``screen``) — the
     training sample is too small to judge them (its margin covers every
     candidate of every combination), and each input is sampled once for all
     the scores that use it, so a wide screen costs scoring, not sampling; but
     those whose best set projects no bound at all on training only fill it up
     to ``screen_min`` (8), since each one widens the ranking's multiplicity
     margin — except the best combination of each of the ``screen_spare`` (2)
     best pairs that project a bound under their own candidates' margin, since
     the full margin hides small sets;
  2. *ranking* (``rank``): every candidate — pair × attack family × threshold ×
     tail (``>``/``<``) × tie handling (``>``/``≥``) × orientation (``x`` over
     ``x'`` or the reverse) — is counted on ``samples`` fresh outputs
     per input and ranked by the bound it can be counted on to reach on the
     final sample size (:func:`~dpaudit.auditors.blackbox.selection.projected_bound`): its
     counts are first moved by Clopper–Pearson deviations at an error divided by
     the number of candidates compared (together, in quadrature, one margin on the
     log-ratio), so a small tail set wins only when its
     advantage exceeds what the luckiest of thousands of correlated counts
     would show, and every set pays for the width of its final interval
     (large-mass sets win at equal ratio; small-mass sets, which DP-Sniper's
     fixed ``c`` cannot reach, win when their ratio is really larger); the
     ``rank_top`` leaders go on, and half as many more, the best under the
     margin for the leaders alone, so that an effect the full margin hides at
     small sizes keeps a chance;
  3. *playoff* (``playoff``): the best candidate of each of the
     ``playoff_groups`` best (pair, orientation)
     groups has its score counted on ``samples`` more fresh outputs per input,
     and the candidates of those scores are ranked again on ranking +
     playoff counts: two pairs whose ratios differ by less than the ranking
     noise (ReportNoisyMax1's 0.0946 and 0.0927) are told apart before the final
     stage spends its samples on one of them; when the leading group's best set
     under the ranking's own margin is another set than its leader, it goes to the
     final stage too (``playoff_hedge``: half of the pooled counts chose the sets;
     with a single group there is no playoff draw, and the hedge is chosen on the
     ranking counts alone);
  4. *final*: only the chosen candidate(s) are re-estimated on
     ``final_samples`` fresh outputs per input — with the winner's *ladder*
     (:meth:`~dpaudit.auditors.blackbox.selection.CandidateTable.ladder`): up to
     ``ladder_rungs`` smaller sets of its own kind, at masses ``m/√10, m/10, …``, kept
     when they look better at face value on the ranking counts than the winner does
     (``ladder_bar``: than its face value, or, where the final sample is at least ten
     times the selection sample, than its projection under the ranking's margin).
     The margin of stages 2–3 must cover the noise of the selection sample, which is
     large for small sets; the final sample (DP-Sniper's: 19× the selection
     sample) resolves them, and the rungs share the winner's final samples (one job per
     input, one count per set), so they cost only the wider Bonferroni correction below
     (stage ``ladder`` chooses them; :func:`dpaudit.auditors.core.certify.certify`
     certifies them).

  The attack families of ``auto``: logistic regression, an MLP and ``split``
  (logistic regression on per-coordinate median indicators, the additive
  score that sums many small bounded losses; for outputs of two or more
  numeric coordinates), and ``histogram`` (the empirical log-ratio of whole
  output rows, :mod:`~dpaudit.auditors.blackbox.histogram`; trained only where the
  training outputs turn out discrete).  Symbols inside numeric outputs (SVT's
  ``-1`` "aborted", ``-1000`` "below") become flag features of the classifiers
  (:mod:`~dpaudit.auditors.blackbox.atoms`).  When the
  mechanism declares a log-density, the exact likelihood-ratio score
  ``ln p(y|x) − ln p(y|x')`` (Neyman–Pearson: its threshold sets are the most
  powerful tests) beside logistic regression — never alone, since a declared
  density is a claim about the code rather than the code.

**What the confidence covers.**  The final samples are independent of
everything used to choose the witness (training, ranking and playoff
samples), so choosing among any number of pairs, families, thresholds,
directions (and, in ``dpsniper`` mode, pairs) costs no confidence.  If ``K``
sets are re-estimated on the final samples (the config's ``best_candidates`` best,
runners-up the playoff could not call, its hedge and the winner's ladder; the result's
``detail.certified_proposals`` gives ``K``), the result
is the best of ``K`` bounds, each computed with both one-sided Clopper–Pearson
bounds at error ``α/(2K)`` (Bonferroni over the ``K`` sets and the two
estimates; no independence between the sets is needed, so they may share
samples), so the reported bound holds with probability at least ``1 − α``.

All sampling runs as work units through :func:`dpaudit.engine.executor.run_units`
(see :mod:`dpaudit.auditors.blackbox.counting`): memory is flat in the sample size and the
result is bit-identical for any number of workers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpaudit.auditors.blackbox.config import (
    CLASSIFIERS,
    DEFAULT_TRAIN_SAMPLES,
    DPSNIPER_CONFIDENCE,
    DPSNIPER_FINAL_SAMPLES,
    DPSNIPER_SAMPLES,
    DPSNIPER_TARGET_MASS,
    MODES,
    AuditConfig,
    SearchConfig,
)
from dpaudit.auditors.blackbox.dpsniper import propose_dpsniper
from dpaudit.auditors.blackbox.pairs import InputPair, check_pair, generate_pairs
from dpaudit.auditors.blackbox.sampler import Sampler, Timer
from dpaudit.auditors.blackbox.selection import projected_bound
from dpaudit.auditors.blackbox.shortlist import Budget
from dpaudit.auditors.blackbox.stages import search
from dpaudit.auditors.core.certify import split_error
from dpaudit.auditors.core.procedure import Certified, Proposals, Reading, run_audit
from dpaudit.auditors.core.trust import TrustReport, establish_trust
from dpaudit.claims import Definition, PrivacyClaim
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.base import Mechanism
from dpaudit.results.audit import AuditorKind, AuditResult

__all__ = [
    "CLASSIFIERS",
    "DEFAULT_TRAIN_SAMPLES",
    "DPSNIPER_CONFIDENCE",
    "DPSNIPER_FINAL_SAMPLES",
    "DPSNIPER_SAMPLES",
    "DPSNIPER_TARGET_MASS",
    "MODES",
    "AuditConfig",
    "BlackBoxAuditor",
    "SearchConfig",
    "audit",
    "projected_bound",
    "score_families",
    "search_budget",
]


# =========================================================================== API
def audit(
    mechanism: Mechanism,
    config: AuditConfig | None = None,
    execution: ExecutionConfig | None = None,
    *,
    timer: Timer | None = None,
) -> AuditResult:
    """Run the black-box audit of ``mechanism`` against its own claim.

    Returns an :class:`~dpaudit.results.audit.AuditResult` whose
    ``epsilon_lower_bound`` holds with probability ≥ ``config.confidence``
    (see the module docstring for exactly what that covers).  ``timer``: pass one
    to read each stage's CPU seconds and outputs drawn afterwards (the result's
    ``timing`` holds the wall seconds).
    """
    return run_audit(BlackBoxAuditor(timer), mechanism, mechanism.claim, config, execution)


def propose(
    mechanism: Mechanism,
    config: AuditConfig | None = None,
    execution: ExecutionConfig | None = None,
    timer: Timer | None = None,
) -> Proposals:
    """The search of either mode, up to the sets it proposes for certification."""
    config = config or AuditConfig()
    execution = execution or ExecutionConfig()
    timer = timer or Timer()
    claim = mechanism.claim
    if claim.definition is Definition.METRIC:
        raise InvalidArgumentError(
            "mechanism", mechanism.name, "a pure or (ε, δ) claim (metric claims are not audited)"
        )
    for p in config.pairs:
        check_pair(mechanism, p)
    pairs = generate_pairs(
        mechanism, mode=config.mode, user_pairs=config.pairs, use_patterns=config.use_patterns
    )
    families = score_families(mechanism, config)
    # The one trust call: a fixed seed raises; an unseedable source and declarations
    # the sampler contradicts are reported in the result.
    trust = establish_trust(mechanism, seed=config.seed)
    if config.mode == "dpsniper":
        return propose_dpsniper(mechanism, config, execution, pairs, families, timer, trust)
    return search(search_budget(mechanism, config, execution, pairs, families, trust), timer)


def score_families(mechanism: Mechanism, config: AuditConfig) -> tuple[str, ...]:
    """The score families the audit of ``mechanism`` trains under ``config.classifier``.

    Raises :class:`~dpaudit.errors.InvalidArgumentError` (naming ``classifier``) for a
    family the mechanism or the mode cannot take.
    """
    choice = config.classifier
    if choice == "likelihood-ratio" and not mechanism.has_log_prob:
        raise InvalidArgumentError(
            "classifier",
            choice,
            f"logistic, mlp, split or auto ({mechanism.name} exposes no log-density/pmf)",
        )
    if config.mode == "dpsniper":
        if choice in ("likelihood-ratio", "split", "histogram"):
            raise InvalidArgumentError("classifier", choice, "logistic or mlp in dpsniper mode")
        return ("logistic",) if choice == "auto" else (choice,)
    if choice == "auto":
        # A declared density is a hint about the code, not the code: a black-box family
        # always runs beside it, ranked with it under the same multiplicity margin.
        if mechanism.has_log_prob:
            return ("likelihood-ratio", "logistic")
        # ``split`` (additive indicators) catches many small per-coordinate losses that a
        # linear score drowns in noise.  On one coordinate its sets are threshold sets of
        # the output itself (logistic regression has them all), on one-hot categorical
        # outputs it adds nothing: there it would only add candidates.
        # ``histogram`` (the empirical ratio of whole output rows) is trained only where
        # the training outputs turn out discrete (few distinct rows, each seen often).
        if mechanism.output_kind == "categorical" or math.prod(mechanism.output_shape) < 2:
            return ("logistic", "mlp", "histogram")
        return ("logistic", "mlp", "split", "histogram")
    return (choice,)


# ============================================================= dpaudit mode
def search_budget(
    mech: Mechanism,
    cfg: AuditConfig,
    execution: ExecutionConfig,
    pairs: list[InputPair],
    families: tuple[str, ...],
    trust: TrustReport | None = None,
) -> Budget:
    """What the dpaudit-mode search's stages may spend on ``mech`` under ``cfg`` (``trust``:
    what the audit's trust call found, for the result)."""
    return Budget(
        mechanism=mech,
        config=cfg,
        pairs=pairs,
        families=families,
        sampler=Sampler(mech, cfg.seed, execution, cfg.unit_timeout),
        # The selection projects every set as one of ``best_candidates`` certified together.
        alpha_side=split_error(1.0 - cfg.confidence, cfg.best_candidates),
        delta=mech.claim.delta,
        trust=trust,
    )


@dataclass(frozen=True)
class BlackBoxAuditor:
    """The black-box search as an :class:`~dpaudit.auditors.core.protocol.Auditor`.

    It supports any vector or typed-domain mechanism with a pure or (ε, δ) claim of its own
    (:class:`~dpaudit.claims.PrivacyClaim`); ``config`` is an :class:`AuditConfig`.
    ``timer``: one to read each stage's CPU seconds and outputs drawn afterwards.
    """

    timer: Timer | None = None

    kind = AuditorKind.BLACKBOX

    def supports(self, mechanism: object, claim: object) -> bool:
        """A mechanism of vectors (not words, not text) and a pure or (ε, δ) claim."""
        return (
            isinstance(mechanism, Mechanism)
            and mechanism.output_kind not in ("word", "text")
            and isinstance(claim, PrivacyClaim)
            and claim.definition is not Definition.METRIC
        )

    def audit(
        self,
        mechanism: Mechanism,
        claim: PrivacyClaim,
        config: AuditConfig | None,
        execution: ExecutionConfig | None,
    ) -> AuditResult:
        """Run the core's procedure (:func:`~dpaudit.auditors.core.procedure.run_audit`)."""
        return run_audit(self, mechanism, claim, config, execution)

    def propose(
        self,
        mechanism: Mechanism,
        claim: PrivacyClaim,
        config: AuditConfig | None,
        execution: ExecutionConfig | None,
    ) -> Proposals:
        """The search's sets (``mechanism``'s own claim must be ``claim``)."""
        if mechanism.claim != claim:
            raise InvalidArgumentError(
                "claim", claim.describe(), f"the mechanism's own claim ({mechanism.claim_text})"
            )
        return propose(mechanism, config, execution, self.timer)

    def read(self, proposals: Proposals, certified: Certified) -> Reading:
        """The best certified set as the witness, with the search's record (its state)."""
        return proposals.state.read(proposals, certified)
