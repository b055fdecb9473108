"""dpaudit: check whether a (text) privatisation mechanism really is as private as it claims.

Data flows one way: claim → samples → sufficient statistics → bound → verdict → report.

* :mod:`dpaudit.analysis` — the exact maths (sensitivities, privacy losses);
* :mod:`dpaudit.mechanisms` — samplers and their claims (use ``analysis``);
* :mod:`dpaudit.adapters` — other libraries' mechanisms and user code, above ``mechanisms``;
* :mod:`dpaudit.engine` — runs work units (local pool, Ray, checkpoints, timeouts);
* :mod:`dpaudit.auditors` — empirical statistics and one-sided ε lower bounds (on ``engine``);
* :mod:`dpaudit.text` (corpora, embeddings), :mod:`dpaudit.attacks` (HoHo attacks) — the NLP side;
* :mod:`dpaudit.reproduce`, :mod:`dpaudit.report`, :mod:`dpaudit.cli` — on top;
* basics used everywhere: ``errors``, ``validation``, ``claims``, ``random``,
  ``serialization``, ``io``, ``progress``, ``verdicts`` (the one verdict vocabulary),
  ``witness`` (the one witness type: analytic, sanity-check and black-box evidence).

The import rules are enforced by ``tests/test_architecture.py``.

The names a user needs are importable from here (``from dpaudit import sanity_check``);
each is imported on first use, so ``import dpaudit`` itself stays cheap:

* :func:`audit` (:func:`dpaudit.api.audit`) — the one entry: audits a mechanism, a word
  mechanism or a plain ``f(x, n, rng)`` against its claim with the auditor its output kind
  needs, and returns the typed result with its :class:`Witness`; :class:`AuditConfig` /
  :class:`MetricAuditConfig` size it;
* :class:`AuditResult` — what every auditor returns: bound, :class:`Verdict`, witness,
  trust notes, and its auditor's ``detail`` (:class:`BlackBoxDetail` and
  :class:`ProfileDetail` with a :class:`CertifiedStatement` per set certified,
  :class:`SanityDetail`, :class:`MetricDetail` with its :class:`PairResult` per pair,
  :class:`RewriterDetail`); ``to_dict``/``from_dict`` serialise it once;
* :func:`audit_mechanism` — the black-box auditor itself (:mod:`dpaudit.auditors.blackbox`);
  :func:`audit_metric` — the pair-by-pair word auditor (:mod:`dpaudit.auditors.metric`);
* :func:`word_mechanism` — a user's ``f(word, n, rng)`` with an ε·d claim, for :func:`audit`;
* :func:`sanity_check` — the ACL 2022 reconstruction sanity check;
* :class:`PrivacyClaim`, :class:`InputDomain`, :class:`Definition` — what is claimed;
* :func:`assert_no_violation`, :class:`PrivacyViolationError` — privacy tests in CI;
* :func:`check_mechanism` — the conformance suite a mechanism should pass;
* :func:`make_mechanism`, :func:`mechanism_names`, :class:`Mechanism` — the registry;
* :func:`round_to_grid` — round an additive mechanism's float output to a grid its input
  cannot move, so that its float64 bits leak no more than its value (Mironov, CCS 2012);
* :class:`ExecutionConfig` — workers, backend (local processes or Ray);
* LM rewriters (extra ``lm``): :func:`load_model`, :func:`make_rewriter`, :class:`TextClaim`,
  :func:`audit_rewriter` (white box: exact token losses, certified sets) and
  :func:`audit_text_mechanism` (black box, for ``f(text, n, rng) -> list[str]``).
"""

from __future__ import annotations

import importlib
from types import ModuleType as _ModuleType
from typing import TYPE_CHECKING, Any

