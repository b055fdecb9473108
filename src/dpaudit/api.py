"""The one public entry of the auditors: ``dpaudit.audit(mechanism, claim, ...)``.

Each auditor implements :class:`~dpaudit.auditors.core.protocol.Auditor` (``kind``,
``supports``, ``audit``); for all but the one-run training auditor ``audit`` is the
core's procedure (``propose``, then the core counts, certifies
and answers: :mod:`dpaudit.auditors.core.procedure`).  This module knows them all and
picks, for a mechanism and its claim, the auditors that support the pair
(``method="auto"``) or the one named:

* a word mechanism (output kind ``"word"``, a metric-DP claim) — the metric auditor,
  pair by pair against ``ε·d(w, w')``;
* a curve claim (:mod:`dpaudit.claims` ``PureDP`` … ``ZeroConcentratedDP``: a privacy
  profile, μ-GDP, a Rényi curve, ρ-zCDP) — the profile auditor, on one pair;
* a pure ε-DP claim — the black-box search;
* an (ε, δ) claim with δ > 0 — the black-box search *and* the profile certifier, under one
  error budget (:func:`~dpaudit.auditors.core.protocol.error_shares`: each at α/2).  The
  search ranks sets by the ε they certify at the claimed δ, which favours sets of large
  mass; the profile certifier ranks them by the δ they certify at the claimed ε, which is
  the question the claim asks, and finds the small sets that refute a δ (a Gaussian
  calibrated with the classic formula outside its range).  It certifies on the pair the
  search's witness names (or the domain's opposite corners) with a score that needs no
  training: the declared log-density ratio, else the projection on ``x − x'``; its samples
  are drawn from a root seed of their own, so they are fresh for both.

* an LM rewriter (a declaration with a text claim, a ``decoding`` and a ``model``: the
  text mechanisms of :mod:`dpaudit.mechanisms`) — the white-box rewriter auditor, on the
  neighbours of :data:`~dpaudit.text.neighbours.DEFAULT_DOCUMENT`; one that declares no
  per-token decoding (DP-BART: noise on encoder states, a per-document claim) — the
  black-box text auditor on the same pairs;
* ``method="sanity"`` — the ACL 2022 sanity check (a fixed attack on constant inputs, never
  chosen by ``auto``), sized by a :class:`~dpaudit.auditors.sanity.config.SanityConfig`.

``method`` may also be an auditor object (:class:`~dpaudit.auditors.core.protocol.Auditor`)
that carries its own inputs — ``RewriterAuditor(pairs, sampler)``, ``TextAuditor(pairs,
max_units, ...)``, ``SanityAuditor(runs)``, ``ProfileAuditor(x, x', score)`` — which is asked
``supports(mechanism, claim)`` first and then runs.

Every auditor returns the one typed result, :class:`~dpaudit.results.AuditResult`, whose
``detail`` is its auditor's own frozen dataclass (re-exported here with it).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from dpaudit.adapters.reclaim import as_mechanism
from dpaudit.auditors.blackbox.auditor import BlackBoxAuditor
from dpaudit.auditors.blackbox.config import AuditConfig
from dpaudit.auditors.blackbox.representation import train_representation
from dpaudit.auditors.blackbox.result import BlackBoxDetail
from dpaudit.auditors.blackbox.scores import LikelihoodRatioScore, TrainingData
from dpaudit.auditors.core.answer import joint_answer
from dpaudit.auditors.core.guard import checked_sample, domain_corners
from dpaudit.auditors.core.protocol import Auditor, error_shares
from dpaudit.auditors.core.streams import StageKey
from dpaudit.auditors.metric.auditor import MetricAuditConfig, MetricAuditor
from dpaudit.auditors.metric.result import MetricDetail, PairResult
from dpaudit.auditors.profile import ProfileAuditConfig, ProfileAuditor
from dpaudit.auditors.profile.result import ProfileDetail
from dpaudit.auditors.profile.scores import ProjectionScore
from dpaudit.auditors.rewriter import (
    RewriterAuditConfig,
    RewriterAuditor,
    TextAuditConfig,
    TextAuditor,
)
from dpaudit.auditors.rewriter.result import RewriterDetail
from dpaudit.auditors.sanity.check import SanityAuditor, SanityDetail, check_sanity_mechanism
from dpaudit.auditors.sanity.config import SanityConfig
from dpaudit.auditors.training.claim_point import claimed_point
from dpaudit.auditors.training.multi_run import MultiRunConfig, plan_multi_run
from dpaudit.auditors.training.one_run import OneRunConfig, audit_one_run
from dpaudit.auditors.training.result import TrainingDetail
from dpaudit.claims import (
    ApproxDP,
    Definition,
    InputDomain,
    MetricClaim,
    PrivacyClaim,
    TextClaim,
    Unit,
)
from dpaudit.engine.config import ExecutionConfig
from dpaudit.errors import InvalidArgumentError, InvalidTypeError
from dpaudit.mechanisms.base import Mechanism, MechanismContract
from dpaudit.mechanisms.training.contract import TrainingMechanism
from dpaudit.mechanisms.word.base import WordMechanism
from dpaudit.random import unit_rng
from dpaudit.results import AuditorKind, AuditResult, CertifiedStatement
from dpaudit.text.neighbours import DEFAULT_DOCUMENT, DEFAULT_PAIR_KINDS, neighbour_pairs

# Importing every auditor's detail type here registers it, so that
# ``AuditResult.from_dict`` reads any auditor's JSON once ``dpaudit.api`` is loaded.
__all__ = [
    "METHODS",
    "AuditResult",
    "AuditorKind",
    "BlackBoxDetail",
    "CertifiedStatement",
    "MetricDetail",
    "PairResult",
    "ProfileDetail",
    "RewriterDetail",
    "SanityConfig",
    "SanityDetail",
    "TrainingDetail",
    "audit",
    "audit_training",
    "profile_score",
]

#: The profile certifier's final sample, as a multiple of the search's, for an (ε, δ) claim.
PROFILE_FINAL_FACTOR = 3
#: The ``method`` names :func:`audit` takes: ``auto`` chooses by mechanism and claim.
METHODS = ("auto", "blackbox", "profile", "metric", "sanity", "rewriter", "one-run", "multi-run")
#: The configs :func:`audit` takes, one per auditor (``dict`` for an auditor object's own).
Config = (
    AuditConfig
    | MetricAuditConfig
    | ProfileAuditConfig
    | SanityConfig
    | RewriterAuditConfig
    | TextAuditConfig
    | OneRunConfig
    | MultiRunConfig
    | dict[str, Any]
)


def audit(
    mechanism: Mechanism | WordMechanism | Callable[..., Any],
    claim: Any = None,
    *,
    method: str | Auditor = "auto",
    config: Config | None = None,
    execution: ExecutionConfig | None = None,
) -> AuditResult:
    """Audit ``mechanism`` against ``claim`` and return the typed result with its witness.

    ``mechanism``: a registered or user :class:`~dpaudit.mechanisms.base.Mechanism`,
    a word mechanism, or a function ``f(x, n, rng)`` returning ``n`` outputs
    (then ``claim`` must be a :class:`~dpaudit.claims.PrivacyClaim`, which
    carries the input domain).  ``claim``: None (the mechanism's own claim), a
    number (its claim with that ε), a :class:`~dpaudit.claims.PrivacyClaim`, or a
    curve claim of :mod:`dpaudit.claims` (audited by the profile auditor).
    A rewriter declaration (a text mechanism) is audited against its own text claim, a
    training algorithm (:class:`~dpaudit.mechanisms.training.TrainingMechanism`) with
    canaries (:func:`audit_training`).
    ``method``: one of :data:`METHODS`, or an auditor object carrying its own inputs (the
    pairs of a ``RewriterAuditor``).  ``config``: the chosen auditor's config
    (:class:`~dpaudit.auditors.blackbox.config.AuditConfig`,
    :class:`~dpaudit.auditors.metric.auditor.MetricAuditConfig`,
    :class:`~dpaudit.auditors.profile.ProfileAuditConfig`,
    :class:`~dpaudit.auditors.sanity.config.SanityConfig`,
    :class:`~dpaudit.auditors.rewriter.RewriterAuditConfig` or
    :class:`~dpaudit.auditors.rewriter.TextAuditConfig`; None: defaults).
    ``execution``: workers and backend.

    The result's lower bound holds with probability ≥ the configured confidence (for an
    (ε, δ) claim, jointly over both certifiers); a result without a violation means
    "no violation found" (or *inconclusive*), never that the mechanism is private.
    """
    if not isinstance(method, str):
        return _audit_with(method, mechanism, claim, config, execution)
    if method not in METHODS:
        raise InvalidArgumentError(
            "method", method, f"one of {', '.join(METHODS)}, or an auditor object"
        )
    if isinstance(mechanism, TrainingMechanism):
        return audit_training(mechanism, claim, method=method, config=config, execution=execution)
    if method in ("one-run", "multi-run"):
        raise InvalidArgumentError("method", method, f"{method} only for a TrainingMechanism")
    if _is_rewriter(mechanism):
        return _audit_rewriter(mechanism, claim, method, config, execution)
    if method == "rewriter":
        raise InvalidArgumentError(
            "method", method, "rewriter only for an LM rewriter (with claim, decoding and model)"
        )
    if method == "sanity":
        return _audit_sanity(as_mechanism(mechanism, claim), config, execution)
    if isinstance(mechanism, MechanismContract) and mechanism.output_kind == "word":
        return _audit_words(cast(WordMechanism, mechanism), claim, method, config, execution)
    if _is_curve_claim(claim):
        if method not in ("auto", "profile"):
            raise InvalidArgumentError(
                "method", method, f"auto or profile for the curve claim {claim.describe()}"
            )
        mech = as_mechanism(mechanism)
        return _audit_curve(mech, claim, config, execution)
    mech = as_mechanism(mechanism, claim)
    if method == "profile":
        curve = _point_curve(mech.claim)
        return _audit_curve(mech, curve, config, execution)
    if method == "metric":
        raise InvalidArgumentError("method", method, "metric only for a word mechanism")
    if config is not None and not isinstance(config, AuditConfig):
        raise InvalidTypeError("config", config, "an AuditConfig for a vector mechanism")
    return _audit_point(mech, config or AuditConfig(), execution, joint=method == "auto")


def _audit_with(
    auditor: Any, mechanism: Any, claim: Any, config: Any, execution: Any
) -> AuditResult:
    """An auditor object given as ``method``: asked whether it applies, then run."""
    if not isinstance(auditor, Auditor):
        raise InvalidTypeError(
            "method", auditor, f"one of {', '.join(METHODS)} or an auditor object"
        )
    if claim is None:
        claim = getattr(mechanism, "claim", None)
    if not auditor.supports(mechanism, claim):
        described = claim.describe() if callable(getattr(claim, "describe", None)) else claim
        raise InvalidArgumentError(
            "method",
            type(auditor).__name__,
            f"an auditor that supports this mechanism and claim ({described})",
        )
    return auditor.audit(mechanism, claim, config, execution)


def _audit_sanity(mech: Mechanism, config: Any, execution: Any) -> AuditResult:
    """The ACL 2022 sanity check of ``mech`` against its own claim."""
    if config is not None and not isinstance(config, SanityConfig):
        raise InvalidTypeError("config", config, "a SanityConfig for method sanity")
    options = config or SanityConfig()
    auditor = SanityAuditor(options.runs, options.tie_rule, options.path)
    if not auditor.supports(mech, mech.claim):
        check_sanity_mechanism(mech)  # raises, saying what the check needs
    seeded = {"seed": options.seed, "confidence": options.confidence}
    return auditor.audit(mech, mech.claim, seeded, execution)


def _is_rewriter(mechanism: Any) -> bool:
    """An LM rewriter's declaration: a text claim, a model and a text sampler."""
    return isinstance(getattr(mechanism, "claim", None), TextClaim) and all(
        hasattr(mechanism, a) for a in ("model", "sample")
    )


