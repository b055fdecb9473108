"""The interface of word-level mechanisms: a word in, a word out, a metric-DP claim.

A word mechanism maps an input word ``w`` (a string, possibly out of
vocabulary or capitalised) to an output word.  For auditing, outputs are
*codes*: ``0..V−1`` for the words of :attr:`WordMechanism.vocabulary`, and
:data:`N_SPECIAL` further codes for outcomes that are not a vocabulary word,
each counted as an outcome of its own:

* ``V + UNCHANGED`` — the input returned as it is, the input not being a
  vocabulary word (how published code treats out-of-vocabulary words);
* ``V + OTHER`` — some other string that is not in the vocabulary;
* ``V + CRASH`` — the mechanism raised an exception for this draw;
* ``V + EMPTY`` — ``None`` or the empty string.

Two ways to implement one:

* :class:`WordMechanism` directly — implement :meth:`WordMechanism.sample_codes`,
  vectorised (the built-in mechanisms do);
* :class:`StringWordMechanism` — implement :meth:`StringWordMechanism.perturb`
  for one draw, returning a string: the base loops, turns exceptions into
  ``CRASH`` and encodes the strings (for adapters of other libraries).

Mechanisms are picklable values: audits send them to worker processes.
"""

from __future__ import annotations

import dataclasses
from abc import abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from dpaudit.analysis.word_embedding import (
    CRASH,
    EMPTY,
    N_SPECIAL,
    OTHER,
    SPECIAL_NAMES,
    UNCHANGED,
    WordEmbedding,
    outcome_name,
)
from dpaudit.analysis.word_metrics import EuclideanMetric
from dpaudit.claims import MetricClaim
from dpaudit.errors import InvalidArgumentError, InvalidTypeError
from dpaudit.mechanisms.base import MechanismContract
from dpaudit.validation import check_epsilon, check_int

__all__ = [
    "CRASH",
    "EMPTY",
    "N_SPECIAL",
    "OTHER",
    "SPECIAL_NAMES",
    "UNCHANGED",
    "EmbeddingWordMechanism",
    "StringWordMechanism",
    "WordMechanism",
    "encode_outputs",
    "outcome_name",
    "sample_from_log_probs",
    "sample_multivariate_laplace",
    "sample_unit_direction",
]


def encode_outputs(vocabulary: WordEmbedding, word: str, outputs: Sequence[Any]) -> np.ndarray:
    """Codes of output strings (``None`` → EMPTY; see the module docstring)."""
    v = vocabulary.size
    out = np.empty(len(outputs), dtype=np.int64)
    in_vocab = word in vocabulary
    for i, y in enumerate(outputs):
        if y is None or (isinstance(y, str) and not y):
            out[i] = v + EMPTY
            continue
        j = vocabulary.index(y) if isinstance(y, str) else -1
        if j >= 0:
            out[i] = j
        elif y == word and not in_vocab:
            out[i] = v + UNCHANGED
        else:
            out[i] = v + OTHER
    return out


