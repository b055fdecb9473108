"""The core's answer: one verdict rule, one sentence, one confidence sentence, every auditor.

Closed-form cases only: each branch of :func:`judge` on hand-made statements, and the
sanity check's new inconclusive branch where the arithmetic of Clopper–Pearson says no
bound above the claim is reachable at the runs drawn.
"""

from __future__ import annotations

import math

import pytest

from dpaudit.auditors.core.answer import Judged, joint_confidence, judge
from dpaudit.auditors.core.power import certifiable_ceiling
from dpaudit.errors import InvalidArgumentError
from dpaudit.verdicts import Evidence, Verdict, state, verdict_text

EV = Evidence(refuted="ε ≥ 3 > claimed 1", held="ε_lcb = 0.5 ≤ claimed 1", blind="too few")


def test_any_refuted_statement_is_a_violation_whatever_the_others_say() -> None:
    judged = [Judged(False, testable=False), Judged(True), Judged(False, covered=False)]
    assert judge(judged) is Verdict.VIOLATION


def test_nothing_covered_is_outside_the_claim() -> None:
    assert judge([Judged.of_bound(9.0, math.inf)] * 2) is Verdict.OUTSIDE_CLAIM


def test_one_untestable_covered_statement_makes_it_inconclusive() -> None:
    judged = [Judged.of_bound(0.2, 1.0), Judged.of_bound(0.1, 5.0, testable=False)]
    assert judge(judged) is Verdict.INCONCLUSIVE
    # An untestable statement the claim does not cover does not count.
    judged[1] = Judged.of_bound(0.1, math.inf, testable=False)
    assert judge(judged) is Verdict.NO_VIOLATION_FOUND


def test_of_bound_compares_strictly_and_refuses_nan() -> None:
    assert not Judged.of_bound(1.0, 1.0).refuted and Judged.of_bound(1.0 + 1e-12, 1.0).refuted
    with pytest.raises(InvalidArgumentError):
        Judged.of_bound(math.nan, 1.0)
    with pytest.raises(InvalidArgumentError):
        judge([])


def test_every_verdict_has_its_one_sided_sentence() -> None:
    assert state(Verdict.VIOLATION, EV, "0.95") == "violation: ε ≥ 3 > claimed 1 at confidence 0.95"
    held = state(Verdict.NO_VIOLATION_FOUND, EV, "0.95")
    assert held.startswith("no violation found: ε_lcb = 0.5") and "does not show" in held
    assert state(Verdict.INCONCLUSIVE, EV, "0.95") == "inconclusive: too few; this is not a pass"
    assert state(Verdict.OUTSIDE_CLAIM, EV, "0.95").startswith("outside the claim: ")
    # The ε form is the same sentence.
    assert verdict_text(3.0, 1.0, 0.95) == "violation: ε ≥ 3 > claimed 1 at confidence 0.95"


def test_joint_confidence_states_the_split() -> None:
    text = joint_confidence(0.9, 5, "Chosen on other samples.")
    assert text.startswith("Chosen on other samples. All 5 certified statement(s)")
    assert "α/(2·5) = 0.01 (α = 0.1, Bonferroni)" in text
    with pytest.raises(InvalidArgumentError):
        joint_confidence(0.9, 0)


def test_sanity_check_says_inconclusive_when_its_runs_cannot_reach_the_claim() -> None:
    from dpaudit.auditors.sanity.check import sanity_check
    from dpaudit.engine.executor import ExecutionConfig
    from dpaudit.mechanisms import make_mechanism

    runs = 200
    # ε = 10 needs e^10 ≈ 22 000 runs; 200 can certify at most ln(200/ln(8/α)) ≈ 3.7.
    ceiling = certifiable_ceiling(runs, 0.05 / 8)
    assert ceiling < 10.0
    mech = make_mechanism("laplace", epsilon=10.0, dim=1)
    res = sanity_check(mech, runs, seed=0, execution=ExecutionConfig(workers=1))
    assert res.verdict is Verdict.INCONCLUSIVE and not res.violation
    assert res.verdict_text.startswith("inconclusive: no bound above")
    assert res.power["ceiling"] == pytest.approx(ceiling)
