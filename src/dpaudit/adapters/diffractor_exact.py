"""Exact output law of the released 1-Diffractor, read from instrumented calls of its code.

Both of dp-diffractor's methods draw from a law its own code fixes before the
draw, through the generator in ``diffractor.core._RESOURCES["rng"]`` (one per
list) and ``Diffractor._rng`` (the final choice).  :func:`library_output_law`
runs the package's ``apply_privacy_mechanism`` and ``_pick_final_word`` with
those generators replaced by scripted stand-ins that record every call:

* **geometric** — the call must ask for exactly two ``geometric(p)`` draws at one
  ``p``.  Scripted values ``(1, 1)``, ``(1 + s, 1)`` and ``(1, 1 + s)`` give the
  word at offset ``0``, ``+s`` and ``−s``; the law is read only when these are
  the positions ``i``, ``clip(i + s)`` and ``clip(i − s)`` of the list (the
  offset is the difference of the two draws, clamped).  The difference of two
  independent Geometric(p) on ``{1, 2, …}`` has ``Pr[k] = p·q^{|k|}/(2 − p)``
  (``q = 1 − p``); clamping puts each tail's mass ``q^m/(2 − p)`` on the end.
* **TEM** — every ``gumbel(0, β)`` returns a noise object whose ``__radd__``
  records the score it is added to (the library's own scores of the
  neighbourhood, then its ⊥ score) and adds a scripted value: a large value on
  one score in turn reveals the neighbourhood's words, a large value on ⊥ then
  scripted ``integers`` reveal which positions the rejection loop refuses.  By
  the Gumbel-max theorem (Gumbel 1954; Yellott, J. Math. Psych. 1977) the
  released index is ``softmax(score/β)``; ⊥'s share is uniform over the
  accepted positions.
* **final choice** — ``_rng.choice(candidates)`` with no ``p``: uniform over the
  non-``None`` candidates (recorded); no candidate → the input itself.

A call that draws in any other way gives ``None`` (law unknown).  The audit
then checks the law against real draws (pooled χ²,
:mod:`dpaudit.auditors.metric.exact`), so a misreading is a finding, not a
silent error.  numpy's ``geometric`` for ``p ≥ 1/3`` sums a series of doubles,
so its largest value is ≈ 53·ln 2/ε: the true law has no mass beyond, where
this law has ≈ 2⁻⁵³ (invisible to sampling; not modelled).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dpaudit.analysis.word_embedding import WordEmbedding
from dpaudit.mechanisms.word.base import N_SPECIAL, encode_outputs

#: Scripted offset for the structure check of the geometric step.
_STEP = 3
#: A Gumbel value that wins any argmax against the library's scores.
_BIG = 1e9


class _Script:
    """Stands in for a list's numpy Generator: scripted draws, every call recorded."""

    def __init__(
        self,
        geometric: Sequence[int] = (),
        gumbel: Sequence[float] = (),
        integers: Sequence[int] = (),
    ) -> None:
        self.geo, self.gum, self.ints = list(geometric), list(gumbel), list(integers)
        self.ps: list[float] = []
        self.scales: list[float] = []
        self.added: list[float] = []
        self.int_calls: list[tuple[Any, ...]] = []
        self.other: list[str] = []

    def geometric(self, p: float, size: Any = None) -> int:
        self.ps.append(float(p))
        if size is not None or not self.geo:
            self.other.append("geometric")
            return 1
        return self.geo.pop(0)

    def gumbel(self, loc: float = 0.0, scale: float = 1.0, size: Any = None) -> _Noise:
        if size is not None or loc != 0.0:
            self.other.append("gumbel")
        self.scales.append(float(scale))
        return _Noise(self.gum.pop(0) if self.gum else 0.0, self.added)

    def integers(self, low: int, high: Any = None, size: Any = None) -> int:
        self.int_calls.append((low, high))
        if not self.ints:
            raise _ScriptExhaustedError
        return self.ints.pop(0)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        def other(*args: Any, **kwargs: Any) -> Any:
            self.other.append(name)
            raise _ScriptExhaustedError

        return other