def _audit_rewriter(
    rewriter: Any, claim: Any, method: str, config: Any, execution: Any
) -> AuditResult:
    """A rewriter on the neighbours of the default document: white box where it declares
    its decoding, black box otherwise (DP-BART: a per-document claim)."""
    own = rewriter.claim
    if claim is not None and claim != own:
        raise InvalidArgumentError(
            "claim",
            claim.describe() if callable(getattr(claim, "describe", None)) else claim,
            f"None or the rewriter's own claim ({own.describe()})",
        )
    pairs = tuple(neighbour_pairs(DEFAULT_DOCUMENT, DEFAULT_PAIR_KINDS))
    if hasattr(rewriter, "decoding"):
        if method not in ("auto", "rewriter"):
            raise InvalidArgumentError("method", method, "auto or rewriter for an LM rewriter")
        if config is not None and not isinstance(config, RewriterAuditConfig):
            raise InvalidTypeError("config", config, "a RewriterAuditConfig for a rewriter")
        return RewriterAuditor(pairs).audit(rewriter, own, config, execution)
    if method != "auto" or own.unit is not Unit.DOCUMENT:
        raise InvalidArgumentError(
            "method",
            method,
            f"auto (black box) for {rewriter.name}, which declares no per-token decoding to "
            "score white box, with a per-document claim; otherwise a TextAuditor object",
        )
    if config is not None and not isinstance(config, TextAuditConfig):
        raise InvalidTypeError("config", config, "a TextAuditConfig for a black-box rewriter")
    auditor = TextAuditor(pairs, max_units=1, name=rewriter.describe())
    return auditor.audit(rewriter.sample, own, config, execution)


