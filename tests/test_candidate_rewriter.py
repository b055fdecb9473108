"""The exponential mechanism over candidate rewrites, declared and audited white box.

A candidate set that does not depend on the document (public) with a utility in its
declared range is ε-DP per document; candidates made from the document are not (a candidate
of ``x`` that ``x'`` cannot produce has an infinite loss); nor is a sampler that multiplies the
utility by ``ε/Δu`` instead of ``ε/(2Δu)`` once three or more candidates swap their utilities.
Every user sampler below is written as a user writes one, with numpy, and none is
dpaudit's: the declaration is checked against it and certifies on its fresh draws.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dpaudit.auditors.rewriter import RewriterAuditConfig, audit_rewriter, summary
from dpaudit.errors import InvalidArgumentError, MechanismError
from dpaudit.mechanisms.rewriters.candidates import CandidateRewriter
from dpaudit.results import AuditResult
from dpaudit.serialization import dumps
from dpaudit.verdicts import Verdict

PUBLIC = (
    "the movie was good",
    "the film was bad",
    "a quiet story",
    "the plot was thin",
    "good acting",
    "bad acting",
)
PAIRS = [("the movie was good", "the movie was bad", "one word")]
CONFIG = RewriterAuditConfig(samples=200, final_samples=1000, seed=0)


def overlap(document: str, candidate: str) -> float:
    """The user's utility: the share of the candidate's words found in the document."""
    words = set(document.split())
    said = candidate.split()
    return sum(w in words for w in said) / len(said)


def user_sampler(candidates, utility, factor: float):
    """The user's own code: utilities, weights ``exp(factor·u)``, one ``rng.choice`` each."""

    def sample(text: str, n: int, rng: np.random.Generator) -> list[str]:
        made = list(candidates(text) if callable(candidates) else candidates)
        weights = np.exp(factor * np.array([utility(text, c) for c in made]))
        return [made[i] for i in rng.choice(len(made), size=n, p=weights / weights.sum())]

    return sample


def test_the_declared_law_is_the_exponential_mechanism_in_closed_form() -> None:
    em = CandidateRewriter("em", PUBLIC, overlap, (0.0, 1.0), epsilon=2.0)
    row = em.log_row(PAIRS[0][0])
    u = np.array([overlap(PAIRS[0][0], c) for c in PUBLIC])
    expected = u - np.log(np.exp(u).sum())  # ε/(2Δu) = 1
    np.testing.assert_allclose(row[[em.tokenizer.index[c] for c in PUBLIC]], expected, rtol=1e-12)
    assert em.public and em.claim.unit.value == "document" and em.claim.epsilon == 2.0
    assert "a public candidate set" in em.describe()


def test_the_analytic_worst_case_is_attained_by_swapped_utilities() -> None:
    """One candidate at the top under x and the bottom under x′, the rest the reverse."""
    x, x_prime = "x", "x′"

    def swapped(document: str, candidate: str) -> float:
        top = candidate == PUBLIC[0]
        return float(top if document == x else not top)

    em = CandidateRewriter("em", PUBLIC, swapped, (0.0, 1.0), epsilon=3.0)
    (lp_x,), (lp_xp,) = (
        em.token_log_probs(x, [np.array([0])]),
        em.token_log_probs(x_prime, [np.array([0])]),
    )
    assert em.tokenizer.strings[0] == PUBLIC[0]
    assert lp_x[0] - lp_xp[0] == pytest.approx(em.analytic_token_bound(), rel=1e-12)
    assert em.analytic_token_bound() < 3.0


@pytest.mark.parametrize("seed", [0, 1])
def test_a_public_set_written_by_the_user_is_not_flagged(seed: int) -> None:
    em = CandidateRewriter("em", PUBLIC, overlap, (0.0, 1.0), epsilon=2.0)
    config = RewriterAuditConfig(samples=200, final_samples=1000, seed=seed)
    result = audit_rewriter(em, PAIRS, config, sampler=user_sampler(PUBLIC, overlap, 1.0))
    detail = result.detail
    assert detail.declaration_matches, detail.pairs[0].fidelity.describe()
    assert detail.exact_verdict is Verdict.NO_VIOLATION_FOUND
    assert detail.max_exact_token_loss <= em.analytic_token_bound() + 1e-9
    assert result.verdict is not Verdict.VIOLATION


