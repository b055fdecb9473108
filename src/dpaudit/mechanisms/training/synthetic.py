"""DP synthetic text as a training mechanism: private texts in, a released corpus out.

A DP synthetic-text generator ("we release 1000 synthetic reviews at ε = 4") makes a claim
about the map ``private texts ↦ released corpus``: adding or removing one private text
changes the corpus' distribution by at most the claim.  That is the training contract of
:mod:`~dpaudit.mechanisms.training.contract` with the released corpus as the "model", so the
one-run and multi-run canary audits apply unchanged: canaries (random-token texts, held-out
sentences) go into the private set, and a score computed *on the released corpus only*
says how much each canary echoes in it (Meeus, Wutschitz, Tople, Shokri et al., "The
Canary's Echo: Auditing Privacy Risks of LLM-Generated Synthetic Text", ICML 2025).

:class:`SyntheticTextTraining` is that contract for any generator
``generate(private_texts, rng) -> texts``; :class:`CallableSyntheticText` wraps a user's
function, :class:`~dpaudit.mechanisms.training.dp_bigram.DPBigramText` is the built-in DP
generator and :class:`~dpaudit.adapters.invink.InvisibleInkSynthesizer` runs InvisibleInk.

Scores (:func:`corpus_scores`), all high where the canary looks included, computed on
case-folded whitespace tokens with sentence boundaries ``<s>`` and ``</s>`` (a leak only in
letter case needs a score of the user's own):

``echo``
    The largest fraction of the canary's distinct bigrams that one released text contains:
    verbatim reuse, the signal of a generator that copies (the Canary's Echo's n-gram
    overlap, taken per text).
``bigram``
    The canary's mean log-probability per bigram under an add-one-smoothed bigram model
    fitted to the whole released corpus (their model-based membership score, with the
    smallest model that can be fitted on the corpus without training anything).
``novel``
    The fraction of the canary's bigrams that no base text holds (sentence boundaries
    aside) which occur anywhere in the released corpus: the signal of a generator whose
    corpus carries its private set's rare n-grams one by one, wherever they land, and the
    score the ``echo`` canaries (:mod:`dpaudit.auditors.training.canaries`) are made for.

An audit tries each, and pays for each (Bonferroni).  What a bound assumes is what the
canary audits assume (:mod:`dpaudit.auditors.training.one_run`): independent inclusion or
independent runs, and nothing about the generator.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
from abc import abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

from dpaudit.errors import InvalidTypeError, MechanismError
from dpaudit.mechanisms.training.contract import TrainingMechanism

#: The named scores of :func:`corpus_scores`, in column order.
SYNTHETIC_SCORES = ("echo", "bigram", "novel")
START, END = "<s>", "</s>"


def text_of(record: Any) -> str:
    """The text of a private record: a string, or the first field of ``(text, label)``."""
    if isinstance(record, str):
        return record
    if isinstance(record, tuple) and record and isinstance(record[0], str):
        return record[0]
    raise InvalidTypeError("record", record, "a str or a (text, label) record")


def checked_texts(records: Any) -> tuple[Any, ...]:
    """``records`` as a tuple, each a text or a ``(text, label)`` record, else an error."""
    if isinstance(records, str) or not isinstance(records, Sequence):
        raise InvalidTypeError("records", records, "a sequence of texts")
    out = tuple(records)
    for record in out:
        text_of(record)
    return out


def tokens(text: str) -> list[str]:
    """Case-folded whitespace tokens between ``<s>`` and ``</s>``."""
    return [START, *text.casefold().split(), END]


def bigrams(text: str) -> list[tuple[str, str]]:
    """The bigrams of :func:`tokens`, in order (repeats kept)."""
    t = tokens(text)
    return list(itertools.pairwise(t))


@dataclasses.dataclass(frozen=True, eq=False)
class SyntheticCorpus:
    """What a synthetic-text generator releases: its texts, in order."""

    texts: tuple[str, ...]


def corpus_scores(
    corpus: SyntheticCorpus,
    canaries: Sequence[Any],
    base: Sequence[Any] = (),
) -> dict[str, np.ndarray]:
    """:data:`SYNTHETIC_SCORES` (see the module docstring) of each canary on ``corpus``;
    ``base``: the private texts the canaries joined, whose bigrams ``novel`` leaves out."""
    pair_counts: collections.Counter[tuple[str, str]] = collections.Counter()
    postings: dict[tuple[str, str], list[int]] = collections.defaultdict(list)
    for index, text in enumerate(corpus.texts):
        grams = bigrams(text)
        pair_counts.update(grams)
        for gram in set(grams):
            postings[gram].append(index)
    first_counts: collections.Counter[str] = collections.Counter()
    for (a, _), count in pair_counts.items():
        first_counts[a] += count
    vocabulary = len({w for gram in pair_counts for w in gram}) + 1
    seen = {g for r in base for g in bigrams(text_of(r))}
    echo = np.zeros(len(canaries))
    model = np.zeros(len(canaries))
    novel = np.zeros(len(canaries))
    for i, canary in enumerate(canaries):
        grams = bigrams(text_of(canary))
        distinct = set(grams)
        shared: collections.Counter[int] = collections.Counter()
        for gram in distinct:
            shared.update(postings.get(gram, ()))
        echo[i] = max(shared.values(), default=0) / len(distinct)
        logs = [
            np.log((pair_counts[gram] + 1.0) / (first_counts[gram[0]] + vocabulary))
            for gram in grams
        ]
        model[i] = float(np.mean(logs))
        own = [g for g in distinct - seen if START not in g and END not in g]
        novel[i] = sum(g in pair_counts for g in own) / len(own) if own else 0.0
    return {"echo": echo, "bigram": model, "novel": novel}


def checked_corpus(texts: Any, who: str) -> SyntheticCorpus:
    """``texts`` as a :class:`SyntheticCorpus`, or a :class:`MechanismError` saying why not."""
    if isinstance(texts, str) or not isinstance(texts, Sequence):
        raise MechanismError(f"{who} returned {type(texts).__name__}, not a list of texts")
    bad = [i for i, t in enumerate(texts) if not isinstance(t, str)]
    if bad:
        raise MechanismError(
            f"{who} returned a {type(texts[bad[0]]).__name__} at position {bad[0]}, not a str"
        )
    return SyntheticCorpus(tuple(texts))


class SyntheticTextTraining(TrainingMechanism):
    """A DP synthetic-text generator under the training contract (black box: the corpus)."""

    name: ClassVar[str] = "synthetic-text"
    #: Random-token texts: a label means nothing to a generator, and high-perplexity canaries
    #: are the ones whose echo a corpus score can see (The Canary's Echo).
    default_canary_kind: ClassVar[str | None] = "random-tokens"

    @abstractmethod
    def generate(self, private_texts: Sequence[str], rng: np.random.Generator) -> Sequence[str]:
        """The released corpus for ``private_texts``, drawing randomness from ``rng`` only."""

    def train(self, dataset: Any, rng: np.random.Generator) -> SyntheticCorpus:
        """Generate from ``dataset`` (base plus included canaries); the released corpus."""
        if not isinstance(rng, np.random.Generator):
            raise InvalidTypeError("rng", rng, "a numpy.random.Generator")
        texts = [text_of(r) for r in dataset]
        return checked_corpus(self.generate(texts, rng), self.display_name)

    @property
    def display_name(self) -> str:
        """How errors and results name the generator."""
        return self.name

    def scores(self, model: Any, records: Sequence[Any]) -> dict[str, np.ndarray]:
        """:func:`corpus_scores` of ``records`` on the released corpus (``novel`` against
        the generator's base texts)."""
        if not isinstance(model, SyntheticCorpus):
            raise InvalidTypeError("model", model, "a SyntheticCorpus from train")
        return corpus_scores(model, list(records), self.base)

    def score(self, model: Any, records: Sequence[Any]) -> np.ndarray:
        """The ``echo`` score (the multi-run game's default)."""
        return self.scores(model, records)["echo"]


@dataclasses.dataclass(frozen=True, eq=False)
class CallableSyntheticText(SyntheticTextTraining):
    """A user's ``generate(private_texts, rng) -> list of str`` with its claim.

    ``base_records``: the private texts (strings or ``(text, label)`` records) the canaries
    join; ``declared_claim``: what the generator's analysis states, per private text
    (``dpaudit.claims.ApproxDP(4, 1e-5)``, a ``GaussianDP`` ...).
    """

    generate_function: Callable[[Sequence[str], np.random.Generator], Sequence[str]]
    base_records: Sequence[Any]
    declared_claim: Any
    label: str = "synthetic text"

    reference: ClassVar[str] = "the user's own synthetic-text generator"

    def __post_init__(self) -> None:
        if not callable(self.generate_function):
            raise InvalidTypeError("generate", self.generate_function, "a callable")

    @property
    def claim(self) -> Any:
        return self.declared_claim

    @property
    def base(self) -> Sequence[Any]:
        return self.base_records

    @property
    def display_name(self) -> str:
        return self.label

    def with_base(self, records: Sequence[Any]) -> CallableSyntheticText:
        return dataclasses.replace(self, base_records=tuple(records))

    def generate(self, private_texts: Sequence[str], rng: np.random.Generator) -> Sequence[str]:
        return self.generate_function(private_texts, rng)

    def spec(self) -> dict[str, Any]:
        return {"mechanism": self.label, "params": {"records": len(self.base_records)}}

    def user_code(self) -> Any:
        return self.generate_function


__all__ = [
    "SYNTHETIC_SCORES",
    "CallableSyntheticText",
    "SyntheticCorpus",
    "SyntheticTextTraining",
    "bigrams",
    "checked_corpus",
    "checked_texts",
    "corpus_scores",
    "text_of",
    "tokens",
]
