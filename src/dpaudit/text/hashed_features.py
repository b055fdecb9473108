"""Sentences as fixed-length vectors without a fitted vocabulary: hashed bag of words.

A DP training run must not fit its featuriser on the private data (a vocabulary fitted on
the training set would itself leak which words were there), so the small text classifiers
dpaudit trains use a *data-independent* map: each word (:func:`~dpaudit.text.tokenize.split_words`)
goes to one of ``dimensions`` buckets by CRC-32 of its UTF-8 bytes (Weinberger et al.,
ICML 2009, the hashing trick), with a sign from a second hash so collisions cancel in
expectation; each sentence's counts are scaled to unit L2 norm, so every record's feature
vector has norm ≤ 1 and a per-record gradient of a linear model is bounded by its
loss derivative.  Deterministic across processes and Python versions (no ``hash()``).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpaudit.text.tokenize import split_words
from dpaudit.validation import check_int


@dataclass(frozen=True)
class HashedBagOfWords:
    """``dimensions`` signed hash buckets per sentence, unit L2 norm (0 for no words)."""

    dimensions: int = 256

    def __post_init__(self) -> None:
        check_int("dimensions", self.dimensions, minimum=2, maximum=1 << 20)

    def bucket(self, word: str) -> tuple[int, float]:
        """The bucket and sign of one word."""
        data = word.encode("utf-8")
        h = zlib.crc32(data)
        sign = 1.0 if zlib.crc32(data, 0x9E3779B9) & 1 else -1.0
        return h % self.dimensions, sign

    def __call__(self, sentences: Sequence[str]) -> np.ndarray:
        """Feature rows, shape ``(len(sentences), dimensions)``, float64."""
        out = np.zeros((len(sentences), self.dimensions), dtype=np.float64)
        for row, sentence in enumerate(sentences):
            for word in split_words(sentence):
                j, s = self.bucket(word)
                out[row, j] += s
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

    def describe(self) -> str:
        """One line for results."""
        return f"hashed bag of words ({self.dimensions} signed CRC-32 buckets, unit L2 norm)"


__all__ = ["HashedBagOfWords"]