class _ScriptExhaustedError(Exception):
    """A draw the script does not answer: the call is abandoned, the law unknown."""


class _Noise:
    """A Gumbel draw: ``score + noise`` records the score and adds the scripted value."""

    __array_ufunc__ = None  # numpy scalars defer to __radd__

    def __init__(self, value: float, added: list[float]) -> None:
        self.value, self.added = value, added

    def __radd__(self, score: Any) -> float:
        self.added.append(float(score))
        return float(score) + self.value


class _Choice:
    """Stands in for ``Diffractor._rng``: records ``choice`` and returns the first item."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[Any], Any]] = []

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None) -> Any:
        self.calls.append((list(a), p))
        return next(iter(a))


def _call(core: Any, resources: dict[str, Any], script: _Script, token: str, eps: float) -> Any:
    previous = getattr(core, "_RESOURCES", None)
    core._RESOURCES = dict(resources, rng=script)
    try:
        return core.apply_privacy_mechanism(token, eps)
    except _ScriptExhaustedError:
        return _ScriptExhaustedError
    finally:
        core._RESOURCES = previous


def _geometric_law(
    core: Any, res: dict[str, Any], token: str, eps: float
) -> dict[str, float] | None:
    """``{word: log-probability}`` of one list's geometric step (None if not read)."""
    lst, pos = res["list"], res["mapping"]
    runs = [(1, 1), (1 + _STEP, 1), (1, 1 + _STEP)]
    scripts = [_Script(geometric=r) for r in runs]
    outs = [_call(core, res, s, token, eps) for s in scripts]
    if any(s.other or len(s.ps) != 2 for s in scripts) or any(o not in pos for o in outs):
        return None
    ps = {p for s in scripts for p in s.ps}
    i, n = pos[outs[0]], len(lst)
    if len(ps) != 1 or [pos[outs[1]], pos[outs[2]]] != [min(i + _STEP, n - 1), max(i - _STEP, 0)]:
        return None
    p = ps.pop()
    if not 0.0 < p <= 1.0:
        return None
    if p == 1.0:
        return {lst[i]: 0.0}
    log_q, log_norm = math.log1p(-p), math.log(p) - math.log(2.0 - p)
    k = np.arange(n) - i
    logs = log_norm + np.abs(k) * log_q
    tail_other = math.log1p(-(1.0 - p) / (2.0 - p))  # Pr[K ≤ 0] (or ≥ 0): clamp at own end
    logs[0] = abs(k[0]) * log_q - math.log(2.0 - p) if i > 0 else tail_other
    if n > 1:
        logs[-1] = abs(k[-1]) * log_q - math.log(2.0 - p) if i < n - 1 else tail_other
    else:
        logs[0] = 0.0
    return dict(zip(lst, logs.tolist(), strict=True))


def _tem_law(core: Any, res: dict[str, Any], token: str, eps: float) -> dict[str, float] | None:
    """``{word: log-probability}`` of one list's TEM step (None if not read)."""
    lst, pos, n = res["list"], res["mapping"], len(res["list"])
    first = _Script()  # all noise 0: records the scores (⊥'s branch may stop at integers)
    _call(core, res, first, token, eps)
    if first.other:
        return None
    scores, scales = first.added, set(first.scales)
    if len(scales) != 1 or len(scores) != len(first.scales) or len(scores) < 2:
        return None
    beta, m = scales.pop(), len(scores) - 1  # the last score is ⊥'s
    words = []
    for j in range(m):
        gum = [_BIG if t == j else 0.0 for t in range(m)] + [-_BIG]
        out = _call(core, res, _Script(gumbel=gum), token, eps)
        if out not in pos:
            return None
        words.append(out)
    inside = sorted(pos[w] for w in words)
    if inside != list(range(inside[0], inside[0] + m)) or n - m < 1:
        return None
    probes = [inside[0] - 1, inside[0], inside[-1], inside[-1] + 1]
    far = 0 if inside[0] > 0 else n - 1
    for v in probes:
        if not 0 <= v < n:
            continue
        script = _Script(gumbel=[0.0] * m + [_BIG], integers=[v, far])
        out = _call(core, res, script, token, eps)
        accepted = out == lst[v] and len(script.int_calls) == 1
        if accepted != (v not in inside) or script.int_calls[0] != (0, n):
            return None
    logits = np.array(scores) / beta
    logits -= np.logaddexp.reduce(logits)
    law = dict(zip(words, logits[:m].tolist(), strict=True))
    share = float(logits[m]) - math.log(n - m)
    law.update({w: share for w in lst if w not in law})
    return law


