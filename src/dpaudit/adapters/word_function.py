"""A user's own word mechanism, ``f(word, n, rng) -> n words``, with a metric-DP claim.

Word-level metric-DP mechanisms (CMP and Mahalanobis, Feyisetan et al. WSDM 2020 and Xu et
al. 2020; SanText, Yue et al. ACL Findings 2021; TEM, Carvalho et al. 2023) claim
``Pr[M(w) = y] ≤ e^{ε·d(w, w')}·Pr[M(w') = y]`` for a distance ``d`` between word
embeddings.  :class:`FunctionWordMechanism` wraps the user's function as a
:class:`~dpaudit.mechanisms.word.base.WordMechanism`, so the metric auditor chooses pairs
from the embedding's geometry, checks each against ``ε·d`` and states its power on rare
outputs, exactly as for the built-in mechanisms.

The function is named by its import path (``module:callable``) and resolved in each worker
process, so the mechanism pickles whatever the function closes over.  Its outputs are
read as strings: a vocabulary word is that word's code, the input returned unchanged
(out of vocabulary) and any other string are outcomes of their own, ``None`` or ``""`` is
EMPTY, and a call that raises is the outcome CRASH for all of its draws — a crash is a
finding about the code, never a reason to stop the audit.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

from dpaudit.adapters.callable import import_target, resolve_callable
from dpaudit.analysis.word_embedding import (
    CRASH,
    GLOVE_6B_SIZE,
    WordEmbedding,
    resolve_embedding,
)
from dpaudit.analysis.word_metrics import (
    CallableMetric,
    CosineMetric,
    EuclideanMetric,
    MahalanobisMetric,
    RankMetric,
    WordMetric,
    check_lambda,
)
from dpaudit.claims import MetricClaim
from dpaudit.errors import InvalidArgumentError, MechanismError
from dpaudit.mechanisms.word.base import WordMechanism, encode_outputs
from dpaudit.validation import check_epsilon

__all__ = ["METRIC_FORMS", "FunctionWordMechanism", "parse_metric", "word_mechanism"]

#: What ``--metric`` accepts, in words (for errors and help).
METRIC_FORMS = (
    "euclidean, cosine, rank, mahalanobis or mahalanobis:LAMBDA (λ in [0, 1]), or MODULE:CALLABLE"
)


def parse_metric(spec: str, embedding: WordEmbedding) -> WordMetric:
    """The distance ``--metric`` names, over ``embedding``.

    ``euclidean``: ‖φ(w) − φ(w')‖₂ (CMP, SanText, TEM); ``cosine``: 1 − cos(φ(w), φ(w'));
    ``rank``: each word's place among the other's nearest words; ``mahalanobis[:λ]``: the
    regularised Mahalanobis d_R of Xu et al. 2020 (λ = 0.2 by default);
    ``MODULE:CALLABLE``: the user's ``d(w, w') -> float ≥ 0`` (``inf`` where the claim
    says nothing).
    """
    name, _, arg = spec.strip().partition(":")
    low = name.lower()
    if low == "euclidean" and not arg:
        return EuclideanMetric(embedding)
    if low == "cosine" and not arg:
        return CosineMetric(embedding)
    if low == "rank" and not arg:
        return RankMetric(embedding)
    if low == "mahalanobis":
        try:
            lam = check_lambda(float(arg)) if arg else 0.2
        except (ValueError, InvalidArgumentError):
            raise InvalidArgumentError("--metric", spec, METRIC_FORMS) from None
        return MahalanobisMetric(embedding, lam=lam)
    if arg and low not in ("euclidean", "cosine", "rank", "mahalanobis"):
        return CallableMetric(import_target(spec, "--metric"), name=spec)
    raise InvalidArgumentError("--metric", spec, METRIC_FORMS)


@dataclasses.dataclass(frozen=True, eq=False)
class FunctionWordMechanism(WordMechanism):
    """``target`` (``module:callable``, ``f(word, n, rng) -> n strings``) claiming ``ε·d``.

    ``metric``: the claim's distance (:func:`parse_metric`); ``embedding``: the output
    vocabulary and the geometry the auditor searches pairs in.
    """

    target: str | Callable[..., Any]
    epsilon: float
    embedding: WordEmbedding
    metric: WordMetric

    name: ClassVar[str] = "word function"
    summary: ClassVar[str] = "a user's word mechanism f(word, n, rng) with a metric-DP claim"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        self.function()  # fails at once, naming the target, when it cannot load

    def function(self) -> Callable[..., Any]:
        """The user's function (imported from ``module:callable`` in each process)."""
        if isinstance(self.target, str):
            return resolve_callable(self.target)
        if not callable(self.target):
            raise InvalidArgumentError("function", self.target, "f(word, n, rng) or MOD:CALLABLE")
        return self.target

    def user_code(self) -> Any:
        """The user's word function."""
        return self.function()

    @property
    def label(self) -> str:
        """The function's name as the user wrote it."""
        if isinstance(self.target, str):
            return self.target
        module = getattr(self.target, "__module__", "?")
        return f"{module}:{getattr(self.target, '__qualname__', '?')}"

    @property
    def claim(self) -> MetricClaim:
        """``ε·d``-privacy for the user's distance."""
        return MetricClaim(self.epsilon, self.metric)

    @property
    def vocabulary(self) -> WordEmbedding:
        return self.embedding

    def spec(self) -> dict[str, Any]:
        return {
            "mechanism": self.label,
            "params": {"epsilon": self.epsilon, "metric": self.metric.describe()},
        }

    def sample_codes(self, word: str, n: int, rng: np.random.Generator) -> np.ndarray:
        """One call ``f(word, n, rng)``; strings encoded, a raising call CRASH for all ``n``."""
        fn = self.function()
        try:
            outputs = fn(word, n, rng)
        except Exception:  # a crash is an outcome of its own (and a finding about the code)
            return np.full(n, self.vocabulary.size + CRASH, dtype=np.int64)
        if isinstance(outputs, str):
            outputs = [outputs] if n == 1 else outputs
        try:
            outputs = list(outputs)
        except TypeError:
            raise MechanismError(
                f"{self.label} must return {n} words for n={n}; it returned "
                f"{type(outputs).__name__}"
            ) from None
        if len(outputs) != n:
            raise MechanismError(
                f"{self.label} must return {n} words for n={n}; it returned {len(outputs)}"
            )
        return encode_outputs(self.vocabulary, word, [_text(y) for y in outputs])


