"""Downstream utility of privatised encodings: sentiment accuracy beside the clean encodings.

The OME reference (Lyu et al., SIGIR 2020, §4) splits the labelled sentences
800/200 (``train_test_split(test_size=0.2, random_state=1000)``), fits the
vocabulary on the training sentences, encodes every sentence and privatises it
once (local DP: each user perturbs their own encoding, so training *and* test
inputs are privatised), then trains a classifier on the bit vectors.  Here:

* the same split, vocabulary, GloVe max-pooling and encodings
  (:mod:`dpaudit.text.embedders`, :mod:`dpaudit.attacks.schemes`);
* ``accuracy``: trained and tested on privatised encodings;
  ``clean_accuracy``: the same classifier trained and tested on the clean
  (unperturbed) encodings of the same scheme.

**Classifier — deviation from the reference.**  The reference trains a Keras
``Dense(128, relu) → Dropout(0.5) → Dense(1, sigmoid)`` with plain SGD
(lr 0.01), batch 32, 50 epochs.  dpaudit uses scikit-learn (no deep-learning
framework): ``MLPClassifier(hidden_layer_sizes=(128,), activation="relu",
solver="sgd", learning_rate_init=0.01, momentum=0, batch_size=32, max_iter=50)``
— the same architecture, loss (log-loss on a logistic output), optimiser,
batch size and epochs, but without dropout (scikit-learn has none; its default
L2 penalty ``alpha=1e-4`` is the only regulariser) and with scikit-learn's
Glorot initialisation.  ``classifier="logistic"`` (``LogisticRegression``) is a
faster, deterministic alternative.  Training runs single-threaded: the
matrices are small and BLAS threads only add contention.

Lives in ``attacks/`` (not ``text/``) because it privatises with the encoding
schemes of :mod:`dpaudit.attacks.schemes`; ``text/`` never imports ``attacks/``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.attacks.experiment import config_rng
from dpaudit.attacks.schemes import build_scheme
from dpaudit.errors import InvalidArgumentError, OptionalDependencyError
from dpaudit.text.corpus import Corpus
from dpaudit.text.embedders import Embedder, fit_embedder
from dpaudit.validation import check_probability_open, check_seed

#: Classifiers accepted by :func:`train_and_score`.
CLASSIFIERS = ("mlp", "logistic")

#: The reference split: ``train_test_split(test_size=0.2, random_state=1000)``.
REFERENCE_TEST_SIZE = 0.2
REFERENCE_SPLIT_SEED = 1000


def _sklearn() -> Any:
    try:
        import sklearn
    except ImportError:
        raise OptionalDependencyError("scikit-learn", "text", "the utility classifier") from None
    return sklearn


def make_classifier(name: str, seed: int) -> Any:
    """An unfitted scikit-learn classifier (see the module docstring)."""
    _sklearn()
    if name == "mlp":
        from sklearn.neural_network import MLPClassifier

        return MLPClassifier(
            hidden_layer_sizes=(128,),
            activation="relu",
            solver="sgd",
            learning_rate_init=0.01,
            momentum=0.0,
            batch_size=32,
            max_iter=50,
            random_state=seed,
        )
    if name == "logistic":
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression(max_iter=2000)
    raise InvalidArgumentError("classifier", name, f"one of {', '.join(CLASSIFIERS)}")


def train_and_score(
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_test: np.ndarray,
    y_test: np.ndarray,
    classifier: str = "mlp",
    seed: int = 0,
) -> float:
    """Test accuracy of ``classifier`` trained on ``(x_train, y_train)``."""
    predicted = fit_predict(x_train, y_train, x_test, classifier, seed)
    return float(np.mean(predicted == np.asarray(y_test)))


def fit_predict(
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_test: np.ndarray,
    classifier: str = "mlp",
    seed: int = 0,
) -> np.ndarray:
    """The labels ``classifier``, trained on ``(x_train, y_train)``, predicts for ``x_test``."""
    if len(np.unique(y_train)) < 2:
        raise InvalidArgumentError("labels", "<one class>", "at least two classes in training")
    from sklearn.exceptions import ConvergenceWarning
    from threadpoolctl import threadpool_limits

    model = make_classifier(classifier, seed)
    with warnings.catch_warnings(), threadpool_limits(limits=1):
        # A fixed 50-epoch budget, as in the reference: not converging is expected.
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(np.asarray(x_train, dtype=np.float64), y_train)
        return np.asarray(model.predict(np.asarray(x_test, dtype=np.float64)))


@dataclass(frozen=True)
class UtilityData:
    """The reference split, embedded; shared by every scheme of a grid."""

    train_vectors: np.ndarray
    test_vectors: np.ndarray
    train_labels: np.ndarray
    test_labels: np.ndarray
    n_oov_only: int
    embedder: str
    source: str

    @property
    def all_vectors(self) -> np.ndarray:
        """Train and test vectors stacked (fixes OME's domain and the unary ``k``)."""
        return np.vstack([self.train_vectors, self.test_vectors])


def prepare_utility_data(
    corpus: Corpus,
    embedder: str = "glove",
    test_size: float = REFERENCE_TEST_SIZE,
    split_seed: int = REFERENCE_SPLIT_SEED,
) -> UtilityData:
    """Split ``corpus`` as the reference does, fit the embedder on the training part, embed."""
    if not corpus.has_labels:
        raise InvalidArgumentError(
            "data", corpus.source, "a labelled corpus (uci format, or --label-column)"
        )
    test_size = check_probability_open("test_size", test_size)
    split_seed = check_seed(split_seed, "split_seed")
    _sklearn()
    from sklearn.model_selection import train_test_split

    n_test = round(test_size * len(corpus))
    if n_test < 1 or len(corpus) - n_test < 2:
        raise InvalidArgumentError(
            "data", f"<{len(corpus)} sentences>", "enough sentences for a train/test split"
        )
    train, test = train_test_split(
        np.arange(len(corpus)), test_size=test_size, random_state=split_seed
    )
    train_sentences = [corpus.sentences[i] for i in train]
    test_sentences = [corpus.sentences[i] for i in test]
    model: Embedder = fit_embedder(embedder, train_sentences)
    counter = getattr(model, "known_word_counts", None)
    n_oov = 0
    if counter is not None:
        n_oov = int(np.count_nonzero(counter(train_sentences) == 0))
        n_oov += int(np.count_nonzero(counter(test_sentences) == 0))
    labels = np.asarray(corpus.labels)
    return UtilityData(
        train_vectors=model.embed(train_sentences),
        test_vectors=model.embed(test_sentences),
        train_labels=labels[train],
        test_labels=labels[test],
        n_oov_only=n_oov,
        embedder=embedder,
        source=corpus.source,
    )


@dataclass(frozen=True)
class UtilityResult:
    """Accuracy on privatised encodings beside the clean-encoding accuracy."""

    scheme: str
    epsilon: float
    params: dict[str, Any]
    accuracy: float
    clean_accuracy: float
    classifier: str
    n_train: int
    n_test: int
    n_oov_only: int
    embedder: str
    corpus: str
    seed: int
    #: Test sentences whose predicted label differs between the two classifiers (None when
    #: the clean accuracy was passed in): equal accuracies need not mean equal predictions.
    disagreements: int | None = None


def utility_experiment(
    data: UtilityData,
    scheme: str,
    epsilon: float,
    params: dict[str, Any] | None = None,
    seed: int = 0,
    classifier: str = "mlp",
    clean_accuracy: float | None = None,
) -> UtilityResult:
    """Train/test on privatised and on clean encodings of one scheme.

    ``clean_accuracy`` may be passed in when already known for this scheme
    (it does not depend on ε or λ), to skip the clean fit.
    """
    params = dict(params or {})
    seed = check_seed(seed)
    bit_scheme = build_scheme(scheme, epsilon, data.all_vectors, params)
    clean_train = bit_scheme.encode(data.train_vectors)
    clean_test = bit_scheme.encode(data.test_vectors)
    rng = config_rng(seed, "utility", scheme, epsilon, bit_scheme.params())
    noisy_train = bit_scheme.perturb(clean_train, rng)
    noisy_test = bit_scheme.perturb(clean_test, rng)
    predicted = fit_predict(noisy_train, data.train_labels, noisy_test, classifier, seed)
    accuracy = float(np.mean(predicted == data.test_labels))
    disagreements = None
    if clean_accuracy is None:
        clean = fit_predict(clean_train, data.train_labels, clean_test, classifier, seed)
        clean_accuracy = float(np.mean(clean == data.test_labels))
        disagreements = int(np.sum(clean != predicted))
    return UtilityResult(
        scheme=scheme,
        epsilon=float(epsilon),
        params=bit_scheme.params(),
        accuracy=accuracy,
        clean_accuracy=float(clean_accuracy),
        classifier=classifier,
        n_train=len(data.train_labels),
        n_test=len(data.test_labels),
        n_oov_only=data.n_oov_only,
        embedder=data.embedder,
        corpus=data.source,
        seed=seed,
        disagreements=disagreements,
    )
