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
from dpaudit.progress import progress
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


#: Level of every interval the text commands print (each interval on its own).
CONFIDENCE = 0.95


def describe_params(params: dict[str, Any]) -> str:
    """``lambda=100, dim=50, domain=[0, 5]``: a scheme's parameters without ε and its name."""
    shown = []
    for key, value in params.items():
        if key in ("scheme", "epsilon"):
            continue
        if isinstance(value, list | tuple):
            text = "[" + ", ".join(_number(v) for v in value) + "]"
        else:
            text = _number(value)
        shown.append(f"{key}={text}")
    return ", ".join(shown)


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def claim_verdict(claimed: float, true_epsilon: float | None) -> str:
    """The analytic verdict on the claim: exact worst-case ε against the claimed ε."""
    if true_epsilon is None:
        return (
            "exact worst-case ε unknown for this scheme: no analytic verdict "
            "(an attack can show leakage, never privacy)"
        )
    if true_epsilon > claimed * (1 + 1e-9):
        return (
            f"VIOLATED: exact worst-case ε = {true_epsilon:.6g} > claimed {claimed:g} "
            "(analytic, no sampling)"
        )
    return f"holds analytically: exact worst-case ε = {true_epsilon:.6g} <= claimed {claimed:g}"


def proportion_interval(rate: float, total: int) -> tuple[float, float]:
    """Clopper–Pearson interval at :data:`CONFIDENCE` of a proportion ``rate`` out of ``total``."""
    from dpaudit.auditors.core.statistics import clopper_pearson_interval

    low, high = clopper_pearson_interval(round(rate * total), total, CONFIDENCE)
    return float(low), float(high)


def _render(result: dict[str, Any]) -> str:
    rows = result["n_sentences"] + result["n_targets"] * result["copies"]
    positions = result["n_hoho_positions"] * rows

    def rec(key: str, bits: int) -> str:
        low, high = proportion_interval(result[key], bits)
        return f"{result[key]:.4f} [{low:.4f}, {high:.4f}]"

    lines = [
        f"attack hoho: {result['scheme'].upper()} claimed ε = {result['epsilon']:g} "
        f"({describe_params(result['params'])})",
        f"  claim: {claim_verdict(result['epsilon'], result['true_epsilon'])}",
        f"  corpus {result['corpus']} ({result['embedder']}): {result['n_sentences']} sentences "
        f"({result['n_oov_only']} without any known word); {result['n_targets']} targets × "
        f"{result['copies']} copies; {result['n_bits']} bits",
        f"  linking AUC, mean ± sd over {result['n_targets']} targets (chance 0.5, perfect 1):",
        f"    HoHo     {result['linking_auc_mean']:.4f} ± {result['linking_auc_std']:.4f}",
        f"    optimal  {result['optimal_linking_auc_mean']:.4f} ± "
        f"{result['optimal_linking_auc_std']:.4f}   (optimal − HoHo "
        f"{result['optimal_linking_auc_mean'] - result['linking_auc_mean']:+.4f}, "
        f"s.e. {result['optimal_minus_hoho_auc_se']:.4f})",
        f"  reconstruction accuracy, {CONFIDENCE:.0%} interval each "
        f"(chance: prior-only guess {result['prior_only_reconstruction_accuracy']:.4f} "
        "on HoHo's positions):",
        f"    HoHo     {rec('reconstruction_accuracy', positions)}"
        f"   on HoHo's {result['n_hoho_positions']} positions",
        f"    optimal  {rec('optimal_reconstruction_accuracy', positions)}"
        f"   same positions (per-bit MAP)",
        f"    optimal  {rec('optimal_reconstruction_accuracy_all_bits', result['n_bits'] * rows)}"
        f"   all {result['n_bits']} bits",
        "  (intervals: Clopper–Pearson over the bits, given the sampled sentences; "
        "bits are privatised independently)",
    ]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Validate the options, read and embed the corpus, run both attacks, print."""
    from dpaudit.attacks.experiment import attack_text, prepare_attack_data

    seed, params = check_scheme_args(args)
    with progress(2, "attack hoho", unit="steps") as bar:
        bar.set_description("attack hoho: reading and embedding the corpus")
        corpus = load_corpus_from_args(args)
        data = prepare_attack_data(
            corpus, args.n_sentences, args.target_fraction, seed=seed, embedder=args.embedder
        )
        bar.update(1)
        bar.set_description(f"attack hoho: privatising and attacking ({args.scheme})")
        result = attack_text(data, args.scheme, args.epsilon, params, seed=seed, copies=args.copies)
        bar.update(1)
    emit(args, result.to_dict(), _render)
    return 0
