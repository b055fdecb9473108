"""Exact output laws of pyPANTERA's sampling mechanisms, read from the package's code as it runs.

Three of pyPANTERA 1.0.2's mechanisms fix their law before the one random step:

* ``SanText.processText`` computes ``p ∝ exp(−ε·d/2)`` over the whole
  vocabulary (in float32) and calls ``np.random.choice(V, p=p)``;
* ``CusText.processText`` computes ``p`` over the word's ``k`` candidates and
  calls ``np.random.choice(candidates, 1, p=p)``;
* ``TEM.processText`` scores the words within its threshold γ (``−d``) and a
  placeholder ``⊥`` (``−γ + 2·ln|L̂_w|/ε``), adds one ``numpy.random.gumbel(0,
  2/ε, 1)`` to each score and takes ``max(Lw, key=…)``; on ``⊥`` it runs
  ``np.random.choice(L_hat_w, 1)``.  By the Gumbel-max theorem (Gumbel 1954;
  Yellott 1977; Maddison, Tarlow & Minka, NeurIPS 2014, §2) the arg-max is
  ``y`` with probability ``softmax(score/β)_y``, ``β`` the Gumbel scale.

:func:`library_law` runs ``processText([word])`` with the module's ``np`` and
``npr`` replaced by a recorder (``gumbel`` returns zeros and records its
scale; ``choice`` records its candidates and weights, and runs the real
``np.random.choice`` on them under a throw-away seed, so that numpy's own
argument checks decide whether the call raises) and ``max`` (looked up in the
module's globals before the builtins) recording the scored list.  A call that
raises in those checks, or before any draw, raises on every draw: its law is
the outcome *crash* with probability 1.  (CusText hands ``choice`` a list of
float32 probabilities whose float64 sum misses 1 by more than numpy's
tolerance ``√eps₆₄ ≈ 1.5e-8`` for most words: ``ValueError: probabilities do
not sum to 1`` on every draw.)  For TEM
a second instrumented call makes ``max`` return ``⊥`` and lets the *real*
``np.random.choice`` run on the package's own arguments, so what the ⊥ branch
really outputs is observed rather than assumed: in 1.0.2 ``L_hat_w`` is a list
of embedding *vectors*, ``choice`` raises ``ValueError`` ("a must be
1-dimensional"), the package's bare ``except`` returns the input word, and
so ⊥'s whole share goes to the input itself; no word outside the γ-ball is
ever output.  A call that draws in any other way (an out-of-vocabulary word's
random vector, ``npr.normal``) gives ``None``.  The metric audit tests every
law against the real sampler (pooled χ²) before reporting exact losses.
"""

from __future__ import annotations

import builtins
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.adapters._support import seeded_global_random
from dpaudit.analysis.word_embedding import WordEmbedding
from dpaudit.mechanisms.word.base import CRASH, N_SPECIAL, encode_outputs

#: The pyPANTERA mechanisms whose law this module reads.
EXACT_NAMES = ("SanText", "CusText", "TEM")


@dataclass
class _PanteraCall:
    """What one instrumented ``processText`` call did."""

    force_bottom: bool = False
    gumbel_scales: list[float] = field(default_factory=list)
    choices: list[tuple[list[Any], np.ndarray | None]] = field(default_factory=list)
    choice_raised: bool = False
    scores: list[tuple[str, float]] | None = None
    other_draws: list[str] = field(default_factory=list)


class _PanteraDraws:
    """Stands in for ``numpy.random`` inside a pyPANTERA module (module docstring)."""

    def __init__(self, call: _PanteraCall) -> None:
        self._call = call

    def gumbel(self, loc: float = 0.0, scale: float = 1.0, size: Any = None) -> Any:
        if loc != 0.0:
            self._call.other_draws.append(f"gumbel(loc={loc})")
        self._call.gumbel_scales.append(float(scale))
        return 0.0 if size is None else np.zeros(size)

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None) -> Any:
        items = list(range(int(a))) if isinstance(a, (int, np.integer)) else list(a)
        self._call.choices.append((items, None if p is None else np.asarray(p, np.float64)))
        try:  # the real call on the package's own arguments: numpy's checks decide if it raises
            real = np.random.choice(a, size, replace, p)
        except Exception:
            self._call.choice_raised = True
            raise
        if self._call.force_bottom:
            return real
        return items[0] if size is None else np.asarray(items[:1] * int(np.prod(size)))

    def __getattr__(self, name: str) -> Callable[..., Any]:
        def other_draw(*args: Any, **kwargs: Any) -> Any:  # recorded: the law is then unknown
            self._call.other_draws.append(name)
            return getattr(np.random, name)(*args, **kwargs)

        return other_draw


class _PanteraNumpy:
    """The module's ``np``: numpy itself, except ``np.random``."""

    def __init__(self, draws: _PanteraDraws) -> None:
        self.random = draws

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)


