"""Command-line plumbing for word-level mechanisms (``dpaudit audit`` / ``analyze``).

A MECHANISM name registered with :func:`dpaudit.mechanisms.registry.register` (output kind ``word``)
(``cmp``, ``tem``, ``santext``…) selects the word-level path: the embedding is
``--embeddings glove`` (default; GloVe 6B 50-d from the installed package) or a
GloVe-format text file, restricted to its ``--vocabulary-size`` first (most
frequent) words; pairs are given as ``--pair 'good;great'``.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpaudit.analysis.word_embedding import (
    DEFAULT_VOCABULARY_SIZE,
    GLOVE_6B_SIZE,
    resolve_embedding,
)
from dpaudit.cli.parser import integer
from dpaudit.errors import InvalidArgumentError

if TYPE_CHECKING:
    from dpaudit.mechanisms.word.base import WordMechanism

# The mechanisms' registry is imported where it is used: building the parser
# must not load every mechanism (start-up of an argument error).


def add_word_args(parser: argparse.ArgumentParser, metric: bool = False) -> None:
    """``--embeddings`` and ``--vocabulary-size`` (used by word-level mechanisms only);
    with ``metric``, ``--metric`` too (a ``module:callable`` word mechanism's claim)."""
    if metric:
        parser.add_argument(
            "--metric",
            default=None,
            metavar="euclidean|mahalanobis[:λ]|MOD:d",
            help="MODULE:CALLABLE word mechanisms f(word, n, rng) -> n words: the claim is "
            "ε·d(w, w') for this distance over --embeddings (audited pair by pair; pairs "
            "from the embedding's geometry)",
        )
    parser.add_argument(
        "--embeddings",
        "--embedding",
        dest="embeddings",
        default="glove",
        metavar="glove|PATH",
        help="word mechanisms: GloVe 6B 50-d (default) or a GloVe-format text file",
    )
    parser.add_argument(
        "--vocabulary",
        default=None,
        metavar="N|FILE|w1,w2,…",
        help="word mechanisms: the N most frequent words, the words of FILE (one per line), "
        "or the words listed (each must be in --embeddings); default: --vocabulary-size",
    )
    parser.add_argument(
        "--vocabulary-size",
        type=integer,
        default=None,
        metavar="V",
        help=f"word mechanisms: the V most frequent words (default {DEFAULT_VOCABULARY_SIZE} "
        "for GloVe; the whole file otherwise)",
    )


def _adapter_factory(name: str) -> Any:
    """The factory of a word-mechanism adapter (``mldp:NAME``), or None."""
    try:
        from dpaudit.adapters import word_adapter  # type: ignore[attr-defined]
    except ImportError:
        return None
    return word_adapter(name)


def wants_word_audit(args: argparse.Namespace) -> bool:
    """A word mechanism: a registered or adapted one, or ``MODULE:CALLABLE`` with ``--metric``."""
    return getattr(args, "metric", None) is not None or is_word_mechanism(args.mechanism)


def is_word_mechanism(name: str) -> bool:
    """Whether ``name`` is a registered word-level mechanism or a word adapter (``mldp:NAME``)."""
    from dpaudit.mechanisms.registry import mechanism_names

    return name in mechanism_names("word") or _adapter_factory(name) is not None


def build_word_mechanism(args: argparse.Namespace, params: dict[str, Any]) -> WordMechanism:
    """The word mechanism named on the command line (``--delta``/``--domain`` rejected)."""
    from dpaudit.mechanisms.registry import make_word_mechanism
    from dpaudit.mechanisms.word.base import WordMechanism

    for option in ("delta", "domain"):
        if getattr(args, option, None) is not None:
            raise InvalidArgumentError(
                f"--{option}", getattr(args, option), f"no --{option} for word mechanisms"
            )
    size = getattr(args, "vocabulary_size", None)
    if size is not None and size < 2:
        raise InvalidArgumentError("--vocabulary-size", size, "an integer >= 2")
    listed = _vocabulary(args)
    if isinstance(listed, int):
        size = listed
    vocabulary = listed if isinstance(listed, list) else size  # read once, used below
    if getattr(args, "metric", None) is not None:
        return _function_word_mechanism(args, params, vocabulary)
    if getattr(args, "epsilon", None) is not None:
        params["epsilon"] = args.epsilon
    factory = _adapter_factory(args.mechanism)
    if factory is not None:  # the adapted library brings its own embedding
        if size is not None or listed is not None:
            flag = "--vocabulary" if listed is not None else "--vocabulary-size"
            raise InvalidArgumentError(flag, size, f"none for {args.mechanism}")
        if getattr(args, "embeddings", "glove") != "glove":
            raise InvalidArgumentError(
                "--embeddings", args.embeddings, f"none for {args.mechanism}"
            )
        mechanism = factory(**params)
        if not isinstance(mechanism, WordMechanism):
            raise InvalidArgumentError("mechanism", args.mechanism, "a word-mechanism adapter")
        return mechanism
    return make_word_mechanism(args.mechanism, _embedding(args, vocabulary), **params)


def _function_word_mechanism(
    args: argparse.Namespace, params: dict[str, Any], vocabulary: int | list[str] | None
) -> WordMechanism:
    """``MODULE:CALLABLE`` with ``--metric``: the user's word function and its ε·d claim."""
    from dpaudit.adapters.word_function import FunctionWordMechanism, parse_metric

    if ":" not in args.mechanism:
        raise InvalidArgumentError(
            "--metric",
            args.metric,
            f"MODULE:CALLABLE word mechanisms ({args.mechanism} has its own claim)",
        )
    if params:
        raise InvalidArgumentError("-p", sorted(params), "no -p for a MODULE:CALLABLE")
    if getattr(args, "epsilon", None) is None:
        raise InvalidArgumentError("--epsilon", None, "the claimed ε of ε·d (> 0)")
    embedding = _embedding(args, vocabulary)
    metric = parse_metric(args.metric, embedding)
    return FunctionWordMechanism(args.mechanism, args.epsilon, embedding, metric)


def _vocabulary(args: argparse.Namespace) -> int | list[str] | None:
    """``--vocabulary``: a size, the words of a file, the words listed, or None (not given)."""
    text = getattr(args, "vocabulary", None)
    if text is None:
        return None
    if getattr(args, "vocabulary_size", None) is not None:
        raise InvalidArgumentError("--vocabulary", text, "not beside --vocabulary-size")
    try:
        size = integer(text)
    except argparse.ArgumentTypeError:
        size = None
    if size is not None:
        if size < 2:
            raise InvalidArgumentError("--vocabulary", text, "N >= 2, a FILE or w1,w2,…")
        return size
    path = Path(text).expanduser()
    if path.is_file():
        words = [line.split()[0] for line in path.read_text("utf-8").splitlines() if line.split()]
    else:
        words = [w.strip() for w in text.split(",") if w.strip()]
    if len(set(words)) < 2:
        raise InvalidArgumentError(
            "--vocabulary", text, "N >= 2, a FILE of words (one per line) or w1,w2,… (2 or more)"
        )
    return words


def _embedding(args: argparse.Namespace, vocabulary: int | list[str] | None) -> Any:
    """``--embeddings`` cut to a size (or the default) or to the words listed."""
    spec = getattr(args, "embeddings", "glove")
    if not isinstance(vocabulary, list):
        return resolve_embedding(spec, vocabulary)
    whole = GLOVE_6B_SIZE if spec in (None, "", "glove") else None
    return resolve_embedding(spec, whole).restricted_to(vocabulary)


def parse_word_pair(text: str) -> tuple[str, str]:
    """``'good;great'`` → ``("good", "great")``."""
    parts = text.split(";")
    if len(parts) != 2 or not all(p.strip() for p in parts) or parts[0] == parts[1]:
        raise InvalidArgumentError("--pair", text, "two different words as 'A;B'")
    return parts[0].strip(), parts[1].strip()


def fmt(v: Any) -> str:
    """A float for text output (``inf`` and JSON's ``"inf"`` as ∞)."""
    if isinstance(v, str):
        return {"inf": "∞", "-inf": "-∞"}.get(v, v)
    if v is None:
        return "-"
    return "∞" if math.isinf(v) else f"{v:.4g}"
