"""Labelled sentence corpora: readers for four file formats and the bundled yelp corpus.

Formats (``format=`` / ``--format``):

* ``uci`` — the UCI Sentiment Labelled Sentences layout, ``sentence<TAB>label``
  with an integer label (Kotzias et al., KDD 2015); the last tab separates the label;
* ``csv`` — a header row; the sentence is in column ``text_column`` (default
  ``text``), the label, if any, in ``label_column``;
* ``jsonl`` — one JSON object per line with the same two keys;
* ``lines`` — plain text, one sentence per line, no labels.

``None`` (the default) picks the format from the file: ``.csv`` → csv,
``.jsonl``/``.ndjson`` → jsonl, otherwise ``uci`` when the first non-blank line
ends in ``<TAB>integer`` and ``lines`` when it does not.

Blank lines are skipped.  Everything else that is not a sentence of the chosen
format — a missing file, a directory, an unreadable, empty, binary or
non-UTF-8 file, a malformed line, a missing column — raises
:class:`CorpusError` (a :class:`~dpaudit.errors.DPAuditError`: exit 2 in the
CLI) that names the file and, where it applies, the line.  Error messages never
quote corpus text.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from dpaudit.errors import DPAuditError, InvalidArgumentError

#: Accepted values of ``format``.
CORPUS_FORMATS = ("uci", "csv", "jsonl", "lines")

#: Default CSV/JSONL column holding the sentence.
DEFAULT_TEXT_COLUMN = "text"

#: Bundled corpus (see ``dpaudit/data/README-sentiment-labelled.md``).
DEFAULT_CORPUS_FILE = "yelp_labelled.txt"


class CorpusError(DPAuditError, ValueError):
    """A corpus file cannot be read as sentences of the requested format."""


@dataclass(frozen=True)
class Corpus:
    """Sentences with optional integer class labels.

    ``labels[i]`` is an index into ``label_names`` (the original label values as
    text, numerically sorted when they are all integers), or ``labels`` is None.
    """

    sentences: tuple[str, ...]
    labels: np.ndarray | None
    label_names: tuple[str, ...]
    source: str
    format: str

    def __post_init__(self) -> None:
        if self.labels is not None and len(self.labels) != len(self.sentences):
            raise InvalidArgumentError(
                "labels", f"<{len(self.labels)} labels>", f"{len(self.sentences)} labels"
            )

    def __len__(self) -> int:
        return len(self.sentences)

    @property
    def has_labels(self) -> bool:
        """Whether every sentence carries a label."""
        return self.labels is not None

    def subset(self, indices: Sequence[int] | np.ndarray) -> Corpus:
        """The corpus restricted to ``indices`` (in that order)."""
        idx = np.asarray(indices, dtype=np.int64)
        labels = None if self.labels is None else self.labels[idx]
        sentences = tuple(self.sentences[i] for i in idx)
        return Corpus(sentences, labels, self.label_names, self.source, self.format)


# ---------------------------------------------------------------------- entry points
def read_corpus(
    path: str | os.PathLike[str],
    format: str | None = None,
    text_column: str | None = None,
    label_column: str | None = None,
) -> Corpus:
    """Read the corpus at ``path`` (see the module docstring for formats and errors)."""
    if format is not None and format not in CORPUS_FORMATS:
        raise InvalidArgumentError("format", format, f"one of {', '.join(CORPUS_FORMATS)}")
    target = Path(path)
    text = _read_text(target)
    fmt = format or _detect_format(target, text)
    if fmt in ("uci", "lines") and (text_column is not None or label_column is not None):
        raise InvalidArgumentError(
            "text_column/label_column", text_column or label_column, f"unused for format {fmt}"
        )
    where = str(target)
    if fmt == "uci":
        sentences, raw_labels = _parse_uci(text, where)
    elif fmt == "lines":
        sentences, raw_labels = _parse_lines(text), None
    elif fmt == "csv":
        sentences, raw_labels = _parse_csv(
            text, where, text_column or DEFAULT_TEXT_COLUMN, label_column
        )
    else:
        sentences, raw_labels = _parse_jsonl(
            text, where, text_column or DEFAULT_TEXT_COLUMN, label_column
        )
    if not sentences:
        raise CorpusError(f"corpus {where} contains no sentences")
    labels, names = _encode_labels(raw_labels)
    return Corpus(tuple(sentences), labels, names, where, fmt)


def default_corpus() -> Corpus:
    """The bundled UCI yelp corpus (1000 labelled English sentences, CC BY 4.0)."""
    ref = resources.files("dpaudit") / "data" / DEFAULT_CORPUS_FILE
    with resources.as_file(ref) as file:
        corpus = read_corpus(file, format="uci")
    return Corpus(
        corpus.sentences,
        corpus.labels,
        corpus.label_names,
        f"bundled:{DEFAULT_CORPUS_FILE}",
        "uci",
    )


def load_corpus(
    path: str | os.PathLike[str] | None,
    format: str | None = None,
    text_column: str | None = None,
    label_column: str | None = None,
) -> Corpus:
    """:func:`read_corpus` for a path, :func:`default_corpus` for None."""
    if path is None:
        if format is not None or text_column is not None or label_column is not None:
            raise InvalidArgumentError("data", None, "a corpus path when a format or column is set")
        return default_corpus()
    return read_corpus(path, format, text_column, label_column)


# --------------------------------------------------------------------------- reading
def _read_text(path: Path) -> str:
    if not path.exists():
        raise CorpusError(f"corpus {path} does not exist")
    if path.is_dir():
        raise CorpusError(f"corpus {path} is a directory: expected a file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CorpusError(f"corpus {path} cannot be read ({exc.strerror or exc})") from None
    if not data.strip():
        raise CorpusError(f"corpus {path} is empty")
    if b"\x00" in data:
        raise CorpusError(f"corpus {path} looks binary (it contains NUL bytes): expected text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CorpusError(
            f"corpus {path} is not UTF-8 text (invalid byte at offset {exc.start})"
        ) from None
    return text


def _detect_format(path: Path, text: str) -> str:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    first = next((line for line in text.splitlines() if line.strip()), "")
    head, tab, label = first.rpartition("\t")
    if tab and head.strip() and _is_int(label):
        return "uci"
    return "lines"


def _is_int(text: str) -> bool:
    try:
        int(text.strip())
    except ValueError:
        return False
    return True


def _parse_uci(text: str, where: str) -> tuple[list[str], list[str]]:
    sentences: list[str] = []
    labels: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        sentence, tab, label = line.rpartition("\t")
        if not tab or not sentence.strip() or not _is_int(label):
            raise CorpusError(
                f"corpus {where}, line {number}: expected SENTENCE<TAB>LABEL with an integer "
                "label (UCI format; use --format to choose another)"
            )
        sentences.append(sentence)
        labels.append(str(int(label.strip())))
    return sentences, labels


def _parse_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def _parse_csv(
    text: str, where: str, text_column: str, label_column: str | None
) -> tuple[list[str], list[str] | None]:
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        header = reader.fieldnames or []
        _require_columns(where, header, text_column, label_column)
        sentences: list[str] = []
        labels: list[str] = []
        for row in reader:
            number = reader.line_num
            if not any((v or "").strip() for v in row.values() if isinstance(v, str)):
                continue
            sentence = row.get(text_column)
            if sentence is None or not sentence.strip():
                raise CorpusError(f"corpus {where}, line {number}: empty {text_column!r} cell")
            sentences.append(sentence)
            if label_column is not None:
                labels.append(_label_text(where, number, label_column, row.get(label_column)))
    except csv.Error as exc:
        raise CorpusError(f"corpus {where} is not valid CSV ({exc})") from None
    return sentences, (labels if label_column is not None else None)


def _require_columns(
    where: str, header: Sequence[str], text_column: str, label_column: str | None
) -> None:
    for column in (text_column, label_column):
        if column is not None and column not in header:
            shown = ", ".join(repr(h) for h in header[:20]) or "none"
            raise CorpusError(f"corpus {where} has no column {column!r} (columns: {shown})")


def _parse_jsonl(
    text: str, where: str, text_column: str, label_column: str | None
) -> tuple[list[str], list[str] | None]:
    sentences: list[str] = []
    labels: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            raise CorpusError(f"corpus {where}, line {number}: not valid JSON (JSONL)") from None
        if not isinstance(record, dict):
            raise CorpusError(f"corpus {where}, line {number}: expected a JSON object")
        for column in (text_column, label_column):
            if column is not None and column not in record:
                raise CorpusError(f"corpus {where}, line {number}: no key {column!r}")
        sentence = record[text_column]
        if not isinstance(sentence, str) or not sentence.strip():
            raise CorpusError(
                f"corpus {where}, line {number}: {text_column!r} must be a non-empty string"
            )
        sentences.append(sentence)
        if label_column is not None:
            labels.append(_label_text(where, number, label_column, record[label_column]))
    return sentences, (labels if label_column is not None else None)


def _label_text(where: str, number: int, column: str, value: object) -> str:
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list)):
        raise CorpusError(f"corpus {where}, line {number}: label {column!r} is missing or invalid")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    if not text:
        raise CorpusError(f"corpus {where}, line {number}: empty label {column!r}")
    return text


def _encode_labels(raw: list[str] | None) -> tuple[np.ndarray | None, tuple[str, ...]]:
    if raw is None:
        return None, ()
    names = sorted(set(raw))
    if all(_is_int(n) for n in names):
        names = [str(v) for v in sorted({int(n) for n in names})]
        raw = [str(int(v)) for v in raw]
    code = {name: i for i, name in enumerate(names)}
    return np.array([code[v] for v in raw], dtype=np.int64), tuple(names)
