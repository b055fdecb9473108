"""Corpus readers: the four formats, format detection, every bad-input case, the bundled corpus."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from dpaudit.errors import DPAuditError, InvalidArgumentError
from dpaudit.text.corpus import CorpusError, default_corpus, load_corpus, read_corpus


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def test_uci_format_with_blank_lines_bom_and_tabs_in_sentences(tmp_path: Path) -> None:
    path = write(tmp_path, "c.txt", "\ufeffGreat food.\t1\n\nMeh\tnot\tgood.\t0\r\nOk!\t1\n")
    corpus = read_corpus(path)
    assert corpus.format == "uci"
    assert corpus.sentences == ("Great food.", "Meh\tnot\tgood.", "Ok!")
    np.testing.assert_array_equal(corpus.labels, [1, 0, 1])
    assert corpus.label_names == ("0", "1")
    assert len(corpus) == 3 and corpus.has_labels


def test_lines_format_has_no_labels(tmp_path: Path) -> None:
    corpus = read_corpus(write(tmp_path, "c.txt", "first sentence\n\n second one \n"))
    assert corpus.format == "lines"
    assert corpus.sentences == ("first sentence", " second one ")
    assert corpus.labels is None and not corpus.has_labels


def test_csv_with_named_columns_and_quoted_commas(tmp_path: Path) -> None:
    text = 'id,review,stars\n1,"Good, really good",pos\n2,Bad,neg\n,,\n3,"Multi\nline",pos\n'
    corpus = read_corpus(write(tmp_path, "c.csv", text), text_column="review", label_column="stars")
    assert corpus.format == "csv"
    assert corpus.sentences == ("Good, really good", "Bad", "Multi\nline")
    assert corpus.label_names == ("neg", "pos")
    np.testing.assert_array_equal(corpus.labels, [1, 0, 1])


def test_jsonl_with_default_text_key_and_integer_labels(tmp_path: Path) -> None:
    lines = [{"text": "one", "y": 1}, {"text": "two", "y": 0.0}, {"text": "three", "y": 10}]
    path = write(tmp_path, "c.jsonl", "\n".join(json.dumps(r) for r in lines) + "\n\n")
    corpus = read_corpus(path, label_column="y")
    assert corpus.format == "jsonl"
    assert corpus.label_names == ("0", "1", "10")  # numeric order, not text order
    np.testing.assert_array_equal(corpus.labels, [1, 0, 2])


def test_subset_keeps_labels_aligned(tmp_path: Path) -> None:
    corpus = read_corpus(write(tmp_path, "c.txt", "a\t0\nb\t1\nc\t1\n"))
    sub = corpus.subset([2, 0])
    assert sub.sentences == ("c", "a")
    np.testing.assert_array_equal(sub.labels, [1, 0])


@pytest.mark.parametrize(
    ("name", "content", "kwargs", "message"),
    [
        ("empty.txt", "", {}, "is empty"),
        ("blank.txt", "  \n\n\t\n", {}, "is empty"),
        ("bin.txt", b"abc\x00def\t1\n", {}, "binary"),
        ("latin1.txt", "caf\xe9\t1\n".encode("latin-1"), {}, "not UTF-8"),
        ("bad.txt", "good\t1\nno label here\n", {"format": "uci"}, "line 2"),
        ("bad2.txt", "good\tpositive\n", {"format": "uci"}, "line 1"),
        ("c.csv", "a,b\n1,2\n", {}, "no column 'text'"),
        ("c2.csv", "text,y\nhi,1\n", {"label_column": "label"}, "no column 'label'"),
        ("c3.csv", "text,y\nhi,1\n,0\n", {"label_column": "y"}, "empty 'text'"),
        ("c4.csv", "text,y\nhi,\n", {"label_column": "y"}, "empty label"),
        ("c.jsonl", '{"text": "a"}\n{oops\n', {}, "line 2: not valid JSON"),
        ("c2.jsonl", '["a"]\n', {}, "expected a JSON object"),
        ("c3.jsonl", '{"sentence": "a"}\n', {}, "no key 'text'"),
        ("c4.jsonl", '{"text": 5}\n', {}, "non-empty string"),
        ("c5.jsonl", '{"text": "a", "y": null}\n', {"label_column": "y"}, "label 'y'"),
    ],
)
def test_bad_corpora_raise_corpus_errors(
    tmp_path: Path, name: str, content: str | bytes, kwargs: dict, message: str
) -> None:
    path = write(tmp_path, name, content)
    with pytest.raises(CorpusError, match=message) as info:
        read_corpus(path, **kwargs)
    assert isinstance(info.value, DPAuditError)
    assert str(path) in str(info.value)


def test_error_messages_do_not_quote_corpus_text(tmp_path: Path) -> None:
    path = write(tmp_path, "c.txt", "<script>secret</script> no tab\n")
    with pytest.raises(CorpusError) as info:
        read_corpus(path, format="uci")
    assert "secret" not in str(info.value)


def test_missing_file_directory_and_unreadable_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(CorpusError, match="does not exist"):
        read_corpus(tmp_path / "nope.txt")
    with pytest.raises(CorpusError, match="is a directory"):
        read_corpus(tmp_path)
    path = write(tmp_path, "c.txt", "a\t1\n")

    def refuse(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied")

    # Root ignores file modes, so simulate the failing read.
    monkeypatch.setattr(Path, "read_bytes", refuse)
    with pytest.raises(CorpusError, match="cannot be read"):
        read_corpus(path)


def test_bad_arguments() -> None:
    with pytest.raises(InvalidArgumentError, match="format"):
        read_corpus("x.txt", format="xml")
    with pytest.raises(InvalidArgumentError, match="corpus path"):
        load_corpus(None, format="csv")


def test_columns_are_refused_for_line_formats(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentError, match="unused"):
        read_corpus(write(tmp_path, "c.txt", "a\t1\n"), text_column="text")


def test_bundled_corpus_is_the_uci_yelp_file() -> None:
    corpus = default_corpus()
    assert len(corpus) == 1000
    assert corpus.source == "bundled:yelp_labelled.txt"
    assert corpus.label_names == ("0", "1")
    assert int(np.sum(corpus.labels)) == 500  # 500 positive, 500 negative
    assert corpus.sentences[0] == "Wow... Loved this place."
    assert load_corpus(None).sentences == corpus.sentences