#: Public name → (defining module, its name there), imported on first access (PEP 562).
_EXPORTS: dict[str, tuple[str, str]] = {
    "audit": ("dpaudit.api", "audit"),
    "audit_mechanism": ("dpaudit.auditors.blackbox.auditor", "audit"),
    "audit_metric": ("dpaudit.auditors.metric.auditor", "audit_metric"),
    "AuditConfig": ("dpaudit.auditors.blackbox.config", "AuditConfig"),
    "SearchConfig": ("dpaudit.auditors.blackbox.config", "SearchConfig"),
    "MetricAuditConfig": ("dpaudit.auditors.metric.auditor", "MetricAuditConfig"),
    "AuditResult": ("dpaudit.api", "AuditResult"),
    "AuditorKind": ("dpaudit.api", "AuditorKind"),
    "BlackBoxDetail": ("dpaudit.api", "BlackBoxDetail"),
    "CertifiedStatement": ("dpaudit.api", "CertifiedStatement"),
    "SanityDetail": ("dpaudit.api", "SanityDetail"),
    "MetricDetail": ("dpaudit.api", "MetricDetail"),
    "PairResult": ("dpaudit.api", "PairResult"),
    "ProfileDetail": ("dpaudit.api", "ProfileDetail"),
    "RewriterDetail": ("dpaudit.api", "RewriterDetail"),
    "Witness": ("dpaudit.witness", "Witness"),
    "Verdict": ("dpaudit.verdicts", "Verdict"),
    "MetricClaim": ("dpaudit.claims", "MetricClaim"),
    "sanity_check": ("dpaudit.auditors.sanity.check", "sanity_check"),
    "PrivacyClaim": ("dpaudit.claims", "PrivacyClaim"),
    "InputDomain": ("dpaudit.claims", "InputDomain"),
    "Definition": ("dpaudit.claims", "Definition"),
    "assert_no_violation": ("dpaudit.testing", "assert_no_violation"),
    "PrivacyViolationError": ("dpaudit.testing", "PrivacyViolationError"),
    "check_mechanism": ("dpaudit.testing", "check_mechanism"),
    "make_mechanism": ("dpaudit.mechanisms", "make_mechanism"),
    "round_to_grid": ("dpaudit.mechanisms.output_grid", "round_to_grid"),
    "mechanism_names": ("dpaudit.mechanisms", "mechanism_names"),
    "Mechanism": ("dpaudit.mechanisms", "Mechanism"),
    "ExecutionConfig": ("dpaudit.engine.config", "ExecutionConfig"),
    "audit_rewriter": ("dpaudit.auditors.rewriter", "audit_rewriter"),
    "RewriterAuditConfig": ("dpaudit.auditors.rewriter", "RewriterAuditConfig"),
    "audit_text_mechanism": ("dpaudit.auditors.rewriter", "audit_text_mechanism"),
    "TextAuditConfig": ("dpaudit.auditors.rewriter", "TextAuditConfig"),
    "TextClaim": ("dpaudit.claims", "TextClaim"),
    "make_rewriter": ("dpaudit.mechanisms.rewriters.catalogue", "make_rewriter"),
    "load_model": ("dpaudit.text.models", "load_model"),
    "word_mechanism": ("dpaudit.adapters.word_function", "word_mechanism"),
    "audit_training": ("dpaudit.api", "audit_training"),
    "TrainingDetail": ("dpaudit.api", "TrainingDetail"),
    "OneRunConfig": ("dpaudit.auditors.training.one_run", "OneRunConfig"),
    "MultiRunConfig": ("dpaudit.auditors.training.multi_run", "MultiRunConfig"),
    "TrainingMechanism": ("dpaudit.mechanisms.training.contract", "TrainingMechanism"),
    "CallableTraining": ("dpaudit.mechanisms.training.contract", "CallableTraining"),
    "TextRecord": ("dpaudit.mechanisms.training.contract", "TextRecord"),
    "GradientCanary": ("dpaudit.mechanisms.training.contract", "GradientCanary"),
    "DPSGD": ("dpaudit.mechanisms.training.dpsgd", "DPSGD"),
    "CallableSyntheticText": ("dpaudit.mechanisms.training.synthetic", "CallableSyntheticText"),
    "DPBigramText": ("dpaudit.mechanisms.training.dp_bigram", "DPBigramText"),
}

__all__ = ["__version__", *_EXPORTS]

