"""Word tokenisation and vocabulary exactly as the OME reference code used them.

Lyu et al. (SIGIR 2020, §3 "Text representation") turn a sentence into word
indices with the Keras ``Tokenizer`` fitted on the training sentences
(``num_words=5000``) and pad the index sequences to 100 tokens with
``pad_sequences``.  This module re-implements those rules (our code, same
behaviour) so that encodings are bit-exact with the reference:

* **words** — lower-case, replace each character of :data:`KERAS_FILTERS` by a
  space, split on the single space character, drop empty strings (apostrophes
  and non-ASCII letters are kept: ``"wasn't"`` and ``"café"`` are one word each);
* **vocabulary** — words ranked by corpus frequency, ties broken by first
  occurrence, ranks starting at 1 (0 is the padding index);
* **sequences** — words whose rank is ``>= num_words`` and words never seen
  during fitting are *dropped*, not replaced (the reference has no OOV token);
* **padding** — ``'pre'`` padding and ``'pre'`` truncation to ``maxlen`` (the
  last ``maxlen`` words are kept), padding value 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from dpaudit.errors import InvalidTypeError
from dpaudit.validation import check_int

#: Characters the Keras ``Tokenizer`` replaces by a space before splitting.
KERAS_FILTERS = '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n'

#: Vocabulary size of the OME reference (``Tokenizer(num_words=5000)``).
DEFAULT_NUM_WORDS = 5000

#: Sequence length of the OME reference (``pad_sequences(maxlen=100)``).
DEFAULT_MAXLEN = 100

_TRANSLATION = str.maketrans(dict.fromkeys(KERAS_FILTERS, " "))


def split_words(text: str) -> list[str]:
    """The words of ``text`` under the Keras rules (see the module docstring)."""
    if not isinstance(text, str):
        raise InvalidTypeError("sentence", text, "a str")
    return [w for w in text.lower().translate(_TRANSLATION).split(" ") if w]


@dataclass(frozen=True)
class Vocabulary:
    """Word ranks fitted on training sentences (Keras ``Tokenizer.word_index``).

    ``words[i]`` has rank ``i + 1``; only ranks ``< num_words`` are used when
    sentences are turned into sequences, as with ``Tokenizer(num_words=...)``.
    """

    words: tuple[str, ...]
    num_words: int = DEFAULT_NUM_WORDS
    _rank: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_int("num_words", self.num_words, minimum=1)
        object.__setattr__(self, "_rank", {w: i + 1 for i, w in enumerate(self.words)})

    @classmethod
    def fit(cls, sentences: Iterable[str], num_words: int = DEFAULT_NUM_WORDS) -> Vocabulary:
        """Rank the words of ``sentences`` by frequency (ties: first occurrence first)."""
        counts: dict[str, int] = {}
        for sentence in sentences:
            for word in split_words(sentence):
                counts[word] = counts.get(word, 0) + 1
        # dict keeps insertion order and sorted() is stable, so equal counts stay
        # in order of first occurrence, as Keras' list.sort(reverse=True) does.
        ranked = sorted(counts, key=counts.__getitem__, reverse=True)
        return cls(tuple(ranked), num_words)

    @property
    def used_words(self) -> tuple[str, ...]:
        """Words whose rank is below ``num_words`` (those that can appear in a sequence)."""
        return self.words[: self.num_words - 1]

    def rank(self, word: str) -> int | None:
        """Rank of ``word`` (1 = most frequent), or None when it was never seen."""
        return self._rank.get(word)

    def sequence(self, sentence: str) -> list[int]:
        """Ranks of the words of ``sentence``, dropping unknown and too-rare words."""
        ranks = (self._rank.get(w) for w in split_words(sentence))
        return [r for r in ranks if r is not None and r < self.num_words]

    def sequences(self, sentences: Sequence[str]) -> list[list[int]]:
        """:meth:`sequence` for every sentence."""
        return [self.sequence(s) for s in sentences]


def pad_sequences(sequences: Sequence[Sequence[int]], maxlen: int = DEFAULT_MAXLEN) -> np.ndarray:
    """Pad/truncate to ``maxlen`` at the front, as Keras ``pad_sequences`` defaults do.

    Returns an int64 array of shape ``(len(sequences), maxlen)``; 0 is padding.
    """
    maxlen = check_int("maxlen", maxlen, minimum=1)
    out = np.zeros((len(sequences), maxlen), dtype=np.int64)
    for i, seq in enumerate(sequences):
        kept = seq[-maxlen:]  # 'pre' truncation keeps the last maxlen tokens
        if kept:
            out[i, maxlen - len(kept) :] = kept  # 'pre' padding puts zeros first
    return out
