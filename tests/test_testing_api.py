"""assert_no_violation: passes correct mechanisms, fails broken ones with a witness."""

from __future__ import annotations

import doctest
import time

import numpy as np
import pytest

import dpaudit.testing
from dpaudit.analysis.word_embedding import WordEmbedding
from dpaudit.claims import Definition, InputDomain, PrivacyClaim
from dpaudit.mechanisms import make_mechanism
from dpaudit.mechanisms.output_grid import round_to_grid
from dpaudit.testing import PrivacyViolationError, assert_no_violation

UNIT = InputDomain((1,), 0.0, 1.0)


def laplace_1(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """x + Lap(1): exactly 1-DP on [0, 1]."""
    return round_to_grid(x + rng.laplace(0.0, 1.0, size=(n, x.size)), 1.0)


def test_correct_function_passes_quickly() -> None:
    start = time.perf_counter()
    result = assert_no_violation(laplace_1, PrivacyClaim(Definition.PURE, 1.0, UNIT))
    seconds = time.perf_counter() - start
    assert not result.violation and result.epsilon_lower_bound <= 1.0
    assert result.samples["final"] == 2 * dpaudit.testing.DEFAULT_SAMPLES
    assert seconds < 30  # ≈1 s on an idle core; generous for a loaded CI machine


def test_overclaimed_function_raises_assertion_error_with_witness() -> None:
    claim = PrivacyClaim(Definition.PURE, 0.2, UNIT)  # true ε is 1
    with pytest.raises(AssertionError) as info:
        assert_no_violation(laplace_1, claim)
    err = info.value
    assert isinstance(err, PrivacyViolationError)
    assert err.result.violation and err.result.epsilon_lower_bound > 0.2
    w = err.witness
    assert w is not None and {w.x, w.x_prime} <= {(0.0,), (1.0,)}
    assert w.p1.bound > np.exp(0.2) * w.p2.bound  # the witness itself refutes ε = 0.2
    message = str(err)
    assert message.startswith("violation:") and "witness:" in message and "seed 0" in message


def test_lambda_and_registered_mechanism_with_numeric_claim() -> None:
    claim = PrivacyClaim(Definition.PURE, 2.0, UNIT)
    half = lambda x, n, rng: round_to_grid(x + rng.laplace(0, 0.5, (n, 1)), 0.5)  # noqa: E731
    assert_no_violation(half, claim, samples=5000)
    lap = make_mechanism("laplace", epsilon=1.0)
    assert not assert_no_violation(lap).violation
    with pytest.raises(PrivacyViolationError):
        assert_no_violation(lap, 0.3)


def test_identity_is_flagged_with_a_bound_limited_by_the_sample_size() -> None:
    with pytest.raises(PrivacyViolationError) as info:
        assert_no_violation(make_mechanism("identity", epsilon=1.0))
    assert info.value.result.epsilon_lower_bound > 5.0


def test_deterministic_for_a_fixed_seed() -> None:
    claim = PrivacyClaim(Definition.PURE, 1.0, UNIT)
    a = assert_no_violation(laplace_1, claim, samples=4000, seed=7)
    b = assert_no_violation(laplace_1, claim, samples=4000, seed=7)
    assert a.epsilon_lower_bound == b.epsilon_lower_bound


@pytest.mark.parametrize(
    ("kwargs", "error", "argument"),
    [
        ({"mechanism": 3}, TypeError, "mechanism"),
        ({"mechanism": laplace_1}, TypeError, "claim"),
        ({"mechanism": laplace_1, "claim": 1.0}, TypeError, "claim"),
        ({"mechanism": "laplace", "claim": 1.0}, TypeError, "mechanism"),
        ({"samples": 0}, ValueError, "samples"),
        ({"confidence": 1.5}, ValueError, "confidence"),
        ({"seed": -1}, ValueError, "seed"),
        ({"claim": -1.0}, ValueError, "claim"),
        ({"workers": 0}, ValueError, "workers"),
    ],
)
def test_bad_arguments_name_the_argument(kwargs: dict, error: type, argument: str) -> None:
    args = {"mechanism": make_mechanism("laplace", epsilon=1.0), **kwargs}
    with pytest.raises(error, match=argument):
        assert_no_violation(**args)


def test_docstring_examples_run() -> None:
    failures, tried = doctest.testmod(dpaudit.testing, verbose=False)
    assert tried >= 4 and failures == 0


# -------------------------------------- inconclusive audits warn; word mechanisms (issue 25)
def _words(v: int, scale: float) -> WordEmbedding:
    rng = np.random.default_rng(0)
    return WordEmbedding(tuple(f"w{i}" for i in range(v)), scale * rng.normal(size=(v, 4)))


def test_an_inconclusive_black_box_audit_warns_with_what_it_could_see() -> None:
    """ε = 12 at 2·10⁴ final samples: no bound above ≈ 8 can be certified at all."""
    from dpaudit.mechanisms import make_mechanism
    from dpaudit.testing import InconclusiveAuditWarning

    lap = make_mechanism("laplace", epsilon=12.0)
    with pytest.warns(InconclusiveAuditWarning, match="What this audit could see"):
        result = assert_no_violation(lap, samples=10_000)
    assert result.verdict_text.startswith("inconclusive") and not result.violation


def test_word_mechanisms_are_audited_pair_by_pair() -> None:
    import warnings

    from dpaudit.mechanisms.registry import make_word_mechanism
    from dpaudit.testing import InconclusiveAuditWarning

    # Six words, loose claim: enough power, a plain pass without a warning.
    mech = make_word_mechanism("santext", _words(6, 0.5), epsilon=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", InconclusiveAuditWarning)
        result = assert_no_violation(mech, samples=20_000, final_samples=100_000, seed=3)
    assert result.verdict_text.startswith("no violation found")
    # Forty words at small sizes: rare outputs it could not resolve, so it warns.
    mech = make_word_mechanism("santext", _words(40, 1.0), epsilon=3.0)
    with pytest.warns(InconclusiveAuditWarning, match="power: outputs of probability"):
        assert_no_violation(mech, samples=2_000, final_samples=10_000, pairs=[("w0", "w1")])


def test_a_word_mechanism_that_breaks_its_metric_claim_raises() -> None:
    from dpaudit.analysis.word_metrics import EuclideanMetric
    from dpaudit.claims import MetricClaim
    from dpaudit.mechanisms.word.santext import SanText

    class HalfClaim(SanText):
        name = "santext-half-claim-ci"

        @property
        def claim(self) -> MetricClaim:
            return MetricClaim(self.epsilon / 2, EuclideanMetric(self.embedding))

    with pytest.raises(PrivacyViolationError, match=r"violation: for .* ε·d") as info:
        assert_no_violation(HalfClaim(4.0, _words(40, 1.0)), samples=20_000)
    assert info.value.witness is not None and "ratio" in str(info.value)
