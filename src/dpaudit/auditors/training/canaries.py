"""Canaries for auditing a text classifier's training: which records the auditor inserts.

* ``gradient`` — Dirac gradient canaries (Nasr et al., USENIX Security 2023, §4.2): records
  whose per-example gradient the white-box adversary chooses, one reserved coordinate each
  (:class:`~dpaudit.mechanisms.training.contract.GradientCanary`); the strongest canary for
  DP-SGD, and the one whose audit comes closest to the accountant's ε.
* ``mislabelled`` — sentences of the corpus with their label flipped (Jagielski, Ullman &
  Oprea, NeurIPS 2020 use poisoned points; Steinke et al., NeurIPS 2023, §6 mislabelled
  input canaries): each drawn sentence leaves the base data, so it is never in training twice.
* ``held-out`` — sentences of the corpus with their own label (input-space canaries drawn
  from the data distribution: the weakest, the typical member).
* ``random-tokens`` — sequences of words drawn uniformly from the corpus' vocabulary with a
  random label (Carlini et al., USENIX Security 2019, "secret sharer" canaries).
* ``echo`` — canaries designed to echo in released text: :data:`ECHO_TOKENS` words drawn
  from the corpus' :data:`ECHO_VOCABULARY` most frequent, chained so that every bigram is
  one no base text holds and no other canary uses.  A generator visits frequent words
  often, so a bigram the canary added is released where it survives, and only the canary
  can have put it there (the designed canaries of Meeus et al., "The Canary's Echo",
  ICML 2025, in their simplest form for n-gram generators).  Scored on a corpus by
  ``novel`` (:mod:`~dpaudit.mechanisms.training.synthetic`).

Records are :class:`~dpaudit.mechanisms.training.contract.TextRecord` tuples ``(text,
label)``, so a user's own trainer takes them as it takes its data.  Every draw comes from
the ``rng`` given (the auditor's seed).
"""

from __future__ import annotations

import collections
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.training.contract import GradientCanary, TextRecord

#: Canary designs, strongest first (``echo``: for generators of text, see above).
CANARY_KINDS = ("gradient", "mislabelled", "held-out", "random-tokens", "echo")
#: Words per random-token canary.
RANDOM_TOKENS = 8
#: Words per echo canary: 16 bigrams between them, what a DP n-gram release counts per text.
ECHO_TOKENS = 17
#: How many of the corpus' most frequent words echo canaries are made of.
ECHO_VOCABULARY = 300
#: Tries for each next word of an echo canary before the canary is started again.
_ECHO_TRIES = 64


@dataclass(frozen=True)
class Canaries:
    """The canaries drawn, and the base data with every record they were drawn from removed."""

    kind: str
    records: tuple[Any, ...]
    base: tuple[Any, ...]

    def describe(self) -> str:
        """One line for results."""
        what = {
            "gradient": "Dirac gradient canaries (one reserved coordinate each)",
            "mislabelled": "corpus sentences with their label flipped, removed from the data",
            "held-out": "corpus sentences with their own label, removed from the data",
            "random-tokens": f"{RANDOM_TOKENS} random corpus words with a random label",
            "echo": f"{ECHO_TOKENS} frequent corpus words in bigrams no text or other canary holds",
        }[self.kind]
        return f"{len(self.records)} {self.kind} canaries: {what}"


def _text_records(base: Sequence[Any]) -> list[TextRecord]:
    out = []
    for i, rec in enumerate(base):
        if isinstance(rec, str):  # a plain text (synthetic-text generators): no label
            out.append(TextRecord(rec, 0))
            continue
        try:
            text, label = rec
        except (TypeError, ValueError):
            raise InvalidArgumentError(
                "base", f"record {i}", "(text, label) records for text canaries"
            ) from None
        out.append(TextRecord(str(text), int(label)))
    return out


def default_kind(mechanism: Any) -> str:
    """The trainer's ``default_canary_kind``, else gradient (white box) or mislabelled."""
    declared = getattr(mechanism, "default_canary_kind", None)
    if declared is not None:
        return str(declared)
    return "gradient" if mechanism.access == "white-box" else "mislabelled"


def _echo_canaries(
    records: Sequence[TextRecord], count: int, rng: np.random.Generator
) -> tuple[TextRecord, ...]:
    """``count`` echo canaries (module docstring) for the corpus ``records``."""
    texts = [r.text.casefold().split() for r in records]
    frequent = collections.Counter(w for t in texts for w in t).most_common(ECHO_VOCABULARY)
    words = [w for w, _ in frequent]
    if len(words) < 2:
        raise InvalidArgumentError("base", f"{len(words)} distinct words", "text records")
    taken = {g for t in texts for g in itertools.pairwise(t)}
    made: list[TextRecord] = []
    attempts = 0
    while len(made) < count:
        attempts += 1
        if attempts > 20 * count + 100:
            raise InvalidArgumentError(
                "canaries", count, f"fewer echo canaries: the {len(words)} most frequent words "
                "have too few bigrams left that no text or other canary holds",
            )  # fmt: skip
        chain = [words[int(rng.integers(len(words)))]]
        grams: set[tuple[str, str]] = set()
        while len(chain) < ECHO_TOKENS:
            picks = rng.integers(len(words), size=_ECHO_TRIES)
            fresh = (words[j] for j in picks)
            nxt = next(
                (w for w in fresh if (chain[-1], w) not in taken and (chain[-1], w) not in grams),
                None,
            )
            if nxt is None:
                break
            grams.add((chain[-1], nxt))
            chain.append(nxt)
        if len(chain) == ECHO_TOKENS:
            taken |= grams
            made.append(TextRecord(" ".join(chain), int(rng.integers(2))))
    return tuple(made)


def draw_canaries(kind: str, count: int, base: Sequence[Any], rng: np.random.Generator) -> Canaries:
    """``count`` canaries of ``kind`` (:data:`CANARY_KINDS`) for training data ``base``."""
    if kind not in CANARY_KINDS:
        raise InvalidArgumentError("canary kind", kind, f"one of {', '.join(CANARY_KINDS)}")
    if isinstance(count, bool) or not isinstance(count, int) or count < 2:
        raise InvalidArgumentError("canaries", count, "an integer >= 2")
    if kind == "gradient":
        return Canaries(kind, tuple(GradientCanary(i) for i in range(count)), tuple(base))
    records = _text_records(base)
    if kind == "echo":
        return Canaries(kind, _echo_canaries(records, count, rng), tuple(base))
    if kind == "random-tokens":
        vocabulary = sorted({w for r in records for w in r.text.lower().split()})
        if not vocabulary:
            raise InvalidArgumentError("base", "no words", "text records with words")
        words = rng.integers(0, len(vocabulary), size=(count, RANDOM_TOKENS))
        labels = rng.integers(0, 2, size=count)
        made = tuple(
            TextRecord(" ".join(vocabulary[j] for j in row), int(y))
            for row, y in zip(words, labels, strict=True)
        )
        return Canaries(kind, made, tuple(base))
    if count > len(records) // 2:
        raise InvalidArgumentError(
            "canaries", count, f"at most half the {len(records)} records for {kind} canaries"
        )
    chosen = rng.choice(len(records), size=count, replace=False)
    taken = set(chosen.tolist())
    flip = kind == "mislabelled"
    made = tuple(
        TextRecord(records[j].text, 1 - records[j].label if flip else records[j].label)
        for j in chosen.tolist()
    )
    kept = tuple(rec for i, rec in enumerate(base) if i not in taken)
    return Canaries(kind, made, kept)


__all__ = ["CANARY_KINDS", "Canaries", "default_kind", "draw_canaries"]