def test_candidates_made_from_the_input_are_an_infinite_loss_and_certified() -> None:
    def from_input(document: str) -> list[str]:  # the document, shouted, and a public line
        return [document, document.upper(), "a quiet story"]

    em = CandidateRewriter("em over its input", from_input, overlap, (0.0, 1.0), epsilon=1.0)
    sampler = user_sampler(from_input, overlap, 0.5)
    result = audit_rewriter(em, PAIRS, CONFIG, sampler=sampler)
    detail = result.detail
    assert detail.declaration_matches
    assert detail.exact_verdict is Verdict.VIOLATION and math.isinf(detail.max_exact_token_loss)
    assert result.verdict is Verdict.VIOLATION  # certified on the sampler's own fresh draws
    assert result.epsilon_lower_bound > 1.0 and "ln p(y|x)" in result.witness.event
    text = summary(result)
    assert "candidates made from the input" in text and "analytic worst case ∞" in text
    assert "largest loss of one rewrite ∞" in text
    again = AuditResult.from_dict(json.loads(dumps(result)))
    assert again.verdict is result.verdict and again.detail.recorded is False


def _swapped_pair_utility(document: str, candidate: str) -> float:
    top = candidate == PUBLIC[0]
    return float(top if document == PAIRS[0][0] else not top)


def test_a_sampler_without_the_factor_two_is_flagged_when_declared_as_it_is() -> None:
    """``exp(ε·u/Δu)``: with six candidates whose utilities swap, a loss of 2ε·(1 − …) > ε."""
    em = CandidateRewriter("em, ε/Δu", PUBLIC, _swapped_pair_utility, (0.0, 1.0), epsilon=2.0,
                           exponent=2.0)  # fmt: skip
    sampler = user_sampler(PUBLIC, _swapped_pair_utility, 2.0)
    result = audit_rewriter(em, PAIRS, CONFIG, sampler=sampler)
    assert result.detail.declaration_matches
    assert result.detail.exact_verdict is Verdict.VIOLATION
    assert 2.0 < result.detail.max_exact_token_loss == pytest.approx(em.analytic_token_bound())
    assert result.verdict is Verdict.VIOLATION


def test_the_same_sampler_declared_as_the_paper_is_never_no_violation_found() -> None:
    em = CandidateRewriter("em", PUBLIC, _swapped_pair_utility, (0.0, 1.0), epsilon=2.0)
    sampler = user_sampler(PUBLIC, _swapped_pair_utility, 2.0)
    result = audit_rewriter(em, PAIRS, CONFIG, sampler=sampler)
    assert not result.detail.declaration_matches
    assert result.verdict is not Verdict.NO_VIOLATION_FOUND


def test_bad_declarations_and_raising_code_are_named() -> None:
    with pytest.raises(InvalidArgumentError, match="utility_range"):
        CandidateRewriter("em", PUBLIC, overlap, (1.0, 0.0), epsilon=1.0)
    with pytest.raises(InvalidArgumentError, match="candidates"):
        CandidateRewriter("em", (), overlap, (0.0, 1.0), epsilon=1.0)
    with pytest.raises(InvalidArgumentError, match="epsilon"):
        CandidateRewriter("em", PUBLIC, overlap, (0.0, 1.0), epsilon=-1.0)

    def broken(document: str, candidate: str) -> float:
        raise ValueError("no scorer")

    em = CandidateRewriter("em", PUBLIC, broken, (0.0, 1.0), epsilon=1.0)
    with pytest.raises(MechanismError, match="utility raised"):
        em.sample("a day", 2, np.random.default_rng(0))
