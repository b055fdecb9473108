"""``dpaudit utility``: sentiment accuracy on privatised encodings beside clean encodings.

The OME reference protocol (Lyu et al., SIGIR 2020): an 800/200 split
(``random_state=1000``), GloVe max-pooled sentence vectors, encodings
privatised once per sentence, a 128-unit MLP trained with plain SGD.  Without
``--data`` the corpus is the UCI yelp file shipped with dpaudit.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from dpaudit.cli.cmd_attack import (
    CONFIDENCE,
    add_corpus_args,
    add_scheme_args,
    check_scheme_args,
    claim_verdict,
    describe_params,
    load_corpus_from_args,
    proportion_interval,
)
from dpaudit.cli.common import add_json, add_seed, emit
from dpaudit.cli.main import command_help
from dpaudit.progress import progress


def register(sub: Any) -> None:
    """Add the ``utility`` sub-command."""
    from dpaudit.attacks.utility import CLASSIFIERS

    p = sub.add_parser("utility", help=command_help("utility"), description=__doc__)
    add_corpus_args(p)
    add_scheme_args(p)
    p.add_argument(
        "--classifier",
        choices=CLASSIFIERS,
        default="mlp",
        help="mlp: Dense(128)+SGD as the reference (default); logistic: faster",
    )
    add_seed(p)
    add_json(p)
    p.set_defaults(func=run)


def _render(result: dict[str, Any]) -> str:
    n = result["n_test"]
    chance = result["chance_accuracy"]
    if result["accuracy_interval"][0] > chance:
        signal = "privatised encodings keep a signal: their interval lies above chance"
    else:
        signal = "no signal shown: the interval for privatised encodings reaches chance"

    def acc(key: str) -> str:
        low, high = result[f"{key}_interval"]
        return f"{result[key]:.4f} [{low:.4f}, {high:.4f}]"

    return "\n".join(
        [
            f"utility: {result['scheme'].upper()} claimed ε = {result['epsilon']:g} "
            f"({describe_params(result['params'])})",
            f"  claim: {claim_verdict(result['epsilon'], result['true_epsilon'])}",
            f"  corpus {result['corpus']} ({result['embedder']}): {result['n_train']} train / "
            f"{n} test sentences ({result['n_oov_only']} without any known word); "
            f"classifier {result['classifier']}",
            f"  test accuracy, {result['confidence']:.0%} interval each "
            f"(Clopper–Pearson over the {n} test sentences):",
            f"    privatised encodings  {acc('accuracy')}",
            f"    clean encodings       {acc('clean_accuracy')}",
            f"    chance                {chance:.4f}   (always the majority training label)",
            f"  {signal}",
            *_same_accuracy_note(result),
        ]
    )


def _same_accuracy_note(result: dict[str, Any]) -> list[str]:
    """Why two equal accuracies need not mean that privatisation changed nothing."""
    k = result.get("disagreements")
    if result["accuracy"] != result["clean_accuracy"] or k is None:
        return []
    n = result["n_test"]
    if k == 0:
        return [f"  the two classifiers predict the same label for all {n} test sentences"]
    return [
        f"  equal accuracies, different predictions: the classifiers disagree on {k} of {n} "
        f"test sentences and still get the same number right; differences smaller than the "
        f"intervals' width cannot be resolved with {n} sentences"
    ]


def run(args: argparse.Namespace) -> int:
    """Validate the options, split and embed the corpus, train twice, print."""
    from dpaudit.attacks.schemes import build_scheme
    from dpaudit.attacks.utility import prepare_utility_data, utility_experiment

    seed, params = check_scheme_args(args)
    with progress(2, "utility", unit="steps") as bar:
        bar.set_description("utility: reading and embedding the corpus")
        corpus = load_corpus_from_args(args)
        data = prepare_utility_data(corpus, args.embedder)
        bar.update(1)
        bar.set_description(f"utility: training on privatised and clean encodings ({args.scheme})")
        result = utility_experiment(data, args.scheme, args.epsilon, params, seed, args.classifier)
        bar.update(1)
    truth = build_scheme(args.scheme, args.epsilon, data.all_vectors, params).mechanism.truth()
    record: dict[str, Any] = {
        **dataclasses.asdict(result),
        "true_epsilon": None if truth is None else float(truth.true_epsilon),
        "chance_accuracy": majority_rate(data.train_labels, data.test_labels),
        "confidence": CONFIDENCE,
    }
    for key in ("accuracy", "clean_accuracy"):
        record[f"{key}_interval"] = proportion_interval(record[key], result.n_test)
    emit(args, record, _render)
    return 0


def majority_rate(train_labels: Any, test_labels: Any) -> float:
    """Test accuracy of always guessing the most frequent training label (the chance level)."""
    import numpy as np

    values, counts = np.unique(np.asarray(train_labels), return_counts=True)
    return float(np.mean(np.asarray(test_labels) == values[np.argmax(counts)]))
