"""``dpaudit utility``: sentiment accuracy on privatised encodings beside clean encodings.

The OME reference protocol (Lyu et al., SIGIR 2020): an 800/200 split
(``random_state=1000``), GloVe max-pooled sentence vectors, encodings
privatised once per sentence, a 128-unit MLP trained with plain SGD.  Without
``--data`` the corpus is the UCI yelp file shipped with dpaudit.
"""

from __future__ import annotations

import argparse
from typing import Any

from dpaudit.cli.cmd_attack import (
    add_corpus_args,
    add_scheme_args,
    check_scheme_args,
    load_corpus_from_args,
)
from dpaudit.cli.common import add_json, add_seed, emit


def register(sub: Any) -> None:
    """Add the ``utility`` sub-command."""
    from dpaudit.attacks.utility import CLASSIFIERS

    p = sub.add_parser(
        "utility", help="downstream accuracy of privatised text encodings", description=__doc__
    )
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
    return (
        f"{result['scheme']} ε={result['epsilon']:g} {result['params']}\n"
        f"  test accuracy on privatised encodings {result['accuracy']:.4f}, "
        f"on clean encodings {result['clean_accuracy']:.4f} "
        f"({result['classifier']}, {result['n_train']} train / {result['n_test']} test, "
        f"{result['n_oov_only']} sentences without any known word)"
    )


def run(args: argparse.Namespace) -> int:
    """Validate the options, split and embed the corpus, train twice, print."""
    from dpaudit.attacks.utility import prepare_utility_data, utility_experiment

    seed, params = check_scheme_args(args)
    corpus = load_corpus_from_args(args)
    data = prepare_utility_data(corpus, args.embedder)
    result = utility_experiment(data, args.scheme, args.epsilon, params, seed, args.classifier)
    emit(args, result, lambda r: _render(r.__dict__))
    return 0
