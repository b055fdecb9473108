"""WordNet 3.0 for mldp-text's SynTF, offline: an NLTK data directory from Debian's files.

NLTK's WordNet reader wants ``corpora/wordnet`` under one of ``nltk.data.path``
with the database files and a ``lexnames`` file.  Debian's ``wordnet-base`` +
``wordnet-sense-index`` ship the database (``/usr/share/wordnet``) without
``lexnames``; :func:`wordnet_data_dir` copies the files into a cache directory
and writes ``lexnames`` from the 45 standard lexicographer file names
(WordNet 3.0, ``lexnames(5WN)``).  Nothing is downloaded.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dpaudit.adapters._support import cache_dir, require
from dpaudit.errors import DPAuditError, InvalidArgumentError

#: WordNet's 45 lexicographer files in number order (WordNet 3.0, lexnames(5WN)).
_LEXNAMES: tuple[str, ...] = tuple(
    str.split(
        "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute "
        "noun.body noun.cognition noun.communication noun.event noun.feeling noun.food noun.group "
        "noun.location noun.motive noun.object noun.person noun.phenomenon noun.plant "
        "noun.possession noun.process noun.quantity noun.relation noun.shape noun.state "
        "noun.substance noun.time verb.body verb.change verb.cognition verb.communication "
        "verb.competition verb.consumption verb.contact verb.creation verb.emotion verb.motion "
        "verb.perception verb.possession verb.social verb.stative verb.weather adj.ppl"
    )
)
_SYNTACTIC_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}
#: Files NLTK's WordNet reader opens (``lexnames`` is written by the adapter).
_WORDNET_FILES: tuple[str, ...] = tuple(
    str.split(
        "adj.exc adv.exc cntlist.rev data.adj data.adv data.noun data.verb index.adj index.adv "
        "index.noun index.sense index.verb noun.exc verb.exc"
    )
)
DEBIAN_WORDNET = "/usr/share/wordnet"


def _nltk() -> Any:
    return require("nltk", "mldp", "the mldp-text adapter")


def _wordnet_source(explicit: str | None) -> Path | None:
    """A directory of WordNet 3.0 database files, or None when NLTK has its own."""
    if explicit:
        path = Path(explicit)
        if not (path / "data.noun").is_file():
            raise InvalidArgumentError("wordnet", explicit, "a directory of WordNet 3.0 files")
        return path
    env = os.environ.get("DPAUDIT_WORDNET")
    if env:
        return _wordnet_source(env)
    try:
        _nltk().data.find("corpora/wordnet")
        return None
    except LookupError:
        pass
    debian = Path(DEBIAN_WORDNET)
    if all((debian / f).is_file() for f in _WORDNET_FILES if f != "lexnames"):
        return debian
    raise DPAuditError(
        "mldp:syntf needs WordNet 3.0 and none was found: install Debian's wordnet-base and "
        "wordnet-sense-index (apt-get install wordnet-base wordnet-sense-index), or pass "
        "-p wordnet=DIR (a directory of WordNet database files), or set DPAUDIT_WORDNET"
    )


@functools.lru_cache(maxsize=4)
def wordnet_data_dir(explicit: str | None = None) -> str | None:
    """An NLTK data directory holding ``corpora/wordnet`` (created once in a cache), or None.

    NLTK refuses symbolic links out of its data root, so the database files are
    copied (≈ 30 MB, once per source directory) next to the ``lexnames`` file.
    """
    source = _wordnet_source(explicit)
    if source is None:
        return None
    tag = hashlib.sha256(str(source.resolve()).encode()).hexdigest()[:12]
    cache = cache_dir()
    root = cache / f"nltk-wordnet-{tag}"
    target = root / "corpora" / "wordnet"
    if (target / "lexnames").is_file():
        return str(root)
    cache.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix="wordnet-", dir=cache))
    corpus = staging / "corpora" / "wordnet"
    corpus.mkdir(parents=True)
    for name in _WORDNET_FILES:
        if not (source / name).is_file():
            shutil.rmtree(staging, ignore_errors=True)
            raise InvalidArgumentError("wordnet", str(source), f"a WordNet directory with {name}")
        shutil.copyfile(source / name, corpus / name)
    lines = (
        f"{i:02d}\t{n}\t{_SYNTACTIC_CATEGORY[n.split('.')[0]]}\n" for i, n in enumerate(_LEXNAMES)
    )
    (corpus / "lexnames").write_text("".join(lines), encoding="utf-8")
    try:
        staging.rename(root)  # atomic: a concurrent process either wins or finds it complete
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
    return str(root)


@contextmanager
def wordnet_on_path(explicit: str | None) -> Iterator[None]:
    """Put the WordNet NLTK data directory (if one is needed) on ``nltk.data.path``."""
    data = wordnet_data_dir(explicit)
    nltk = _nltk()
    if data is not None and data not in nltk.data.path:
        nltk.data.path.insert(0, data)  # stays: the lazy corpus is read on later calls too
    yield
