"""The one trust call (:mod:`dpaudit.auditors.core.trust`): what it finds, and that every
auditor makes it exactly once, from one place."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import numpy as np
import pytest

import dpaudit.auditors.core.trust as trust_module
from dpaudit.analysis.word_embedding import WordEmbedding
from dpaudit.auditors.blackbox.auditor import AuditConfig, audit
from dpaudit.auditors.core.trust import TrustReport, establish_trust
from dpaudit.auditors.metric.auditor import MetricAuditConfig, audit_metric
from dpaudit.auditors.profile import ProfileAuditConfig, audit_profile
from dpaudit.auditors.sanity.check import sanity_check
from dpaudit.claims import Definition, InputDomain, PrivacyClaim, PureDP
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.errors import InvalidArgumentError, MechanismError
from dpaudit.mechanisms import make_mechanism
from dpaudit.mechanisms.laplace import LaplaceMechanism
from dpaudit.mechanisms.registry import make_word_mechanism
from dpaudit.mechanisms.word.santext import SanText
from dpaudit.testing import as_mechanism

ONE = ExecutionConfig(workers=1)
SRC = Path(__file__).resolve().parents[1] / "src" / "dpaudit"
CLAIM = PrivacyClaim(Definition.PURE, 1.0, InputDomain((1,), 0.0, 1.0))


def _synthetic_vocabulary() -> WordEmbedding:
    rng = np.random.default_rng(0)
    return WordEmbedding(tuple(f"w{i}" for i in range(8)), rng.normal(size=(8, 4)))


def fixed_seed_laplace(x, n, rng):
    return x + np.random.default_rng(12345).laplace(0.0, 1.0, size=(n, x.size))


def entropy_laplace(x, n, rng):
    return x + np.random.default_rng().laplace(0.0, 1.0, size=(n, x.size))


@dataclasses.dataclass(frozen=True)
class HalfScaleLaplace(LaplaceMechanism):
    """Declares Lap(1/ε) through its transform; samples Lap(1/(2ε)): true ε = 2ε."""

    def _sample(self, x, n, rng):
        return x + rng.laplace(0.0, 0.5 * self.scale, size=(n, self.dim))


class _Last:
    """What the stateful mechanisms below remember between calls."""

    value = 0.0
    word = ""


def remembering_laplace(x, n, rng):
    """Correct Laplace noise plus half the previous call's input: state kept between calls."""
    out = x + rng.laplace(0.0, 1.0, size=(n, x.size)) + 0.5 * _Last.value
    _Last.value = float(np.ravel(x)[0])
    return out


class RememberingSanText(SanText):
    name = "santext-remembers"

    def sample_codes(self, word, n, rng):
        codes = super().sample_codes(_Last.word or word, n, rng)  # the previous call's word
        _Last.word = word
        return codes


class EntropySanText(SanText):
    name = "santext-os-entropy"

    def sample_codes(self, word, n, rng):
        return super().sample_codes(word, n, np.random.default_rng())


# ------------------------------------------------------------- what it finds
def test_a_correct_seeded_mechanism_earns_a_clean_report() -> None:
    report = establish_trust(make_mechanism("laplace", epsilon=1.0))
    assert report == TrustReport(report.randomness) and report.randomness.kind == "seeded"
    assert report.reproducible and report.notes == () and report.findings == ()


def test_a_fixed_seed_is_refused_and_an_unseedable_source_is_reported() -> None:
    with pytest.raises(MechanismError, match="fixed seed"):
        establish_trust(as_mechanism(fixed_seed_laplace, CLAIM))
    report = establish_trust(as_mechanism(entropy_laplace, CLAIM))
    assert not report.reproducible and "not reproducible" in report.notes[0]


def test_state_kept_between_calls_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """Outputs that depend on the previous call's input are not draws on one input."""
    monkeypatch.setattr(_Last, "value", 0.0)
    with pytest.raises(MechanismError, match=r"keeps state between calls.*after one call on input"):
        establish_trust(as_mechanism(remembering_laplace, CLAIM))
    monkeypatch.setattr(_Last, "word", "")
    vocab = _synthetic_vocabulary()
    with pytest.raises(MechanismError, match=r"keeps state between calls.*after one call on 'w1'"):
        establish_trust(RememberingSanText(3.0, vocab), probe=vocab.words[0])