class WordMechanism(MechanismContract, abstract=True):
    """Base of word-level mechanisms (see the module docstring)."""

    output_kind: ClassVar[str] = "word"
    #: Draws per audit work unit (None: the auditor's default); slow adapters set it small
    #: so that units stay short, resumable and spread over the workers.
    unit_samples: ClassVar[int | None] = None
    #: (selection, final) draws per input when the user gives none (None: the auditor's).
    default_samples: ClassVar[tuple[int, int] | None] = None

    @property
    @abstractmethod
    def claim(self) -> MetricClaim:
        """The metric-DP claim (use a :class:`PartitionMetric` for ε-DP within sets)."""

    @property
    @abstractmethod
    def vocabulary(self) -> WordEmbedding:
        """Output words (codes ``0..V−1``) and the geometry used to search input pairs."""

    @abstractmethod
    def sample_codes(self, word: str, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` independent outputs for input ``word`` as int64 codes in ``[0, V + N_SPECIAL)``."""

    # ------------------------------------------------------------ optional
    @property
    def radius(self) -> float | None:
        """A truncation radius in the claim's distance (TEM's γ), if the mechanism has one."""
        return None

    def output_log_probs(self, word: str) -> np.ndarray | None:
        """Exact log-probabilities of all ``V + N_SPECIAL`` codes for ``word``, if computable."""
        return None

    def spec(self) -> dict[str, Any]:
        """JSON-ready description (name and parameters)."""
        return {"mechanism": self.name}

    @property
    def n_codes(self) -> int:
        """``V + N_SPECIAL``."""
        return self.vocabulary.size + N_SPECIAL


class StringWordMechanism(WordMechanism, abstract=True):
    """A word mechanism given as one draw on strings (:meth:`perturb`); the base encodes."""

    @abstractmethod
    def perturb(self, word: str, rng: np.random.Generator) -> Any:
        """One output for ``word`` (a string; ``None`` counts as EMPTY)."""

    def sample_codes(self, word: str, n: int, rng: np.random.Generator) -> np.ndarray:
        """Calls :meth:`perturb` ``n`` times; an exception is the outcome CRASH."""
        outs: list[Any] = []
        crashed = np.zeros(n, dtype=bool)
        for i in range(n):
            try:
                outs.append(self.perturb(word, rng))
            except Exception:  # a crash is an outcome of its own
                outs.append(None)
                crashed[i] = True
        codes = encode_outputs(self.vocabulary, word, outs)
        codes[crashed] = self.vocabulary.size + CRASH
        return codes


@dataclasses.dataclass(frozen=True, eq=False)
class EmbeddingWordMechanism(WordMechanism, abstract=True):
    """Built-in mechanisms: ``epsilon`` and an embedding; out-of-vocabulary input → UNCHANGED.

    Subclasses implement :meth:`_sample_rows` for a vocabulary row; an input
    word without a vector is returned unchanged (code ``V + UNCHANGED``), as in
    the published code of this family.  That input is not covered by the claim
    (its distance to every word is ``inf``).
    """

    epsilon: float
    embedding: WordEmbedding

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        if not isinstance(self.embedding, WordEmbedding):
            raise InvalidTypeError("embedding", self.embedding, "a WordEmbedding")

    @property
    def vocabulary(self) -> WordEmbedding:
        """The embedding's words are the outputs."""
        return self.embedding

    @property
    def claim(self) -> MetricClaim:
        """``ε·d_euc``-privacy over the embedding (the family's usual claim)."""
        return MetricClaim(self.epsilon, EuclideanMetric(self.embedding))

    def sample_codes(self, word: str, n: int, rng: np.random.Generator) -> np.ndarray:
        """Vectorised: :meth:`_sample_rows` for a vocabulary word, UNCHANGED otherwise."""
        n = check_int("n", n, minimum=1)
        if not isinstance(word, str):
            raise InvalidTypeError("word", word, "a string")
        i = self.embedding.index(word)
        if i < 0:
            return np.full(n, self.embedding.size + UNCHANGED, dtype=np.int64)
        return self._sample_rows(i, n, rng)

    @abstractmethod
    def _sample_rows(self, i: int, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` output codes for vocabulary row ``i``."""

    def spec(self) -> dict[str, Any]:
        """Name, parameters and the embedding's description."""
        params = {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if f.name != "embedding" and not f.name.startswith("_")
        }
        return {"mechanism": self.name, "params": params, "embedding": self.embedding.describe()}


def sample_unit_direction(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """``n`` points uniform on the unit sphere of R^d (normalised standard normals)."""
    z = rng.standard_normal((n, d))
    norm = np.sqrt(np.einsum("ij,ij->i", z, z))
    norm[norm == 0] = 1.0
    return z / norm[:, None]


def sample_multivariate_laplace(
    rng: np.random.Generator, n: int, d: int, epsilon: float
) -> np.ndarray:
    """``n`` draws of the noise with density ∝ ``exp(−ε‖z‖₂)`` in R^d.

    Feyisetan et al., WSDM 2020, the sampling step of Alg. 1: a direction
    uniform on the sphere times a radius ``‖z‖ ~ Gamma(d, 1/ε)`` (the radial law of that density).
    """
    radius = rng.gamma(shape=d, scale=1.0 / epsilon, size=n)
    return sample_unit_direction(rng, n, d) * radius[:, None]


def sample_from_log_probs(log_p: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` codes drawn from the categorical distribution ``exp(log_p)`` (inverse CDF)."""
    p = np.exp(log_p - np.max(log_p))
    cdf = np.cumsum(p)
    cdf /= cdf[-1]
    u = rng.random(n)
    out = np.searchsorted(cdf, u, side="right").astype(np.int64)
    return np.minimum(out, len(cdf) - 1)


def check_words(name: str, words: Sequence[str]) -> tuple[str, ...]:
    """A tuple of strings, or an error naming ``name``."""
    if isinstance(words, str) or not all(isinstance(w, str) for w in words):
        raise InvalidArgumentError(name, words, "a list of words (strings)")
    return tuple(words)
