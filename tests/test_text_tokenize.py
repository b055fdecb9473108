"""Keras-exact tokenisation, vocabulary ranks and padding, from hand-worked examples."""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.errors import InvalidArgumentError, InvalidTypeError
from dpaudit.text.tokenize import KERAS_FILTERS, Vocabulary, pad_sequences, split_words


def test_split_words_lowercases_and_strips_keras_filters() -> None:
    assert split_words("Wow... Loved this place.") == ["wow", "loved", "this", "place"]
    assert split_words("Crust is not good.") == ["crust", "is", "not", "good"]
    # Tabs and newlines are filters; repeated separators give no empty words.
    assert split_words("a\tb\n\nc   d") == ["a", "b", "c", "d"]


def test_split_words_keeps_apostrophes_and_non_ascii_letters() -> None:
    # "'" is not a Keras filter, "é" is a letter, "—" (em dash) is not a filter.
    assert split_words("I wasn't sure—Café!") == ["i", "wasn't", "sure—café"]


def test_every_filter_character_separates_words() -> None:
    for ch in KERAS_FILTERS:
        assert split_words(f"x{ch}y") == ["x", "y"], repr(ch)


def test_split_words_rejects_non_strings() -> None:
    with pytest.raises(InvalidTypeError):
        split_words(3)  # type: ignore[arg-type]


def test_vocabulary_ranks_by_frequency_then_first_occurrence() -> None:
    # counts: b 1, a 2, c 2, d 1 -> a (first of the 2s), c, b (first of the 1s), d
    vocab = Vocabulary.fit(["b a", "A c!", "c d"])
    assert vocab.words == ("a", "c", "b", "d")
    assert [vocab.rank(w) for w in ("a", "c", "b", "d")] == [1, 2, 3, 4]
    assert vocab.rank("zzz") is None


def test_sequences_drop_unknown_and_too_rare_words() -> None:
    vocab = Vocabulary.fit(["b a", "a c", "c d"], num_words=3)
    # Keras keeps ranks < num_words: a (1), c (2); b (3) and d (4) are dropped.
    assert vocab.used_words == ("a", "c")
    assert vocab.sequence("d c b a unknown") == [2, 1]
    assert vocab.sequences(["", "a a"]) == [[], [1, 1]]


def test_pad_sequences_pre_padding_and_pre_truncation() -> None:
    out = pad_sequences([[1, 2, 3], [4], []], maxlen=2)
    np.testing.assert_array_equal(out, [[2, 3], [0, 4], [0, 0]])
    assert out.dtype == np.int64
    np.testing.assert_array_equal(pad_sequences([[7]], maxlen=3), [[0, 0, 7]])


def test_pad_sequences_rejects_bad_maxlen() -> None:
    with pytest.raises(InvalidArgumentError, match="maxlen"):
        pad_sequences([[1]], maxlen=0)
