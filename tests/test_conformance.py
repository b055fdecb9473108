"""The conformance suite: every registered mechanism passes; each kind of defect fails its check."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pytest
from scipy import stats

import dpaudit
from dpaudit.analysis.word_embedding import WordEmbedding
from dpaudit.analysis.word_metrics import EuclideanMetric
from dpaudit.claims import Definition, InputDomain, MetricClaim, PrivacyClaim
from dpaudit.errors import InvalidArgumentError, InvalidTypeError
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.registry import (
    make_mechanism,
    make_word_mechanism,
    mechanism_class,
    mechanism_names,
)
from dpaudit.mechanisms.word.base import WordMechanism
from dpaudit.testing import (
    CheckResult,
    ConformanceError,
    ConformanceReport,
    as_mechanism,
    check_mechanism,
)
from dpaudit.testing.conformance import VECTOR_CHECKS
from dpaudit.testing.word_checks import WORD_CHECKS

UNIT = InputDomain((1,), 0.0, 1.0)
CLAIM = PrivacyClaim(Definition.PURE, 1.0, UNIT)
#: Word mechanisms whose calibration needs a larger ε on the small vocabulary.
WORD_EPSILON = {"truncated-gumbel": 40.0}


def synthetic(v: int = 60, d: int = 4, seed: int = 0) -> WordEmbedding:
    """The small random embedding of tests/test_word_mechanisms.py."""
    rng = np.random.default_rng(seed)
    return WordEmbedding(tuple(f"w{i}" for i in range(v)), rng.normal(size=(v, d)))


def failing(report: ConformanceReport) -> list[str]:
    return [r.name for r in report.failures]


# ------------------------------------------------------------ the good ones
@pytest.mark.parametrize("name", mechanism_names("vector"))
def test_every_registered_mechanism_conforms(name: str) -> None:
    report = check_mechanism(make_mechanism(name, epsilon=1.0))
    assert report.passed
    assert [r.name for r in report.results] == list(VECTOR_CHECKS)


@pytest.mark.parametrize("name", mechanism_names("word"))
def test_every_word_mechanism_conforms(name: str) -> None:
    mech = make_word_mechanism(name, synthetic(), epsilon=WORD_EPSILON.get(name, 5.0))
    report = check_mechanism(mech)
    assert report.passed
    assert [r.name for r in report.results] == list(WORD_CHECKS)


def test_a_correct_user_function_conforms_and_declarations_are_checked() -> None:
    report = check_mechanism(as_mechanism(unit_laplace, CLAIM))
    assert report.passed
    assert report.result("log_prob").skipped  # nothing declared, nothing to check
    laplace = check_mechanism(make_mechanism("laplace", epsilon=1.0))
    assert not laplace.result("log_prob").skipped
    assert not laplace.result("noise_transform").skipped


def test_report_is_typed_and_immutable() -> None:
    report = check_mechanism(make_mechanism("laplace", epsilon=1.0))
    assert isinstance(report.results, tuple)
    assert all(isinstance(r, CheckResult) for r in report.results)
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.results[0].passed = False  # type: ignore[misc]
    with pytest.raises(KeyError, match="no check 'nonsense'"):
        report.result("nonsense")
    assert "all checks passed" in report.describe()


def test_exported_from_the_top_level() -> None:
    assert dpaudit.check_mechanism is check_mechanism


def test_bad_arguments_name_the_argument() -> None:
    with pytest.raises(InvalidTypeError, match="as_mechanism"):
        check_mechanism(unit_laplace)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="declaration_rows"):
        check_mechanism(make_mechanism("laplace", epsilon=1.0), declaration_rows=3)


# ------------------------------------------------------ broken user functions
def unit_laplace(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    return x + rng.laplace(0.0, 1.0, size=(n, 1))


def always_two_rows(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    return x + rng.laplace(0.0, 1.0, size=(2, 1))  # right for n = 2 only


def sometimes_nan(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    y = x + rng.laplace(0.0, 1.0, size=(n, 1))
    y[y > 2.0] = np.nan
    y[0] = np.nan
    return y


def fixed_seed(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    return x + np.random.default_rng(12345).laplace(0.0, 1.0, size=(n, 1))


def os_entropy(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    return x + np.random.default_rng().laplace(0.0, 1.0, size=(n, 1))


def global_numpy(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    return x + np.random.laplace(0.0, 1.0, size=(n, 1))  # seeded by dpaudit per call


def half_domain(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    if x[0] > 0.5:
        raise ValueError("x must be at most 0.5")
    return x + rng.laplace(0.0, 1.0, size=(n, 1))


@pytest.mark.parametrize(
    ("function", "check", "words"),
    [
        (always_two_rows, "output_shape", "expected an array of shape (1, 1)"),
        (sometimes_nan, "finite", "contain NaN"),
        (fixed_seed, "seeding", "fixed seed"),
        (os_entropy, "seeding", "cannot seed"),
        (half_domain, "domain", "contains x = [1]"),
    ],
)
def test_a_broken_function_fails_the_right_check(function: Any, check: str, words: str) -> None:
    report = check_mechanism(as_mechanism(function, CLAIM), raise_on_failure=False)
    assert failing(report) == [check]
    assert words in report.result(check).message
    with pytest.raises(ConformanceError, match=f"{check}: FAIL") as caught:
        check_mechanism(as_mechanism(function, CLAIM))
    assert caught.value.report == report


def test_global_generator_counts_as_seeded() -> None:
    report = check_mechanism(as_mechanism(global_numpy, CLAIM))
    assert "different seeds → different" in report.result("seeding").message


# ------------------------------------------------------- broken subclasses
@dataclass(frozen=True)
class _UnitMechanism(Mechanism, abstract=True):
    """A one-coordinate mechanism on [0, 1] claiming ε-DP; subclasses break one thing."""

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim(Definition.PURE, self.epsilon, UNIT)

    @property
    def output_shape(self) -> tuple[int, ...]:
        return (1,)

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return x + rng.laplace(0.0, 1.0 / self.epsilon, size=(n, 1))


@dataclass(frozen=True)
class WrongWidth(_UnitMechanism):
    """Declares the density of Lap(1/ε) but samples Lap(2/ε)."""

    name: ClassVar[str] = "wrong-width"

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return x + rng.laplace(0.0, 2.0 / self.epsilon, size=(n, 1))

    def log_prob(self, x: np.ndarray, outputs: np.ndarray) -> np.ndarray:
        b = 1.0 / self.epsilon
        return (-np.abs(outputs - x) / b - np.log(2 * b)).reshape(-1)


@dataclass(frozen=True)
class WrongTransform(_UnitMechanism):
    """Declares the transform of Lap(3/ε) but samples Lap(1/ε)."""

    name: ClassVar[str] = "wrong-transform"

    def noise_from_uniform(self, u: np.ndarray) -> np.ndarray:
        return stats.laplace.ppf(u, scale=3.0 / self.epsilon)


@dataclass(frozen=True)
class WrongRows(_UnitMechanism):
    """Returns rows of two values while declaring one."""

    name: ClassVar[str] = "wrong-rows"

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return rng.laplace(size=(n, 2))


@dataclass(frozen=True)
class NotBits(_UnitMechanism):
    """Declares binary outputs, returns reals."""

    name: ClassVar[str] = "not-bits"
    output_kind: ClassVar[str] = "binary"


@dataclass(frozen=True)
class DeclaredExternal(_UnitMechanism):
    """An OS-entropy source, declared."""

    name: ClassVar[str] = "declared-external"
    externally_seeded: ClassVar[bool] = True

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return os_entropy(x, n, rng)


@dataclass(frozen=True)
class MetricOnVectors(_UnitMechanism):
    """Claims metric DP without a metric."""

    name: ClassVar[str] = "metric-on-vectors"

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim(Definition.METRIC, self.epsilon, UNIT)


@dataclass(frozen=True)
class CorruptClaim(_UnitMechanism):
    """A claim with one field set past the constructor's check, as a bug might."""

    name: ClassVar[str] = "corrupt-claim"
    field: str = "epsilon"
    value: float = -1.0

    @property
    def claim(self) -> PrivacyClaim:
        claim = PrivacyClaim(Definition.APPROXIMATE, self.epsilon, UNIT)
        object.__setattr__(claim, self.field, self.value)
        return claim