def _audit_words(
    mechanism: WordMechanism, claim: Any, method: str, config: Any, execution: Any
) -> AuditResult:
    """The metric auditor on a word mechanism, against its own claim only."""
    auditor = MetricAuditor()
    own = mechanism.claim
    if claim is not None and not auditor.supports(mechanism, claim):
        # Silently auditing the mechanism's own claim instead would answer another question.
        raise InvalidArgumentError(
            "claim",
            claim.describe() if isinstance(claim, MetricClaim) else claim,
            f"None or the mechanism's own claim ({own.describe()}) for a word "
            "mechanism: it is audited against ε·d with its own ε and metric",
        )
    if method not in ("auto", "metric"):
        raise InvalidArgumentError("method", method, "auto or metric for a word mechanism")
    if config is not None and not isinstance(config, MetricAuditConfig):
        raise InvalidTypeError("config", config, "a MetricAuditConfig for a word mechanism")
    return auditor.audit(mechanism, own, config, execution)


def _is_curve_claim(claim: Any) -> bool:
    return not isinstance(claim, (PrivacyClaim, MetricClaim, int, float, type(None))) and all(
        callable(getattr(claim, a, None)) for a in ("profile", "describe", "to_dict")
    )


def _point_curve(claim: PrivacyClaim) -> Any:
    """The curve a pure or (ε, δ) claim states, for the profile auditor."""
    return ApproxDP(claim.epsilon, claim.delta)


