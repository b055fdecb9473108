"""Exact output laws of mldp-text's mechanisms, read from the library's own code as it runs.

Two of mldp-text's six mechanisms sample from a law that its own code fully
determines before the draw:

* ``TEM.replace_word`` builds a dict ``f`` of scores (``−d(w, y)`` for the
  words within its threshold, plus ``"⊥"``), adds ``np.random.gumbel(0, 2/ε)``
  to each and takes ``max(f, key=f.get)``; on ``⊥`` it returns
  ``np.random.choice`` of the words outside the threshold.  By the Gumbel-max
  theorem (Gumbel 1954; Yellott, J. Math. Psych. 1977; Maddison, Tarlow &
  Minka, NeurIPS 2014, §2) the arg-max of ``f_y + G_y`` with ``G_y`` i.i.d.
  Gumbel(0, β) is ``y`` with probability ``softmax(f/β)_y``; ``⊥``'s share is
  spread uniformly over the words ``choice`` draws from.
* ``SynTF.replace_word`` computes its probabilities and calls
  ``np.random.choice(synonyms, 1, p=probabilities)``.

Rather than re-implementing the papers (which mldp-text departs from: its ⊥
score is ``−γ + 2·ln(|VOCAB|/|L_w|)/ε``, not the paper's ``−γ + 2·ln|L̄_w|/ε``),
:func:`library_output_law` runs the library's ``replace_word`` once with its
module's ``np`` replaced by a recorder: ``gumbel`` returns 0 and records its
scale, ``choice`` records its candidates and weights, and ``max`` (looked up
in the module's globals before the builtins) records the score dict.  The
scores, the threshold, the ⊥ score and the weights are therefore the
library's own numbers.  A call that draws in any other way (a mechanism with
continuous noise) gives ``None``: its law is not computable this way.  The law
is then checked against the real sampler like any declared density
(:func:`dpaudit.auditors.core.goodness_of_fit.pooled_chi_square`, in the metric
audit and in the tests), so a recording that missed something is a finding,
not a silent error.
"""

from __future__ import annotations

import builtins
import math
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.analysis.word_embedding import WordEmbedding
from dpaudit.mechanisms.word.base import CRASH, N_SPECIAL, encode_outputs

#: The mldp-text mechanisms whose draw this module can read exactly.
EXACT_MECHANISMS = ("tem", "syntf")


@dataclass
class _Record:
    """What one instrumented ``replace_word`` call did."""

    gumbel_scales: list[float] = field(default_factory=list)
    choices: list[tuple[list[Any], Any]] = field(default_factory=list)
    scores: dict[str, float] | None = None
    other_draws: list[str] = field(default_factory=list)


class _RandomRecorder:
    """Stands in for ``np.random`` inside the library module (see the module docstring)."""

    def __init__(self, record: _Record) -> None:
        self._record = record

    def gumbel(self, loc: float = 0.0, scale: float = 1.0, size: Any = None) -> float:
        if size is not None or loc != 0.0:
            self._record.other_draws.append(f"gumbel(loc={loc}, size={size})")
        self._record.gumbel_scales.append(float(scale))
        return 0.0

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None) -> Any:
        items = list(a)
        self._record.choices.append((items, None if p is None else np.asarray(p, float)))
        if not items:
            raise ValueError("a must be non-empty")  # as numpy: the library's crash outcome
        return items[0] if size is None else np.asarray(items[:1] * int(np.prod(size)))

    def __getattr__(self, name: str) -> Callable[..., Any]:
        def other_draw(*args: Any, **kwargs: Any) -> Any:  # recorded: the law is then unknown
            self._record.other_draws.append(name)
            return getattr(np.random, name)(*args, **kwargs)

        return other_draw


class _NumpyRecorder:
    """The library module's ``np``: numpy itself, except ``np.random``."""

    def __init__(self, record: _Record) -> None:
        self.random = _RandomRecorder(record)

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)


@contextmanager
def _instrumented(module: Any, record: _Record) -> Iterator[None]:
    """Swap the module's ``np`` and add a recording ``max`` to its globals; restore after."""
    real_np = module.np
    had_max = "max" in vars(module)

    def recording_max(*args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and isinstance(args[0], dict) and "key" in kwargs:
            record.scores = {k: float(v) for k, v in args[0].items()}
        return builtins.max(*args, **kwargs)

    module.np = _NumpyRecorder(record)
    module.max = recording_max
    try:
        yield
    finally:
        module.np = real_np
        if not had_max:
            del module.max


def _record_call(library: Any, word: str) -> tuple[_Record, Any, bool]:
    """Run ``library.replace_word(word)`` instrumented: the record, the output, crashed?"""
    module = sys.modules[type(library).__module__]
    record = _Record()
    with _instrumented(module, record):
        try:
            return record, library.replace_word(word), False
        except ValueError:
            return record, None, True


def library_output_law(library: Any, word: str, vocabulary: WordEmbedding) -> np.ndarray | None:
    """Exact log-probabilities of all ``V + N_SPECIAL`` codes of ``library.replace_word(word)``.

    ``None`` when the call draws in a way this module cannot read (see the
    module docstring).
    """
    record, output, crashed = _record_call(library, word)
    v = vocabulary.size
    out = np.full(v + N_SPECIAL, -np.inf)
    if record.other_draws:
        return None
    if record.scores is not None and record.gumbel_scales:
        return _gumbel_max_law(library, record, vocabulary)
    if not record.gumbel_scales and len(record.choices) == 1 and record.choices[0][1] is not None:
        items, p = record.choices[0]
        codes = encode_outputs(vocabulary, word, items)
        _spread(out, codes, np.log(p / p.sum()))
        return out
    if not record.gumbel_scales and not record.choices:  # deterministic: one outcome
        out[v + CRASH if crashed else int(encode_outputs(vocabulary, word, [output])[0])] = 0.0
        return out
    return None


def _gumbel_max_law(library: Any, record: _Record, vocabulary: WordEmbedding) -> np.ndarray | None:
    """``softmax(f/β)`` over the recorded scores; ``⊥``'s share uniform over its candidates."""
    scores = record.scores
    assert scores is not None
    scales = set(record.gumbel_scales)
    if len(scales) != 1 or len(record.gumbel_scales) != len(scores):
        return None  # not one Gumbel per score at one scale: not the Gumbel-max law
    beta = scales.pop()
    names = list(scores)
    logits = np.array([scores[k] / beta for k in names])
    logits -= np.logaddexp.reduce(logits)
    v = vocabulary.size
    out = np.full(v + N_SPECIAL, -np.inf)
    bottom = "⊥"
    words = [k for k in names if k != bottom]
    _spread(out, encode_outputs(vocabulary, "", words), logits[[names.index(k) for k in words]])
    if bottom in scores:
        inside = set(words)
        rest = [k for k in library.embedding_matrix.key_to_index if k not in inside]
        share = logits[names.index(bottom)]
        if not rest:
            out[v + CRASH] = np.logaddexp(out[v + CRASH], share)  # choice([]) raises
        else:
            codes = encode_outputs(vocabulary, "", rest)
            _spread(out, codes, np.full(len(rest), share - math.log(len(rest))))
    return out


def _spread(out: np.ndarray, codes: np.ndarray, log_p: np.ndarray) -> None:
    """Add ``exp(log_p)`` to ``out``'s codes in log space (repeated codes accumulate)."""
    np.logaddexp.at(out, np.asarray(codes, dtype=np.int64), np.asarray(log_p, dtype=np.float64))