def library_output_law(
    lib: Any, core: Any, tokens: Sequence[str], word: str, vocabulary: WordEmbedding
) -> np.ndarray | None:
    """Exact log-probabilities of all ``V + N_SPECIAL`` codes of one release of ``word``.

    ``lib``: the package's ``Diffractor``; ``core``: ``diffractor.core``;
    ``tokens``: ``rewrite``'s tokens of ``word`` (the law is read for one token
    only).  ``None`` when a call draws in a way this module cannot read.
    """
    if len(tokens) != 1:
        return None
    token, eps = tokens[0], lib.config.epsilon
    read = _geometric_law if lib.config.method == "geometric" else _tem_law
    laws: list[dict[str, float] | None] = []
    for lst, mapping in zip(lib.mgr.lists, lib.mgr.word_to_idx, strict=True):
        res = {"list": lst, "mapping": mapping, "config": lib.config}
        probe = _Script()
        if _call(core, res, probe, token, eps) is None and not (probe.ps or probe.scales):
            laws.append(None)  # this list offers no candidate (stopword, or not on it)
            continue
        law = read(core, res, token, eps)
        if law is None:
            return None
        laws.append(law)
    choice = _Choice()
    saved = lib._rng
    lib._rng = choice
    try:
        marks = [None if law is None else f"\x00{k}" for k, law in enumerate(laws)]
        picked = lib._pick_final_word(token, marks)
    finally:
        lib._rng = saved
    return _mixture(lib, word, laws, marks, picked, choice, vocabulary)


def _mixture(
    lib: Any,
    word: str,
    laws: list[dict[str, float] | None],
    marks: list[str | None],
    picked: Any,
    choice: _Choice,
    vocabulary: WordEmbedding,
) -> np.ndarray | None:
    """The final choice's law: uniform over the lists that gave a candidate."""
    out = np.full(vocabulary.size + N_SPECIAL, -np.inf)
    valid = [m for m in marks if m is not None]
    if not valid:  # no candidate: the input itself, detokenized
        if choice.calls:
            return None
        out[int(encode_outputs(vocabulary, word, [lib.detok.detokenize([picked])])[0])] = 0.0
        return out
    if len(choice.calls) != 1 or choice.calls[0][1] is not None or choice.calls[0][0] != valid:
        return None
    weight = -math.log(len(valid))
    released = _released_strings(lib)
    for law in laws:
        if law is None:
            continue
        ys = list(law)
        codes = encode_outputs(vocabulary, word, [released.get(y, y) for y in ys])
        log_p = np.fromiter(law.values(), dtype=np.float64, count=len(ys)) + weight
        np.logaddexp.at(out, codes, log_p)
    return out


def _released_strings(lib: Any) -> dict[str, str]:
    """Words the package's detokenizer changes when it releases them alone (usually none)."""
    cache = getattr(lib, "_dpaudit_released", None)
    if cache is None:
        words = {w for lst in lib.mgr.lists for w in lst}
        cache = {w: s for w in words if (s := str(lib.detok.detokenize([w]))) != w}
        lib._dpaudit_released = cache
    return cache