def word_mechanism(
    function: str | Callable[..., Any],
    epsilon: float,
    *,
    metric: str = "euclidean",
    embeddings: str = "glove",
    vocabulary_size: int | None = None,
    vocabulary: Sequence[str] | None = None,
) -> FunctionWordMechanism:
    """A user's word mechanism with an ε·d claim, ready for :func:`dpaudit.audit`.

    ``function``: ``f(word, n, rng) -> n words`` (a module-level function, so worker
    processes can import it) or its ``"module:callable"`` path; ``metric``: as
    :func:`parse_metric`; ``embeddings``: ``"glove"`` (GloVe 6B 50-d from the installed
    wheel) or a GloVe-format file, cut to its ``vocabulary_size`` most frequent words, or
    to the words of ``vocabulary`` (each must be in it).
    """
    if vocabulary is not None and vocabulary_size is not None:
        raise InvalidArgumentError("vocabulary", vocabulary, "not beside vocabulary_size")
    if vocabulary is None:
        embedding = resolve_embedding(embeddings, vocabulary_size)
    else:
        whole = GLOVE_6B_SIZE if embeddings in ("", "glove") else None
        embedding = resolve_embedding(embeddings, whole).restricted_to(list(vocabulary))
    return FunctionWordMechanism(function, epsilon, embedding, parse_metric(metric, embedding))


def _text(y: Any) -> Any:
    """An output as the string it stands for (numpy strings; NaN/None as EMPTY)."""
    if isinstance(y, np.str_):
        return str(y)
    if isinstance(y, float) and math.isnan(y):
        return None
    return y
