"""``dpaudit.audit`` on the sanity check and the LM rewriters: one entry, named or automatic."""

from __future__ import annotations

import pytest

import dpaudit
from dpaudit.api import SanityConfig
from dpaudit.auditors.sanity.check import SanityAuditor, sanity_check
from dpaudit.engine.config import ExecutionConfig
from dpaudit.errors import InvalidArgumentError, InvalidTypeError
from dpaudit.mechanisms import TEXT_FACTORIES, make_mechanism, mechanism_names
from dpaudit.results import AuditorKind

ONE = ExecutionConfig(workers=1)


def test_method_sanity_is_the_sanity_check_bit_for_bit() -> None:
    mech = make_mechanism("laplace", epsilon=1.0, dim=2)
    via = dpaudit.audit(
        mech, method="sanity", config=SanityConfig(20_000, seed=3, confidence=0.9), execution=ONE
    )
    direct = sanity_check(mech, 20_000, seed=3, confidence=0.9, execution=ONE)
    assert via.kind is AuditorKind.SANITY
    assert via.detail == direct.detail and via.epsilon_lower_bound == direct.epsilon_lower_bound
    # An auditor object is asked supports() and runs with its own config.
    obj = dpaudit.audit(mech, method=SanityAuditor(20_000), config={"seed": 3, "confidence": 0.9})
    assert obj.detail.counts == direct.detail.counts


def test_sanity_options_and_method_errors_name_the_argument() -> None:
    with pytest.raises(InvalidArgumentError, match="tie_rule"):
        SanityConfig(tie_rule="coin")
    with pytest.raises(InvalidArgumentError, match="runs"):
        SanityConfig(0)
    mech = make_mechanism("laplace", epsilon=1.0, dim=2)
    with pytest.raises(InvalidTypeError, match="config"):
        dpaudit.audit(mech, method="sanity", config={"runs": 10})
    with pytest.raises(InvalidArgumentError, match=r"method.*sanity, rewriter"):
        dpaudit.audit(mech, method="sanitycheck")
    with pytest.raises(InvalidArgumentError, match="method"):
        dpaudit.audit(mech, method="rewriter")
    with pytest.raises(InvalidTypeError, match="method"):
        dpaudit.audit(mech, method=object())  # type: ignore[arg-type]


def test_the_rewriters_are_text_mechanisms_of_the_one_registry() -> None:
    from dpaudit.mechanisms.rewriters.catalogue import FACTORY_PATHS, rewriter_names

    assert mechanism_names("text") == rewriter_names() == sorted(TEXT_FACTORIES)
    assert FACTORY_PATHS == TEXT_FACTORIES
    with pytest.raises(InvalidArgumentError, match="text mechanism"):
        dpaudit.mechanisms.mechanism_class("dp-prompt")


def test_a_rewriter_is_routed_by_auto_white_box_or_black_box() -> None:
    pytest.importorskip("transformers", reason="the rewriters need the lm extra")
    from dpaudit.auditors.rewriter import RewriterAuditConfig, RewriterAuditor, TextAuditConfig
    from dpaudit.text.models import tiny_model

    prompt = make_mechanism("dp-prompt", model=tiny_model("causal"), epsilon=10.0, max_new_tokens=2)
    small = RewriterAuditConfig(samples=10, final_samples=10)
    auto = dpaudit.audit(prompt, config=small)
    assert auto.kind is AuditorKind.REWRITER and auto.detail.mode == "white-box"
    pair = (("the film was good", "the film was bad", "one word"),)
    named = dpaudit.audit(prompt, method=RewriterAuditor(pair), config=small)
    assert [p.x for p in named.detail.pairs] == ["the film was good"]
    with pytest.raises(InvalidArgumentError, match="claim"):
        dpaudit.audit(prompt, 1.0, config=small)
    with pytest.raises(InvalidArgumentError, match="method"):
        dpaudit.audit(prompt, method="blackbox")
    bart = make_mechanism("dp-bart", model=tiny_model("seq2seq"), epsilon=10.0, max_length=4)
    black = dpaudit.audit(bart, config=TextAuditConfig(samples=10, final_samples=10))
    assert black.detail.mode == "black-box"
    with pytest.raises(InvalidArgumentError, match="method"):
        dpaudit.audit(bart, method="rewriter")
