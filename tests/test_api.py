"""``dpaudit.api.audit``: one entry that picks the auditor from what the mechanism is."""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.analysis.word_embedding import WordEmbedding
from dpaudit.api import audit
from dpaudit.auditors.blackbox.config import AuditConfig
from dpaudit.auditors.metric.auditor import MetricAuditConfig
from dpaudit.claims import Definition, InputDomain, MetricClaim, PrivacyClaim
from dpaudit.engine.config import ExecutionConfig
from dpaudit.errors import InvalidArgumentError, InvalidTypeError
from dpaudit.mechanisms import make_mechanism, mechanism_class, mechanism_names
from dpaudit.mechanisms.base import MechanismContract
from dpaudit.mechanisms.registry import make_word_mechanism
from dpaudit.mechanisms.word.base import WordMechanism
from dpaudit.results.audit import AuditorKind, AuditResult

ONE = ExecutionConfig(workers=1)
SMALL = AuditConfig(samples=4_000, final_samples=8_000, seed=0)


def _leaky(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Laplace noise of scale 1/4 while claiming ε = 1 on [0, 1]: true ε = 4."""
    return x + rng.laplace(0.0, 0.25, size=(n, x.size))


def test_a_plain_function_is_audited_black_box_against_its_claim() -> None:
    claim = PrivacyClaim(Definition.PURE, 1.0, InputDomain((1,), 0.0, 1.0))
    result = audit(_leaky, claim, config=SMALL, execution=ONE)
    assert isinstance(result, AuditResult)
    assert result.violation and result.epsilon_lower_bound > 1.0
    assert result.witness is not None


def test_a_registered_mechanism_uses_its_own_claim_or_a_new_epsilon() -> None:
    mech = make_mechanism("laplace", epsilon=1.0)
    own = audit(mech, config=SMALL, execution=ONE)
    assert isinstance(own, AuditResult) and own.claimed_epsilon == 1.0 and not own.violation
    tighter = audit(mech, 0.25, config=SMALL, execution=ONE)
    assert tighter.claimed_epsilon == 0.25 and tighter.violation


def test_a_word_mechanism_is_audited_pair_by_pair() -> None:
    rng = np.random.default_rng(0)
    emb = WordEmbedding(tuple(f"w{i}" for i in range(30)), rng.normal(size=(30, 4)))
    mech = make_word_mechanism("santext", emb, epsilon=2.0)
    cfg = MetricAuditConfig(samples=4_000, final_samples=20_000, max_pairs=3)
    result = audit(mech, config=cfg, execution=ONE)
    assert isinstance(result, AuditResult) and result.kind is AuditorKind.METRIC
    assert len(result.detail.pairs) == 3
    again = audit(mech, mech.claim, config=cfg, execution=ONE)
    assert again.detail.pairs == result.detail.pairs


def test_a_word_mechanism_is_never_silently_audited_against_another_claim() -> None:
    rng = np.random.default_rng(0)
    emb = WordEmbedding(tuple(f"w{i}" for i in range(10)), rng.normal(size=(10, 4)))
    mech = make_word_mechanism("santext", emb, epsilon=2.0)
    for other in (1.0, MetricClaim(1.0, mech.claim.metric)):
        with pytest.raises(InvalidArgumentError, match=r"claim.*mechanism's own claim"):
            audit(mech, other, execution=ONE)


def test_a_config_for_the_wrong_auditor_is_refused() -> None:
    mech = make_mechanism("laplace", epsilon=1.0)
    with pytest.raises(InvalidTypeError, match="config"):
        audit(mech, config=MetricAuditConfig(), execution=ONE)  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="claim"):
        audit(lambda x, n, rng: x, 1.0)


def test_one_registry_holds_every_kind_and_filters_by_output_kind() -> None:
    words, vectors = mechanism_names("word"), mechanism_names("vector")
    texts = mechanism_names("text")
    assert {"cmp", "tem", "santext"} <= set(words) and "laplace" in vectors
    assert texts == ["dp-bart", "dp-decoding", "dp-mlm", "dp-paraphrase", "dp-prompt"]
    assert sorted(words + vectors + texts) == mechanism_names()
    assert all(issubclass(mechanism_class(n), MechanismContract) for n in words + vectors)
    rng = np.random.default_rng(1)
    emb = WordEmbedding(tuple(f"w{i}" for i in range(10)), rng.normal(size=(10, 3)))
    assert isinstance(make_mechanism("cmp", embedding=emb, epsilon=1.0), WordMechanism)
    with pytest.raises(InvalidArgumentError, match="kind"):
        mechanism_names("bogus")
