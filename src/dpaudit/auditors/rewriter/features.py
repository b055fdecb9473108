"""Sets of rewrites described by features of their text: what a black-box audit can test.

Each :class:`TextEvent` is a fixed predicate on an output text, so counting it
on fresh rewrites is a valid certification input whatever the mechanism is.
The families are the ones a reviewer reads off the outputs first:

* surface words and bigrams (``contains "bad"``, ``contains "not good"``), lower-cased
  and without surrounding punctuation;
* the text as written (:func:`written_events`): whitespace tokens with their case and
  punctuation (``contains token "Bad!"``), each punctuation character, the last
  character, and the case of the first letter — a rewriter that copies the input's
  punctuation or capitals leaks through exactly what the word features drop;
* length in words (``≥ k words``, ``≤ k words``);
* one exact output (``= "the movie was bad"``): catches deterministic rewriters;
* copying from the input (``returned unchanged``, ``copies ≥ k consecutive words of x``);
* with a sentence embedder (GloVe max-pooling, extra ``text``; MiniLM, extra ``minilm``):
  ``embedding · w ≥ c`` along the direction ``w`` that separates the two inputs'
  training rewrites (the difference of their mean embeddings).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class TextEvent:
    """A named predicate on output texts (``test(texts) -> bool array``)."""

    name: str
    family: str
    test: Callable[[Sequence[str]], np.ndarray]

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.test(texts), dtype=bool)


def words(text: str) -> list[str]:
    """Lower-cased words with surrounding punctuation removed."""
    return [w.strip(".,!?;:\"'()").lower() for w in text.split() if w.strip(".,!?;:\"'()")]


def longest_copied_span(text: str, source: str) -> int:
    """The longest run of consecutive words of ``source`` that ``text`` repeats, in words."""
    a, b = words(text), words(source)
    best = 0
    prev = [0] * (len(b) + 1)
    for wa in a:
        cur = [0] * (len(b) + 1)
        for j, wb in enumerate(b, start=1):
            if wa == wb:
                cur[j] = prev[j - 1] + 1
                best = max(best, cur[j])
        prev = cur
    return best


def _contains(gram: tuple[str, ...]) -> Callable[[Sequence[str]], np.ndarray]:
    n = len(gram)

    def test(texts: Sequence[str]) -> np.ndarray:
        out = []
        for t in texts:
            w = words(t)
            out.append(any(tuple(w[i : i + n]) == gram for i in range(len(w) - n + 1)))
        return np.array(out, dtype=bool)

    return test


def surface_events(outputs: Sequence[str], limit: int = 200) -> list[TextEvent]:
    """``contains g`` for the ``limit`` most frequent words and bigrams of ``outputs``."""
    counts: Counter[tuple[str, ...]] = Counter()
    for t in outputs:
        w = words(t)
        counts.update({(x,) for x in w})
        counts.update({tuple(w[i : i + 2]) for i in range(len(w) - 1)})
    return [
        TextEvent(f'contains "{" ".join(g)}"', "surface", _contains(g))
        for g, _ in counts.most_common(limit)
    ]


#: Characters :func:`written_events` tests one by one.
PUNCTUATION = ".,!?;:'\"()-…"


def written_events(outputs: Sequence[str], limit: int = 100) -> list[TextEvent]:
    """Features of the text as written, case and punctuation kept.

    ``contains token t`` for the ``limit`` most frequent whitespace tokens (as written),
    ``contains c`` for every punctuation character seen, ``ends with c`` for every last
    character seen, and ``starts with a capital``.
    """
    tokens: Counter[str] = Counter()
    for t in outputs:
        tokens.update(set(t.split()))
    events = [
        TextEvent(f"contains token {tok!r} (as written)", "written", _has_token(tok))
        for tok, _ in tokens.most_common(limit)
    ]
    seen = set("".join(outputs))
    events += [
        TextEvent(f"contains {c!r}", "written", _has_char(c)) for c in PUNCTUATION if c in seen
    ]
    for last in sorted({t.rstrip()[-1] for t in outputs if t.strip()}):
        events.append(TextEvent(f"ends with {last!r}", "written", _ends_with(last)))
    events.append(TextEvent("starts with a capital letter", "written", _capital))
    return events


def _has_token(tok: str) -> Callable[[Sequence[str]], np.ndarray]:
    return lambda texts: np.array([tok in t.split() for t in texts], dtype=bool)


def _has_char(c: str) -> Callable[[Sequence[str]], np.ndarray]:
    return lambda texts: np.array([c in t for t in texts], dtype=bool)


def _ends_with(c: str) -> Callable[[Sequence[str]], np.ndarray]:
    return lambda texts: np.array([t.rstrip().endswith(c) for t in texts], dtype=bool)


def _capital(texts: Sequence[str]) -> np.ndarray:
    return np.array([t.lstrip()[:1].isupper() for t in texts], dtype=bool)


def length_events(outputs: Sequence[str]) -> list[TextEvent]:
    """``≥ k words`` and ``≤ k words`` for every length seen."""
    lengths = sorted({len(words(t)) for t in outputs})
    events = []
    for k in lengths:
        events.append(TextEvent(f"≥ {k} words", "length", _at_least(k)))
        events.append(TextEvent(f"≤ {k} words", "length", _at_most(k)))
    return events


def _at_least(k: int) -> Callable[[Sequence[str]], np.ndarray]:
    return lambda texts: np.array([len(words(t)) >= k for t in texts], dtype=bool)


def _at_most(k: int) -> Callable[[Sequence[str]], np.ndarray]:
    return lambda texts: np.array([len(words(t)) <= k for t in texts], dtype=bool)


def exact_events(outputs: Sequence[str], limit: int = 20) -> list[TextEvent]:
    """``= s`` for the ``limit`` most frequent exact outputs."""
    common = Counter(outputs).most_common(limit)
    return [TextEvent(f"= {s!r}", "exact", _equals(s)) for s, _ in common]


def _equals(s: str) -> Callable[[Sequence[str]], np.ndarray]:
    return lambda texts: np.array([t == s for t in texts], dtype=bool)


def copy_events(source: str) -> list[TextEvent]:
    """``returned unchanged`` and ``copies ≥ k consecutive words`` of ``source``."""
    n = len(words(source))
    events = [TextEvent(f"= the input {source!r} (returned unchanged)", "copy", _equals(source))]
    for k in range(1, n + 1):
        events.append(
            TextEvent(f"copies ≥ {k} consecutive words of {source!r}", "copy", _copies(source, k))
        )
    return events


def _copies(source: str, k: int) -> Callable[[Sequence[str]], np.ndarray]:
    return lambda texts: np.array([longest_copied_span(t, source) >= k for t in texts], dtype=bool)


NAMED_DIRECTION = "w = mean embedding of x's training rewrites minus that of x′'s"


class _Projection:
    """``embed(texts) @ w``, remembering the last batch (every threshold tests the same texts)."""

    def __init__(self, embedder: Any, direction: np.ndarray) -> None:
        self.embedder, self.direction = embedder, direction
        self._last: tuple[tuple[str, ...], np.ndarray] | None = None

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        key = tuple(texts)
        if self._last is None or self._last[0] != key:
            self._last = (key, np.asarray(self.embedder.embed(list(texts))) @ self.direction)
        return self._last[1]


def embedding_events(
    embedder: Any, ys: Sequence[str], zs: Sequence[str], thresholds: int = 16
) -> list[TextEvent]:
    """``embedding · w ≥ c`` with ``w`` the difference of the two sides' mean embeddings.

    ``embedder`` is an embedder (``.embed(texts)``) or a factory that fits one on
    texts (GloVe's vocabulary): it is then fitted on these training rewrites only.
    """
    if not hasattr(embedder, "embed"):
        embedder = embedder([*ys, *zs])
    ey, ez = np.asarray(embedder.embed(list(ys))), np.asarray(embedder.embed(list(zs)))
    direction = ey.mean(axis=0) - ez.mean(axis=0)
    if not np.any(direction):
        return []
    project = _Projection(embedder, direction)
    scores = np.concatenate([ey @ direction, ez @ direction])
    cuts = np.unique(np.quantile(scores, np.linspace(0.05, 0.95, thresholds)))
    return [
        TextEvent(
            f"embedding · w ≥ {c:.4g} ({NAMED_DIRECTION})",
            "embedding",
            _above(project, c),
        )
        for c in cuts
    ]


def _above(project: _Projection, cut: float) -> Callable[[Sequence[str]], np.ndarray]:
    return lambda texts: project(texts) >= cut


def candidate_events(
    x: str, x_prime: str, ys: Sequence[str], zs: Sequence[str], embedder: Any = None
) -> list[TextEvent]:
    """Every event family for one pair, proposed from the training rewrites of both inputs."""
    both = list(ys) + list(zs)
    events = (
        surface_events(both)
        + written_events(both)
        + length_events(both)
        + exact_events(both)
        + copy_events(x)
        + copy_events(x_prime)
    )
    if embedder is not None:
        events += embedding_events(embedder, ys, zs)
    return events