if TYPE_CHECKING:  # static checkers and IDEs see the real objects (`as` marks re-exports)
    from dpaudit.adapters.word_function import word_mechanism as word_mechanism
    from dpaudit.api import AuditorKind as AuditorKind
    from dpaudit.api import AuditResult as AuditResult
    from dpaudit.api import BlackBoxDetail as BlackBoxDetail
    from dpaudit.api import CertifiedStatement as CertifiedStatement
    from dpaudit.api import MetricDetail as MetricDetail
    from dpaudit.api import PairResult as PairResult
    from dpaudit.api import ProfileDetail as ProfileDetail
    from dpaudit.api import RewriterDetail as RewriterDetail
    from dpaudit.api import SanityDetail as SanityDetail
    from dpaudit.api import TrainingDetail as TrainingDetail
    from dpaudit.api import audit as audit
    from dpaudit.api import audit_training as audit_training
    from dpaudit.auditors.blackbox.auditor import audit as audit_mechanism  # noqa: F401
    from dpaudit.auditors.blackbox.config import AuditConfig as AuditConfig
    from dpaudit.auditors.metric.auditor import MetricAuditConfig as MetricAuditConfig
    from dpaudit.auditors.metric.auditor import audit_metric as audit_metric
    from dpaudit.auditors.rewriter import RewriterAuditConfig as RewriterAuditConfig
    from dpaudit.auditors.rewriter import TextAuditConfig as TextAuditConfig
    from dpaudit.auditors.rewriter import audit_rewriter as audit_rewriter
    from dpaudit.auditors.rewriter import audit_text_mechanism as audit_text_mechanism
    from dpaudit.auditors.sanity.check import sanity_check as sanity_check
    from dpaudit.auditors.training.multi_run import MultiRunConfig as MultiRunConfig
    from dpaudit.auditors.training.one_run import OneRunConfig as OneRunConfig
    from dpaudit.claims import Definition as Definition
    from dpaudit.claims import InputDomain as InputDomain
    from dpaudit.claims import MetricClaim as MetricClaim
    from dpaudit.claims import PrivacyClaim as PrivacyClaim
    from dpaudit.claims import TextClaim as TextClaim
    from dpaudit.engine.config import ExecutionConfig as ExecutionConfig
    from dpaudit.mechanisms import Mechanism as Mechanism
    from dpaudit.mechanisms import make_mechanism as make_mechanism
    from dpaudit.mechanisms import mechanism_names as mechanism_names
    from dpaudit.mechanisms.rewriters.catalogue import make_rewriter as make_rewriter
    from dpaudit.mechanisms.training.contract import CallableTraining as CallableTraining
    from dpaudit.mechanisms.training.contract import GradientCanary as GradientCanary
    from dpaudit.mechanisms.training.contract import TextRecord as TextRecord
    from dpaudit.mechanisms.training.contract import TrainingMechanism as TrainingMechanism
    from dpaudit.mechanisms.training.dp_bigram import DPBigramText as DPBigramText
    from dpaudit.mechanisms.training.dpsgd import DPSGD as DPSGD
    from dpaudit.mechanisms.training.synthetic import (
        CallableSyntheticText as CallableSyntheticText,
    )
    from dpaudit.testing import PrivacyViolationError as PrivacyViolationError
    from dpaudit.testing import assert_no_violation as assert_no_violation
    from dpaudit.testing import check_mechanism as check_mechanism
    from dpaudit.text.models import load_model as load_model
    from dpaudit.verdicts import Verdict as Verdict
    from dpaudit.witness import Witness as Witness

    __version__: str


def __getattr__(name: str) -> Any:
    """Import a public name (or ``__version__``) on first access and cache it."""
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            value: Any = version("dpaudit")
        except PackageNotFoundError:  # pragma: no cover - running from a source tree
            value = "0.0.0"
    elif name in _EXPORTS:
        module, attribute = _EXPORTS[name]
        value = getattr(importlib.import_module(module), attribute)
    else:
        raise AttributeError(f"module 'dpaudit' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names and the sub-packages imported so far."""
    loaded = [n for n, v in globals().items() if isinstance(v, _ModuleType) and n != "importlib"]
    return sorted({*__all__, *loaded})