def profile_score(
    mechanism: Mechanism, x: Any, x_prime: Any, seed: int = 0, bits: bool = True
) -> Any:
    """The score the profile auditor thresholds on ``(x, x')``, or None where none applies.

    Where the outputs' float bits differ between the two inputs beyond their values, the
    black box's representation score, trained on :data:`BITS_SAMPLES` outputs per input
    of a stream of its own (``PROFILE_BITS`` under ``seed``; the auditor's selection and
    final samples are others).  Else the declared log-density ratio (a hint for power: the
    sets are certified on real samples, so a wrong density costs power, never validity),
    else the projection on ``x − x'`` for outputs of the input's size; None for other
    outputs.  ``bits=False`` reads the outputs as real numbers only.
    """
    a, b = tuple(float(v) for v in x), tuple(float(v) for v in x_prime)
    if bits and mechanism.output_kind == "real":
        drawn = [
            checked_sample(mechanism, np.asarray(v), BITS_SAMPLES, unit_rng(seed, (key, i)))
            for i, (v, key) in enumerate(((a, StageKey.PROFILE_BITS), (b, StageKey.PROFILE_BITS)))
        ]
        ones = np.ones(BITS_SAMPLES)
        bits, _ = train_representation(TrainingData(drawn[0], ones), TrainingData(drawn[1], ones))
        if bits is not None:
            return bits
    if mechanism.has_log_prob:
        return LikelihoodRatioScore(mechanism, a, b)
    if math.prod(mechanism.output_shape) == len(a) and mechanism.output_kind == "real":
        return ProjectionScore(a, b)
    return None