@pytest.mark.parametrize(
    ("mechanism", "check", "words"),
    [
        (WrongWidth(1.0), "log_prob", "declared density does not match"),
        (WrongTransform(1.0), "noise_transform", "declared transform does not match"),
        (WrongRows(1.0), "output_shape", "each of output_shape (1,)"),
        (NotBits(1.0), "dtype", "output_kind 'binary'"),
        (MetricOnVectors(1.0), "claim", "use MetricClaim"),
        (CorruptClaim(1.0), "claim", "claimed ε = -1.0: expected a finite number > 0"),
        (CorruptClaim(1.0, "delta", 1.5), "claim", "claimed δ = 1.5: expected a number in [0, 1)"),
    ],
    ids=["density", "transform", "shape", "kind", "metric-claim", "epsilon", "delta"],
)
def test_a_broken_mechanism_fails_the_right_check(
    mechanism: Mechanism, check: str, words: str
) -> None:
    report = check_mechanism(mechanism, raise_on_failure=False)
    assert failing(report) == [check]
    assert words in report.result(check).message
    assert "FAIL" in report.describe()


def test_a_declared_unseedable_source_is_reported_not_failed() -> None:
    result = check_mechanism(DeclaredExternal(1.0)).result("seeding")
    assert result.passed and "not bit-reproducible" in result.message


