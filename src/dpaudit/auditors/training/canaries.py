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

Records are :class:`~dpaudit.mechanisms.training.contract.TextRecord` tuples ``(text,
label)``, so a user's own trainer takes them as it takes its data.  Every draw comes from
the ``rng`` given (the auditor's seed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.training.contract import GradientCanary, TextRecord

#: Canary designs, strongest first.
CANARY_KINDS = ("gradient", "mislabelled", "held-out", "random-tokens")
#: Words per random-token canary.
RANDOM_TOKENS = 8


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


def draw_canaries(kind: str, count: int, base: Sequence[Any], rng: np.random.Generator) -> Canaries:
    """``count`` canaries of ``kind`` (:data:`CANARY_KINDS`) for training data ``base``."""
    if kind not in CANARY_KINDS:
        raise InvalidArgumentError("canary kind", kind, f"one of {', '.join(CANARY_KINDS)}")
    if isinstance(count, bool) or not isinstance(count, int) or count < 2:
        raise InvalidArgumentError("canaries", count, "an integer >= 2")
    if kind == "gradient":
        return Canaries(kind, tuple(GradientCanary(i) for i in range(count)), tuple(base))
    records = _text_records(base)
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