def test_a_contradicted_transform_is_a_finding_only_when_asked_for() -> None:
    mech = HalfScaleLaplace(epsilon=1.0, dim=4)
    found = establish_trust(mech, declarations=("noise_from_uniform",))
    assert found.contradicts("noise_from_uniform") and not found.contradicts("log_prob")
    assert establish_trust(mech, declarations=()).findings == ()


def test_word_mechanisms_are_probed_on_a_word() -> None:
    vocab = _synthetic_vocabulary()
    mech = make_word_mechanism("santext", vocab, epsilon=3.0)
    word = vocab.words[0]
    assert establish_trust(mech, probe=word).randomness.kind == "seeded"
    assert not establish_trust(EntropySanText(3.0, vocab), probe=word).reproducible
    with pytest.raises(InvalidArgumentError, match="probe"):
        establish_trust(mech)


def test_unknown_declarations_and_subjects_name_the_argument() -> None:
    with pytest.raises(InvalidArgumentError, match="declarations"):
        establish_trust(make_mechanism("laplace", epsilon=1.0), declarations=("density",))
    with pytest.raises(InvalidArgumentError, match="mechanism"):
        establish_trust(lambda x, n, rng: x)  # type: ignore[arg-type]


def test_the_profile_audit_now_reports_an_unseedable_source() -> None:
    mech = as_mechanism(entropy_laplace, CLAIM)
    claim = _pure_profile_claim()
    cfg = ProfileAuditConfig(selection_samples=2000, final_samples=4000, execution=ONE)
    result = audit_profile(mech, 0.0, 1.0, lambda y: -y[:, 0], claim, cfg)
    assert not result.reproducible and "not reproducible" in result.notes[0]


def _pure_profile_claim() -> PureDP:
    return PureDP(4.0)


# ------------------------------------------------------ once, from one place
@pytest.fixture
def trust_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Count calls of ``establish_trust`` wherever an auditor imported it."""
    calls: list[str] = []
    real = trust_module.establish_trust

    def counting(subject, **kw):
        calls.append(type(subject).__name__)
        return real(subject, **kw)

    import dpaudit.auditors.blackbox.auditor as blackbox
    import dpaudit.auditors.metric.auditor as metric
    import dpaudit.auditors.profile.auditor as profile
    import dpaudit.auditors.sanity.check as sanity

    for module in (blackbox, metric, profile, sanity):
        monkeypatch.setattr(module, "establish_trust", counting)
    return calls


def test_every_auditor_makes_the_trust_call_exactly_once(trust_calls: list[str]) -> None:
    laplace = make_mechanism("laplace", epsilon=1.0)
    audit(laplace, AuditConfig(samples=4000, final_samples=4000), ONE)
    assert len(trust_calls) == 1
    sanity_check(make_mechanism("laplace", epsilon=1.0, dim=4), 2000, execution=ONE)
    assert len(trust_calls) == 2
    vocab = _synthetic_vocabulary()
    words = make_word_mechanism("santext", vocab, epsilon=3.0)
    audit_metric(words, MetricAuditConfig(samples=500, final_samples=500, max_pairs=2), ONE)
    assert len(trust_calls) == 3
    cfg = ProfileAuditConfig(selection_samples=2000, final_samples=4000, execution=ONE)
    audit_profile(laplace, 0.0, 1.0, lambda y: -y[:, 0], _pure_profile_claim(), cfg)
    assert trust_calls == ["LaplaceMechanism", "LaplaceMechanism", "SanText", "LaplaceMechanism"]


def test_no_auditor_probes_randomness_or_declarations_on_its_own() -> None:
    # The checks' building blocks are called only by the trust module (and the
    # conformance suite, which reports each check separately by design).
    checks = {"check_randomness", "check_log_prob", "check_transform", "classify_randomness"}
    allowed = {
        SRC / "auditors/core/trust.py",
        SRC / "auditors/core/guard.py",
        SRC / "auditors/core/declarations.py",
        SRC / "testing/conformance.py",
        SRC / "testing/word_checks.py",
    }
    offenders = []
    for path in SRC.rglob("*.py"):
        if path in allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", getattr(node.func, "attr", None))
                if name in checks:
                    offenders.append(f"{path.relative_to(SRC)}:{node.lineno} {name}")
    assert offenders == []
