"""NLTK data for released text code, offline: the user's own data, else a stated substitute.

The released ``dpmlm`` package reads NLTK's English stopword list when it is
imported and splits words with ``nltk.word_tokenize`` (Punkt sentence
splitting first); ``privfill`` splits sentences with Punkt.  Both expect the
user to have run ``nltk.download``, which dpaudit never does (nothing is
downloaded at run time, and these machines cannot).

:func:`ensure_nltk_data` uses NLTK's data wherever NLTK already finds it.
Where it does not, it writes a substitute into dpaudit's cache and puts that
first on ``nltk.data.path``:

* ``corpora/stopwords/english``: NLTK's English stopword list, the 179 words
  of NLTK's ``stopwords`` corpus (a fact about that corpus, listed below);
* ``tokenizers/punkt_tab/english``: an *empty* Punkt parameter set, so
  sentences are split at sentence punctuation with no learned abbreviations
  (NLTK's trained English model also keeps "Dr." or "e.g." inside a sentence;
  the audit's documents contain none).

The result says which was used, so a report can state it.  ``nltk.download``
is replaced by a function that refuses while the released code is imported,
so no network access is ever attempted.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from dpaudit.adapters._support import cache_dir, require

#: NLTK's English stopword list (``nltk_data/corpora/stopwords/english``, 179 words).
NLTK_ENGLISH_STOPWORDS: tuple[str, ...] = tuple(
    """i me my myself we our ours ourselves you you're you've you'll you'd your yours
    yourself yourselves he him his himself she she's her hers herself it it's its itself
    they them their theirs themselves what which who whom this that that'll these those am
    is are was were be been being have has had having do does did doing a an the and but
    if or because as until while of at by for with about against between into through
    during before after above below to from up down in out on off over under again further
    then once here there when where why how all any both each few more most other some such
    no nor not only own same so than too very s t can will just don don't should should've
    now d ll m o re ve y ain aren aren't couldn couldn't didn didn't doesn doesn't hadn
    hadn't hasn hasn't haven haven't isn isn't ma mightn mightn't mustn mustn't needn
    needn't shan shan't shouldn shouldn't wasn wasn't weren weren't won won't wouldn
    wouldn't""".split()  # noqa: SIM905  (a word list reads better as text)
)

_PUNKT_FILES = ("collocations.tab", "sent_starters.txt", "abbrev_types.txt", "ortho_context.tab")


@dataclass(frozen=True)
class NltkData:
    """Where the NLTK data a released package reads came from.

    Attributes:
        source: ``"installed"`` (NLTK found its own data) or ``"substitute"``.
        path: the directory put first on ``nltk.data.path`` (substitute only).
    """

    source: str
    path: str | None

    def describe(self) -> str:
        """One line for reports."""
        if self.source == "installed":
            return "NLTK data: the user's installed stopwords and Punkt models"
        return (
            "NLTK data: dpaudit's substitute (NLTK's 179 English stopwords; Punkt without "
            f"learned abbreviations) in {self.path}"
        )


def _installed(nltk: object) -> bool:
    try:
        nltk.data.find("corpora/stopwords/english")  # type: ignore[attr-defined]
        nltk.data.find("tokenizers/punkt_tab/english/")  # type: ignore[attr-defined]
    except LookupError:
        return False
    return True


def _write_substitute(root: Path) -> None:
    stopwords = root / "corpora" / "stopwords"
    stopwords.mkdir(parents=True, exist_ok=True)
    target = stopwords / "english"
    if not target.exists():
        partial = target.with_name(f".english.{os.getpid()}")
        partial.write_text("\n".join(NLTK_ENGLISH_STOPWORDS) + "\n", encoding="utf-8")
        partial.replace(target)
    punkt = root / "tokenizers" / "punkt_tab" / "english"
    punkt.mkdir(parents=True, exist_ok=True)
    for name in _PUNKT_FILES:
        (punkt / name).touch()
    # privfill looks for the old pickled model's directory before it would download it.
    (root / "tokenizers" / "punkt").mkdir(exist_ok=True)


def ensure_nltk_data(root: str | os.PathLike[str] | None = None) -> NltkData:
    """Make NLTK's stopwords and Punkt findable without downloading (see the module doc)."""
    nltk = require("nltk", "released-lm", "the released dpmlm and privfill packages")
    if _installed(nltk):
        return NltkData("installed", None)
    path = Path(root) if root is not None else cache_dir() / "nltk_data"
    _write_substitute(path)
    if str(path) not in nltk.data.path:
        nltk.data.path.insert(0, str(path))
    return NltkData("substitute", str(path))


@contextmanager
def no_downloads() -> Iterator[None]:
    """Replace ``nltk.download`` by a refusal while released code is imported."""
    nltk = require("nltk", "released-lm", "the released dpmlm and privfill packages")

    def refuse(*args: object, **kwargs: object) -> bool:
        return False

    original = nltk.download
    nltk.download = refuse
    try:
        yield
    finally:
        nltk.download = original