def test_checks_after_a_failure_are_skipped_and_say_why() -> None:
    report = check_mechanism(WrongRows(1.0), raise_on_failure=False)
    assert [r.name for r in report.results] == list(VECTOR_CHECKS)
    later = report.results[VECTOR_CHECKS.index("dtype") :]
    assert all(r.skipped and "'output_shape' failed" in r.message for r in later)


# ------------------------------------------------------ broken word mechanisms
_SANTEXT = mechanism_class("santext")


@dataclass(frozen=True, eq=False)
class UniformClaimSanText(_SANTEXT):  # type: ignore[misc, valid-type]
    """SanText's sampler with a uniform declared output law."""

    name: ClassVar[str] = "uniform-claim-santext"

    def output_log_probs(self, word: str) -> np.ndarray:
        v = self.embedding.size
        lp = np.full(self.n_codes, -np.inf)
        lp[:v] = -np.log(v)
        return lp


class _WordBase(WordMechanism, abstract=True):
    """A word mechanism over the synthetic vocabulary; subclasses break one thing."""

    def __init__(self) -> None:
        self.embedding = synthetic()

    @property
    def claim(self) -> Any:
        return MetricClaim(1.0, EuclideanMetric(self.embedding))

    @property
    def vocabulary(self) -> WordEmbedding:
        return self.embedding

    def sample_codes(self, word: str, n: int, rng: np.random.Generator) -> np.ndarray:
        return rng.integers(0, self.embedding.size, n)


class FixedSeedWords(_WordBase):
    name: ClassVar[str] = "fixed-seed-words"

    def sample_codes(self, word: str, n: int, rng: np.random.Generator) -> np.ndarray:
        return np.random.default_rng(7).integers(0, self.embedding.size, n)


class CodesOutOfRange(_WordBase):
    name: ClassVar[str] = "codes-out-of-range"

    def sample_codes(self, word: str, n: int, rng: np.random.Generator) -> np.ndarray:
        return rng.integers(0, self.embedding.size + 100, n)


class PlainClaimWords(_WordBase):
    name: ClassVar[str] = "plain-claim-words"

    @property
    def claim(self) -> Any:
        return CLAIM


@pytest.mark.parametrize(
    ("mechanism", "check", "words"),
    [
        (UniformClaimSanText(5.0, synthetic()), "log_prob", "declared density does not match"),
        (FixedSeedWords(), "seeding", "fixed seed"),
        (CodesOutOfRange(), "dtype", "not integers in [0, 64)"),
        (PlainClaimWords(), "claim", "expected a dpaudit.claims.MetricClaim"),
    ],
    ids=["density", "seed", "codes", "claim"],
)
def test_a_broken_word_mechanism_fails_the_right_check(
    mechanism: WordMechanism, check: str, words: str
) -> None:
    report = check_mechanism(mechanism, raise_on_failure=False)
    assert failing(report) == [check]
    assert words in report.result(check).message


def test_docstring_example_runs() -> None:
    import doctest

    import dpaudit.testing.conformance

    failures, tried = doctest.testmod(dpaudit.testing.conformance, verbose=False)
    assert tried >= 2 and failures == 0