#: Outputs per input that decide whether the profile auditor scores the float bits.
BITS_SAMPLES = 1 << 12


def _corners(mechanism: Mechanism) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """The opposite corners of a bounded real box (None for any other domain)."""
    domain = mechanism.input_domain
    if not (isinstance(domain, InputDomain) and domain.bounded and not domain.integer):
        return None
    low, high = domain_corners(mechanism)
    return tuple(low.ravel().tolist()), tuple(high.ravel().tolist())


def _audit_curve(
    mech: Mechanism, claim: Any, config: Any, execution: ExecutionConfig | None
) -> AuditResult:
    """The profile auditor on the domain's opposite corners, with :func:`profile_score`."""
    if config is not None and not isinstance(config, ProfileAuditConfig):
        raise InvalidTypeError("config", config, "a ProfileAuditConfig for a curve claim")
    pair = _corners(mech)
    seed = (config or ProfileAuditConfig()).seed
    score = None if pair is None else profile_score(mech, *pair, seed=seed)
    if pair is None or score is None:
        raise InvalidArgumentError(
            "mechanism",
            mech.name,
            "a mechanism on a bounded real box whose outputs have the input's size or that "
            "declares a log-density, for a curve claim (use audit_profile with a pair and a "
            "score of your own otherwise)",
        )
    auditor = ProfileAuditor(pair[0], pair[1], score)
    return auditor.audit(mech, claim, config, execution)


def _audit_point(
    mech: Mechanism, config: AuditConfig, execution: ExecutionConfig | None, joint: bool
) -> AuditResult:
    """A pure or (ε, δ) claim: the black box, and for δ > 0 the profile certifier beside it."""
    blackbox: Auditor = BlackBoxAuditor()
    claim = mech.claim
    if not blackbox.supports(mech, claim):
        raise InvalidArgumentError(
            "mechanism", mech.name, "a mechanism of vectors with a pure or (ε, δ) claim"
        )
    has_delta = claim.definition is Definition.APPROXIMATE and claim.delta > 0
    # A pure claim, or DP-Sniper as published: the search alone.
    if not (joint and has_delta) or config.mode == "dpsniper":
        return blackbox.audit(mech, claim, config, execution)
    shares = error_shares(1.0 - config.confidence, ("black-box search", "profile certifier"))
    searched = blackbox.audit(
        mech,
        claim,
        dataclasses.replace(config, confidence=1.0 - shares["black-box search"]),
        execution,
    )
    w = searched.witness
    pair = (w.x, w.x_prime) if w is not None and w.values is None else _corners(mech)
    score = None if pair is None else profile_score(mech, *pair, seed=config.seed)
    if pair is None or score is None:
        note = (
            "the profile certifier did not run (no pair on a real box, or no score for these "
            "outputs that needs no training); the black-box search certified at α/2"
        )
        return joint_answer(searched, None, config.confidence, shares, note)
    profile_config = ProfileAuditConfig(
        selection_samples=config.samples,
        # Its sets are counted on one score per output, and the small sets a δ turns on
        # need the larger sample (a classic Gaussian at (10, 0.01), exact δ(10) = 0.041:
        # δ_lcb 0.001-0.019 at 10⁷ outputs per input, 0.020-0.030 at 3·10⁷; docs/tuning.md).
        final_samples=PROFILE_FINAL_FACTOR * config.final_samples,
        confidence=1.0 - shares["profile certifier"],
        epsilons=(claim.epsilon,),
        # A root seed of its own: its samples are fresh for the search and for itself.
        seed=config.seed + 2**32,
    )
    origin = "the black-box witness's pair" if w is not None else "box: opposite corners"
    certifier = ProfileAuditor(
        pair[0], pair[1], score, pair_origin=origin, claim_source="the mechanism's (ε, δ) claim"
    )
    approx = ApproxDP(claim.epsilon, claim.delta)
    certified = certifier.audit(mech, approx, profile_config, execution)
    return joint_answer(searched, certified, config.confidence, shares)


