"""A DP synthetic-text generator: a bigram model fitted under the Gaussian mechanism, sampled.

:class:`DPBigramText` is the smallest generator "DP-fine-tuned" on private texts that
releases a corpus, so the synthetic-text audit (:mod:`~dpaudit.mechanisms.training.synthetic`)
runs in seconds on two cores:

1. every private text contributes the indicator of each of its first ``max_bigrams``
   *distinct* bigrams (case-folded tokens of a fixed vocabulary, with ``<s>``/``</s>``) to a
   ``V × V`` count table, so adding or removing one text moves the table by at most
   ``√max_bigrams`` in L2;
2. the Gaussian mechanism adds ``N(0, (z·√max_bigrams)²)`` to *every* cell (``z`` the
   noise multiplier): the table is exactly ``1/z``-GDP (Dong, Roth & Su, JRSS-B 2022,
   Thm. 2.7) for add/remove-one-text neighbours;
3. cells below ``threshold`` noise standard deviations are dropped, and ``texts`` chains are
   sampled from the remaining counts, each row normalised (post-processing, so the
   corpus is ``1/z``-GDP too; the threshold is what keeps noise-only cells out).

The vocabulary (the case-folded tokens of the base texts, ``<unk>`` for others) and the
sampling are fixed before any canary is seen, and the same in both worlds of an audit.

``flaw`` plants one of two bugs of hand-written DP n-gram releases; the claim stays ``1/z``:

``noise-on-observed``
    Noise is added only to the bigrams that occur in the data (``for gram, count in
    counts.items()``) and no threshold is applied: a bigram no private text holds can
    never be released, so the corpus' support depends on the data and the loss is
    unbounded (the data-dependent key set that DP releases of counts must avoid: Korolova,
    Kenthapadi, Mishra & Ntoulas, WWW 2009).
``unscaled-noise``
    Noise ``N(0, z²)``, missing the sensitivity ``√max_bigrams``: the truth is
    ``√max_bigrams/z``-GDP.

Speed (measured 2026-12-02 on a 2-core container): one training run (count, noise the
2731 × 2731 table, sample) on the 1000 bundled sentences plus 1000 canaries takes about
0.12 s releasing 1000 texts and 0.25 s releasing 4000.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from dpaudit.claims.curves import GaussianDP
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.training.contract import TextRecord
from dpaudit.mechanisms.training.synthetic import (
    END,
    START,
    SyntheticTextTraining,
    checked_texts,
    text_of,
    tokens,
)
from dpaudit.text.corpus import default_corpus
from dpaudit.validation import check_int, check_positive

#: Planted flaws of :class:`DPBigramText` (see the module docstring).
BIGRAM_FLAWS = ("none", "noise-on-observed", "unscaled-noise")
UNKNOWN = "<unk>"


@functools.lru_cache(maxsize=1)
def _default_records() -> tuple[TextRecord, ...]:
    corpus = default_corpus()
    labels = corpus.labels if corpus.labels is not None else np.zeros(len(corpus), np.int64)
    return tuple(TextRecord(s, int(y)) for s, y in zip(corpus.sentences, labels, strict=True))


@dataclass(frozen=True, eq=False)
class DPBigramText(SyntheticTextTraining):
    """A DP synthetic-text generator: a Gaussian-noised bigram table, thresholded and sampled.

    It releases ``texts`` sentences.

    ``records``: the private texts (default: the 1000 bundled sentences; labels unused);
    ``noise_multiplier`` z > 0 (the claim is ``1/z``-GDP); ``max_bigrams`` ≥ 1 distinct
    bigrams counted per text; ``threshold`` ≥ 0 noise standard deviations a cell must
    exceed; ``texts`` ≥ 1 released sentences of at most ``max_length`` ≥ 1 tokens;
    ``flaw`` one of :data:`BIGRAM_FLAWS`; ``delta`` in (0, 1), where an audit reads the
    GDP curve for its (ε, δ) bound when it is given no other.
    """

    records: tuple[Any, ...] = field(default_factory=_default_records, metadata={"spec": False})
    noise_multiplier: float = 1.0
    max_bigrams: int = 16
    threshold: float = 3.0
    texts: int = 1000
    max_length: int = 16
    flaw: str = "none"
    delta: float = 1e-5

    name: ClassVar[str] = "dp-bigram"
    reference: ClassVar[str] = (
        "Gaussian mechanism on bigram counts (Dong, Roth & Su 2022, Thm. 2.7), thresholded "
        "and sampled; audited as in The Canary's Echo (Meeus et al., ICML 2025)"
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "records", checked_texts(self.records))
        if not self.records:
            raise InvalidArgumentError("records", "()", "at least one text")
        check_positive("noise_multiplier", self.noise_multiplier)
        check_int("max_bigrams", self.max_bigrams, minimum=1, maximum=1 << 16)
        if not (isinstance(self.threshold, int | float) and 0 <= self.threshold < 1e6):
            raise InvalidArgumentError("threshold", self.threshold, "a number in [0, 1e6)")
        check_int("texts", self.texts, minimum=1, maximum=1 << 20)
        check_int("max_length", self.max_length, minimum=1, maximum=1024)
        if not (isinstance(self.delta, float | int) and 0.0 < self.delta < 1.0):
            raise InvalidArgumentError("delta", self.delta, "a number in the open interval (0, 1)")
        if self.flaw not in BIGRAM_FLAWS:
            raise InvalidArgumentError("flaw", self.flaw, f"one of {', '.join(BIGRAM_FLAWS)}")

    @property
    def claim(self) -> GaussianDP:
        """``1/z``-GDP per private text, whatever the flaw."""
        return GaussianDP(1.0 / float(self.noise_multiplier))

    @property
    def base(self) -> tuple[Any, ...]:
        return self.records

    def with_base(self, records: Sequence[Any]) -> DPBigramText:
        return dataclasses.replace(self, records=tuple(records))

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("vocabulary", None)  # rebuilt on demand
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    @functools.cached_property
    def vocabulary(self) -> tuple[str, ...]:
        """``<s>``, ``</s>``, ``<unk>``, then the base texts' tokens in sorted order."""
        words = {w for r in self.records for w in tokens(text_of(r))} - {START, END}
        return (START, END, UNKNOWN, *sorted(words))

    @property
    def noise_std(self) -> float:
        """The noise standard deviation the code adds (``z·√max_bigrams``; ``z`` if flawed)."""
        z = float(self.noise_multiplier)
        return z if self.flaw == "unscaled-noise" else z * float(np.sqrt(self.max_bigrams))

    def counts(self, private_texts: Sequence[str]) -> np.ndarray:
        """The ``V × V`` table of per-text bigram indicators (capped at ``max_bigrams``)."""
        index = {w: i for i, w in enumerate(self.vocabulary)}
        unknown = index[UNKNOWN]
        rows: list[int] = []
        cols: list[int] = []
        for text in private_texts:
            ids = [index.get(w, unknown) for w in tokens(text)]
            pairs = list(dict.fromkeys(itertools.pairwise(ids)))
            for a, b in pairs[: int(self.max_bigrams)]:
                rows.append(a)
                cols.append(b)
        size = len(self.vocabulary)
        table = np.zeros((size, size), dtype=np.float32)
        np.add.at(table, (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)), 1)
        return table

    def noisy_weights(self, private_texts: Sequence[str], rng: np.random.Generator) -> np.ndarray:
        """The table the sampler draws from: noised, thresholded, never negative."""
        table = self.counts(private_texts)
        std = self.noise_std
        if self.flaw == "noise-on-observed":
            observed = table > 0
            table[observed] += rng.normal(0.0, std, int(observed.sum()))
            return np.maximum(table, 0.0)
        noise = rng.standard_normal(table.shape, dtype=np.float32)
        noise *= np.float32(std)
        table += noise
        table[table <= np.float32(float(self.threshold) * std)] = 0.0
        table[:, self.vocabulary.index(START)] = 0.0  # a sentence never restarts
        return table

    def generate(self, private_texts: Sequence[str], rng: np.random.Generator) -> list[str]:
        """``texts`` sentences sampled from :meth:`noisy_weights`, all chains at once."""
        weights = self.noisy_weights(private_texts, rng).astype(np.float64)
        size = weights.shape[1]
        # One cumulative sum over the flattened table: row a's draws are the searchsorted
        # positions of (mass before row a) + u·(row a's mass), minus a·V.
        flat = np.cumsum(weights.ravel())
        totals = weights.sum(axis=1)
        before = np.concatenate([[0.0], flat[size - 1 :: size][:-1]])
        start, end = self.vocabulary.index(START), self.vocabulary.index(END)
        n = int(self.texts)
        state = np.full(n, start, dtype=np.int64)
        alive = np.ones(n, dtype=bool)
        emitted = np.full((n, int(self.max_length)), end, dtype=np.int64)
        for step in range(int(self.max_length)):
            target = before[state] + rng.random(n) * totals[state]
            column = np.searchsorted(flat, target, side="right") - state * size
            nxt = np.where(totals[state] > 0, np.clip(column, 0, size - 1), end)
            nxt = np.where(alive, nxt, end)
            emitted[:, step] = nxt
            alive &= nxt != end
            state = nxt
        words = np.asarray(self.vocabulary, dtype=object)
        out = []
        for row in emitted:
            stop = np.flatnonzero(row == end)
            out.append(" ".join(words[row[: stop[0] if stop.size else row.size]]))
        return out

    def spec(self) -> dict[str, Any]:
        """Name and parameters (the records by their number)."""
        out = super().spec()
        out["params"] = {"records": len(self.records), **out["params"]}
        return out


__all__ = ["BIGRAM_FLAWS", "DPBigramText"]
