"""``dpaudit attack hoho``: link and reconstruct privatised sentence encodings.

HoHo's linking and reconstruction attacks (Salem & Zanella-Béguelin 2021, §3.1)
beside the optimal attacks (exact likelihood ratio over all bits, per-bit MAP),
on OME, SUE or OUE encodings of GloVe sentence vectors.  Without ``--data`` the
corpus is the UCI yelp file shipped with dpaudit.
"""

from __future__ import annotations

import argparse
from typing import Any

from dpaudit.cli.common import add_json, add_param, add_seed, emit, parse_params
from dpaudit.cli.main import command_help
from dpaudit.cli.parser import integer
from dpaudit.errors import InvalidArgumentError
from dpaudit.validation import check_epsilon, check_seed


def add_corpus_args(parser: argparse.ArgumentParser) -> None:
    """``--data``, ``--format``, ``--text-column``, ``--label-column``, ``--embedder``."""
    from dpaudit.text.corpus import CORPUS_FORMATS
    from dpaudit.text.embedders import EMBEDDER_NAMES

    parser.add_argument(
        "--data",
        default=None,
        metavar="PATH",
        help="corpus file (default: the UCI yelp corpus shipped with dpaudit)",
    )
    parser.add_argument(
        "--format",
        choices=CORPUS_FORMATS,
        default=None,
        help="uci (sentence<TAB>label), csv, jsonl or lines (default: from the file)",
    )
    parser.add_argument(
        "--text-column", default=None, metavar="C", help="csv/jsonl column holding the sentence"
    )
    parser.add_argument(
        "--label-column", default=None, metavar="L", help="csv/jsonl column holding the label"
    )
    parser.add_argument(
        "--embedder",
        choices=EMBEDDER_NAMES,
        default="glove",
        help="glove: GloVe 6B 50-d max-pooled as OME (default); minilm: extra 'minilm'",
    )


def add_scheme_args(parser: argparse.ArgumentParser) -> None:
    """``--scheme``, ``--epsilon`` and ``-p NAME=VALUE``."""
    from dpaudit.attacks.schemes import SCHEME_NAMES

    parser.add_argument("--scheme", choices=SCHEME_NAMES, required=True, help="privatisation")
    parser.add_argument("--epsilon", type=float, required=True, help="claimed ε (> 0)")
    add_param(parser, "mechanism parameter, e.g. -p lambda=10 (OME) or -p k=5 (SUE/OUE)")


def check_scheme_args(args: argparse.Namespace) -> tuple[int, dict[str, str]]:
    """Validate :func:`add_scheme_args` options and ``--seed``; return the seed and ``-p`` dict."""
    check_epsilon(args.epsilon, "--epsilon")
    seed = check_seed(args.seed, "--seed")
    params = parse_params(args.param)
    if "epsilon" in params:
        raise InvalidArgumentError("-p", "epsilon", "--epsilon for ε")
    return seed, params


def load_corpus_from_args(args: argparse.Namespace) -> Any:
    """The corpus named by :func:`add_corpus_args` options."""
    from dpaudit.text.corpus import load_corpus

    return load_corpus(args.data, args.format, args.text_column, args.label_column)


def register(sub: Any) -> None:
    """Add ``attack`` with its ``hoho`` sub-command."""
    p = sub.add_parser("attack", help=command_help("attack"), description=__doc__)
    kinds = p.add_subparsers(dest="attack", metavar="ATTACK", parser_class=type(p))
    kinds.required = True
    h = kinds.add_parser(
        "hoho",
        help="HoHo linking/reconstruction and the optimal attacks",
        description=__doc__,
    )
    add_corpus_args(h)
    add_scheme_args(h)
    h.add_argument(
        "--n-sentences", type=integer, default=800, help="sentences sampled (default 800, HoHo)"
    )
    h.add_argument(
        "--target-fraction", type=float, default=0.1, help="share of targets (default 0.1)"
    )
    h.add_argument("--copies", type=integer, default=100, help="encodings per target (default 100)")
    add_seed(h)
    add_json(h)
    h.set_defaults(func=run)


def _render(result: dict[str, Any]) -> str:
    true = result["true_epsilon"]
    lines = [
        f"{result['scheme']} ε={result['epsilon']:g} {result['params']}",
        f"  exact worst-case ε: {'unknown' if true is None else f'{true:.6g}'}",
        f"  sentences {result['n_sentences']} ({result['n_oov_only']} without any known word), "
        f"targets {result['n_targets']} × {result['copies']} copies, {result['n_bits']} bits",
        f"  linking AUC   HoHo {result['linking_auc_mean']:.4f} ± {result['linking_auc_std']:.4f}"
        f"   optimal {result['optimal_linking_auc_mean']:.4f} ± "
        f"{result['optimal_linking_auc_std']:.4f}",
        f"  reconstruction (HoHo positions)  HoHo {result['reconstruction_accuracy']:.4f}"
        f"   optimal {result['optimal_reconstruction_accuracy']:.4f}"
        f"   prior only {result['prior_only_reconstruction_accuracy']:.4f}",
    ]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Validate the options, read and embed the corpus, run both attacks, print."""
    from dpaudit.attacks.experiment import attack_text, prepare_attack_data

    seed, params = check_scheme_args(args)
    corpus = load_corpus_from_args(args)
    data = prepare_attack_data(
        corpus, args.n_sentences, args.target_fraction, seed=seed, embedder=args.embedder
    )
    result = attack_text(data, args.scheme, args.epsilon, params, seed=seed, copies=args.copies)
    emit(args, result.to_dict(), _render)
    return 0
