"""DP-MLM as its released code runs: copied words and copied capitalisation.

The released ``dpmlm`` package (1.3.0, ``dpmlm_rewrite``; facts F3.7-F3.8 of the
audit's notes) does more than the paper's mechanism
(:class:`~dpaudit.mechanisms.rewriters.masked.MaskedRewriter`):

* a word in the stopword list (case-sensitive) or in ``string.punctuation``
  (a *substring* test, so ``"()"`` and the empty string count) is copied to the
  output verbatim, without noise;
* every other word is replaced by the masked LM's draw ``r = decode(v).strip()``,
  then ``r.capitalize()`` if the input word starts with a capital letter and
  ``r.lower()`` otherwise: the case of the input word is copied.

Both make the output's support depend on the input, so two documents that
differ in a stopword or in a word's capital letter have an infinite privacy
loss.  The output of a word is a string; the strings are numbered in one table
per rewriter (grown as documents are seen), and a document's declared matrix
covers the strings it can produce: any id beyond it is impossible under it.
Words are whitespace-separated here (the package uses ``nltk.word_tokenize``).
"""

from __future__ import annotations

import string
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.claims import TextClaim
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.rewriters.decoding import Decoding
from dpaudit.mechanisms.rewriters.masked import MaskedRewriter, draw_rows
from dpaudit.mechanisms.rewriters.strings import StringTable


@dataclass(frozen=True)
class ReleasedDPMLM:
    """The released ``dpmlm`` rewrite: :attr:`base`'s draws, plus copied words and case.

    Attributes:
        base: the paper's mechanism (model, decoding, claim) whose draws are post-processed.
        stopwords: words copied verbatim (the package uses nltk's English list).
        copy_case: capitalise or lower-case each draw after the input word.
    """

    base: MaskedRewriter
    stopwords: frozenset[str] = frozenset()
    copy_case: bool = True
    _table: StringTable = field(default_factory=StringTable, init=False, repr=False)
    _cache: dict[str, np.ndarray] = field(default_factory=dict, init=False, repr=False)

    #: Output ids number strings in the order this process first met them, so a rewrite's
    #: ids mean nothing to another process or to a later run: its audit units stay in
    #: this process and are not checkpointed (:func:`~dpaudit.auditors.rewriter.audit_rewriter`).
    ids_are_local = True

    @property
    def name(self) -> str:
        """Registry-style name."""
        return f"{self.base.name} (released code)"

    @property
    def model(self) -> Any:
        """The base mechanism's model."""
        return self.base.model

    @property
    def decoding(self) -> Decoding:
        """The base mechanism's per-word decoding."""
        return self.base.decoding

    @property
    def claim(self) -> TextClaim:
        """The paper's claim, which the released code is held to."""
        return self.base.claim

    @property
    def tokenizer(self) -> StringTable:
        """Decodes output ids (numbers of output strings) as the auditor's reports need."""
        return self._table

    def copied(self, word: str) -> bool:
        """True when the released code copies ``word`` verbatim (stopword or punctuation)."""
        return word in self.stopwords or word in string.punctuation

    def declared_matrix(self, document: str) -> np.ndarray:
        """``(n_words, K)`` log-distribution of each output word over the string table."""
        if document in self._cache:
            return self._cache[document]
        words = self.base.words(document)
        texts = self.base.token_texts
        rows = {w: i for i, w in enumerate(words) if not self.copied(w)}
        draws = self.base.declared_matrix(document) if rows else None
        targets = {}
        for style in sorted({self._style(w) for w in rows}):  # set order follows PYTHONHASHSEED
            targets[style] = np.asarray([self._table.add(_apply(style, t)) for t in texts])
        fixed = {i: self._table.add(w) for i, w in enumerate(words) if self.copied(w)}
        out = np.full((len(words), len(self._table.strings)), -np.inf)
        for i, j in fixed.items():
            out[i, j] = 0.0
        for w, i in rows.items():
            out[i] = _gather(draws[i], targets[self._style(w)], out.shape[1])  # type: ignore[index]
        out.setflags(write=False)
        self._cache.clear()  # keep one document: the auditor alternates two, cheaply rebuilt
        self._cache[document] = out
        return out

    def sample_ids(self, document: str, n: int, rng: np.random.Generator) -> list[np.ndarray]:
        """``n`` rewrites of ``document``: one output-string id per word."""
        if n < 1:
            raise InvalidArgumentError("n", n, "an integer >= 1")
        return draw_rows(self.declared_matrix(document), n, rng)

    def sample(self, document: str, n: int, rng: np.random.Generator) -> list[str]:
        """``n`` rewrites as text."""
        return [self.decode(y) for y in self.sample_ids(document, n, rng)]

    def decode(self, ids: np.ndarray) -> str:
        """Output words joined by single spaces."""
        return self._table.decode(ids)

    def encode_output(self, text: str, document: str | None = None) -> np.ndarray:
        """The ids of an output text's words (new words are added to the table)."""
        return np.asarray([self._table.add(w) for w in text.split(" ")], dtype=np.int64)

    def declared_log_probs(
        self, document: str, outputs: list[np.ndarray]
    ) -> Iterator[tuple[int, np.ndarray]]:
        """``(i, L)``: the document's declared matrix for every output."""
        matrix = self.declared_matrix(document)
        for i, y in enumerate(outputs):
            if len(y) != matrix.shape[0] or np.any(np.asarray(y) >= matrix.shape[1]):
                raise InvalidArgumentError(f"outputs[{i}]", y, "an output of this document")
            yield i, matrix

    def token_log_probs(self, document: str, outputs: list[np.ndarray]) -> list[np.ndarray]:
        """Exact ``ln p`` of every output word; ``-inf`` for strings the document cannot give."""
        matrix = self.declared_matrix(document)
        out = []
        for y in outputs:
            y = np.asarray(y, dtype=np.int64)
            if len(y) != matrix.shape[0]:
                out.append(np.full(len(y), -np.inf))
                continue
            inside = y < matrix.shape[1]
            values = np.full(len(y), -np.inf)
            values[inside] = matrix[np.flatnonzero(inside), y[inside]]
            out.append(values)
        return out

    def length_cap(self, document: str) -> int:
        """The words a rewrite of ``document`` releases: one per input word."""
        return len(document.split())

    def tokens_released(self, output: np.ndarray) -> int:
        """Words released (copied words included, as the package counts ε per word)."""
        return len(output)

    def describe(self) -> str:
        """One line for reports."""
        case = ", case copied" if self.copy_case else ""
        return (
            f"{self.name}: {len(self.stopwords)} stopwords and punctuation copied{case}; "
            f"others {self.base.decoding.describe()}; claim {self.claim.describe()}"
        )

    def _style(self, word: str) -> str:
        if not self.copy_case:
            return "keep"
        return "capitalize" if word[:1].isupper() else "lower"


def _apply(style: str, text: str) -> str:
    if style == "capitalize":
        return text.capitalize()
    if style == "lower":
        return text.lower()
    return text


def _gather(log_probs: np.ndarray, target: np.ndarray, width: int) -> np.ndarray:
    """Log-mass of the tokens mapped to each target id (``-inf`` where none is)."""
    order = np.argsort(target, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(target[order]) != 0])
    out = np.full(width, -np.inf)
    with np.errstate(divide="ignore"):
        out[target[order[starts]]] = np.logaddexp.reduceat(log_probs[order], starts)
    return out