def audit_training(
    mechanism: TrainingMechanism,
    claim: Any = None,
    *,
    method: str = "auto",
    config: OneRunConfig | MultiRunConfig | None = None,
    execution: ExecutionConfig | None = None,
) -> AuditResult:
    """Audit a training algorithm (DP-SGD ...) against ``claim`` with canaries.

    ``method``: ``one-run`` (``auto``; m canaries, half in, one training:
    :mod:`dpaudit.auditors.training.one_run`) or ``multi-run`` (many trainings with and
    without one canary, certified as a whole profile by the profile certifier:
    :mod:`dpaudit.auditors.training.multi_run`).  ``claim``: None (the trainer's accountant),
    an (ε, δ) claim, or a curve (read at ``config.delta`` by the one-run audit).
    """
    if not isinstance(mechanism, TrainingMechanism):
        raise InvalidTypeError("mechanism", mechanism, "a TrainingMechanism")
    if method not in ("auto", "one-run", "multi-run"):
        raise InvalidArgumentError("method", method, "auto, one-run or multi-run for training")
    if method == "multi-run" or isinstance(config, MultiRunConfig):
        cfg = config if isinstance(config, MultiRunConfig) else None
        if config is not None and cfg is None:
            raise InvalidTypeError("config", config, "a MultiRunConfig for a multi-run audit")
        return _audit_multi_run(mechanism, claim, cfg or MultiRunConfig(), execution)
    if config is not None and not isinstance(config, OneRunConfig):
        raise InvalidTypeError("config", config, "a OneRunConfig for a one-run audit")
    cfg1 = config or OneRunConfig()
    if execution is not None:
        cfg1 = dataclasses.replace(cfg1, execution=execution)
    return audit_one_run(mechanism, claim, cfg1)


def _audit_multi_run(
    mechanism: TrainingMechanism,
    claim: Any,
    config: MultiRunConfig,
    execution: ExecutionConfig | None,
) -> AuditResult:
    """The canary game certified by the profile auditor (canary in: 1, out: 0)."""
    source = "the trainer's accountant" if claim is None else "given"
    claim = mechanism.claim if claim is None else claim
    if not _is_curve_claim(claim):
        raise InvalidArgumentError("claim", claim, "an (ε, δ) claim or a curve of dpaudit.claims")
    epsilon, _ = claimed_point(claim, getattr(claim, "delta", None) or 1e-5)
    plan = plan_multi_run(mechanism, epsilon, config)
    profile = ProfileAuditConfig(**plan.profile_sizes, execution=execution or config.execution)
    auditor = ProfileAuditor(
        plan.x, plan.x_prime, plan.score, pair_origin=plan.pair_origin, claim_source=source
    )
    return auditor.audit(plan.game, claim, profile, None)