@contextmanager
def _instrumented(module: Any, call: _PanteraCall, vocabulary: WordEmbedding) -> Iterator[None]:
    """Swap the module's ``np``/``npr`` and add a recording ``max``; restore afterwards."""
    saved = {name: vars(module)[name] for name in ("np", "npr", "max") if name in vars(module)}
    draws = _PanteraDraws(call)

    def recording_max(*args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and isinstance(args[0], list) and "key" in kwargs:
            entries = args[0]
            call.scores = [(str(w), float(np.asarray(s).ravel()[0])) for w, s in entries]
            if call.force_bottom:
                return next(e for e in entries if e[0] not in vocabulary)
        return builtins.max(*args, **kwargs)

    module.np = _PanteraNumpy(draws)
    module.npr = draws
    module.max = recording_max
    try:
        yield
    finally:
        for name in ("np", "npr", "max"):
            if name in saved:
                setattr(module, name, saved[name])
            else:
                delattr(module, name)


def _run(
    library: Any, word: str, vocabulary: WordEmbedding, bottom: bool
) -> tuple[_PanteraCall, Any, bool]:
    """One instrumented ``processText([word])``: the record, the output, whether it raised."""
    module = sys.modules[type(library).__module__]
    call = _PanteraCall(force_bottom=bottom)
    with seeded_global_random(np.random.default_rng(0)), _instrumented(module, call, vocabulary):
        try:
            return call, library.processText([word]), False
        except Exception:  # the package's exception: the outcome *crash*
            return call, None, True


def library_law(library: Any, word: str, vocabulary: WordEmbedding) -> np.ndarray | None:
    """Exact log-probabilities of all ``V + N_SPECIAL`` codes of ``processText([word])``.

    ``None`` when the call draws in a way this module cannot read.
    """
    call, output, crashed = _run(library, word, vocabulary, bottom=False)
    out = np.full(vocabulary.size + N_SPECIAL, -np.inf)
    if call.other_draws:
        return None
    if crashed and not call.gumbel_scales and (call.choice_raised or not call.choices):
        # Raised before any draw, or in numpy's checks of choice's arguments (deterministic):
        # every call raises.
        out[vocabulary.size + CRASH] = 0.0
        return out
    if crashed:
        return None
    if call.scores is not None and call.gumbel_scales:
        return _gumbel_max_law(library, word, vocabulary, call)
    if not call.gumbel_scales and len(call.choices) == 1 and call.choices[0][1] is not None:
        items, p = call.choices[0]
        _spread(out, _codes(vocabulary, word, items), _log(p / p.sum()))
        return out
    if not call.gumbel_scales and not call.choices:  # nothing random: one outcome
        out[int(encode_outputs(vocabulary, word, [output])[0])] = 0.0
        return out
    return None


def _codes(vocabulary: WordEmbedding, word: str, items: list[Any]) -> np.ndarray:
    """Codes of recorded candidates: integers index the package's vocabulary (SanText)."""
    if items and all(isinstance(i, (int, np.integer)) for i in items):
        if len(items) != vocabulary.size:
            raise ValueError("integer candidates that are not the package's vocabulary")
        return np.asarray(items, dtype=np.int64)
    return encode_outputs(vocabulary, word, [str(i) for i in items])


def _gumbel_max_law(
    library: Any, word: str, vocabulary: WordEmbedding, call: _PanteraCall
) -> np.ndarray | None:
    """``softmax(score/β)`` over the recorded list; ⊥'s share where the ⊥ branch really goes."""
    scores = call.scores
    assert scores is not None
    scales = set(call.gumbel_scales)
    if len(scales) != 1 or len(call.gumbel_scales) != len(scores):
        return None  # not one Gumbel per score at one scale: not the Gumbel-max law
    beta = scales.pop()
    names = [w for w, _ in scores]
    logits = np.array([s / beta for _, s in scores])
    logits -= np.logaddexp.reduce(logits)
    out = np.full(vocabulary.size + N_SPECIAL, -np.inf)
    inside = [i for i, w in enumerate(names) if w in vocabulary]
    _spread(out, encode_outputs(vocabulary, word, [names[i] for i in inside]), logits[inside])
    outside = [i for i, w in enumerate(names) if w not in vocabulary]
    if len(outside) > 1:
        return None
    if outside and np.isfinite(logits[outside[0]]):
        share = logits[outside[0]]
        forced, output, raised = _run(library, word, vocabulary, bottom=True)
        if forced.other_draws or raised:
            return None
        if forced.choice_raised or not forced.choices:  # ⊥'s output is then fixed
            _spread(out, encode_outputs(vocabulary, word, [output]), np.array([share]))
        else:
            items = forced.choices[0][0]
            if not items or not all(isinstance(i, str) for i in items):
                return None
            _spread(out, _codes(vocabulary, word, items), share - np.log(len(items)))
    return out


def _log(p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(p)


def _spread(out: np.ndarray, codes: np.ndarray, log_p: Any) -> None:
    """Add ``exp(log_p)`` to ``out``'s codes in log space (repeated codes accumulate)."""
    codes = np.asarray(codes, dtype=np.int64)
    log_p = np.broadcast_to(np.asarray(log_p, dtype=np.float64), codes.shape)
    np.logaddexp.at(out, codes, log_p)
