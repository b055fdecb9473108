"""``dpaudit audit-rewriter``: audit an LM rewriter's claim, white box and black box.

White box: every rewrite is scored exactly under both documents by teacher
forcing with the decoding the rewriter declares, the declaration is checked
against its real samples, and likelihood-ratio sets are certified on fresh
rewrites.  Black box (``--black-box``): only the rewritten text is read.
"""

from __future__ import annotations

import argparse
import functools
import math
from pathlib import Path
from typing import Any

from dpaudit.cli.common import add_json, add_seed, emit
from dpaudit.cli.main import command_help
from dpaudit.cli.parser import bounded_integer, integer
from dpaudit.engine.config import MAX_WORKERS
from dpaudit.errors import InvalidArgumentError
from dpaudit.io import atomic_write_text

DEFAULT_DOCUMENT = "I loved this movie, the acting was good and John was great."
#: Every name of ``mechanisms.rewriters.catalogue.REWRITERS`` (a test keeps them equal; the
#: catalogue is not imported here, as it loads the rewriters' modules).
REWRITER_HELP = (
    "dp-prompt, dp-paraphrase (a causal LM: --model smollm2, tiny or a directory) "
    "or dp-mlm (a masked LM: --model tiny or a directory)"
)


def register(sub: Any) -> None:
    """Add the ``audit-rewriter`` sub-command."""
    p = sub.add_parser("audit-rewriter", help=command_help("audit-rewriter"), description=__doc__)
    p.add_argument("mechanism", metavar="REWRITER", help=REWRITER_HELP)
    p.add_argument("--epsilon", type=float, required=True, help="claimed ε per token (> 0)")
    p.add_argument(
        "--model",
        default="smollm2",
        help="smollm2 (embedded default, extra lm), tiny (random, for trying) or a local "
        "Hugging Face model directory",
    )
    p.add_argument(
        "--clip",
        type=float,
        nargs=2,
        default=(-5.0, 5.0),
        metavar=("LO", "HI"),
        help="logits are clipped into [LO, HI], LO < HI (default -5 5); the temperature is "
        "2(HI − LO)/ε",
    )
    p.add_argument(
        "--max-new-tokens",
        type=bounded_integer(1),
        default=16,
        metavar="N",
        help="most tokens (dp-mlm: words) a rewrite releases, >= 1 (default 16)",
    )
    p.add_argument("--document", default=DEFAULT_DOCUMENT, help="document the pairs start from")
    p.add_argument(
        "--pair", nargs=2, action="append", metavar=("X", "X_PRIME"), help="a pair (repeatable)"
    )
    p.add_argument(
        "--pairs",
        default="one_word,length",
        help="neighbour kinds built from --document when no --pair is given "
        "(one_word, stopword, punctuation, name, length, nothing_to_rewrite)",
    )
    p.add_argument("--samples", type=integer, default=100, help="training rewrites per document")
    p.add_argument("--final-samples", type=integer, default=300, help="certifying rewrites")
    p.add_argument("--confidence", type=float, default=0.95)
    p.add_argument("--black-box", action="store_true", help="read only the output text")
    p.add_argument(
        "--embedder",
        choices=("glove", "minilm"),
        default=None,
        help="with --black-box: also test sets along a sentence-embedding direction "
        "(glove: extra text; minilm: extra minilm)",
    )
    p.add_argument(
        "--device", default="cpu", help="torch device for the model: cpu, cuda, cuda:1, ..."
    )
    p.add_argument(
        "--backend",
        choices=("local", "ray"),
        default="local",
        help="local: in this process (the model uses every core); ray: pairs spread over Ray",
    )
    p.add_argument("--ray-address", default=None, metavar="ADDR", help="an existing Ray cluster")
    p.add_argument(
        "--workers",
        type=bounded_integer(1, MAX_WORKERS),
        default=None,
        metavar="N",
        help=f"Ray CPUs, 1 to {MAX_WORKERS} (default: all)",
    )
    p.add_argument("--out", default=None, metavar="FILE", help="also write the JSON result here")
    add_seed(p)
    add_json(p)
    p.set_defaults(func=run)


def _pairs(args: argparse.Namespace) -> list[tuple[str, str, str]]:
    from dpaudit.text.neighbours import neighbour_pairs

    if args.pair:
        return [(a, b, "--pair") for a, b in args.pair]
    kinds = tuple(k.strip() for k in args.pairs.split(",") if k.strip())
    return neighbour_pairs(args.document, kinds)


def _load(args: argparse.Namespace, kind: str) -> Any:
    from dpaudit.text.models import load_model, tiny_model

    if args.model == "tiny":
        loaded = tiny_model(kind, seed=args.seed)
    elif args.model != "smollm2" and not Path(args.model).is_dir():
        raise InvalidArgumentError("--model", args.model, "smollm2, tiny or a model directory")
    else:
        loaded = load_model(None if args.model == "smollm2" else args.model, kind=kind)
    if args.device != "cpu":
        import torch

        try:
            loaded.model.to(torch.device(args.device))
        except (RuntimeError, AssertionError) as exc:
            raise InvalidArgumentError(
                "--device", args.device, f"an available device ({exc})"
            ) from None
    return loaded


def _execution(args: argparse.Namespace) -> Any:
    """In this process, or spread over Ray (a forked local pool would hang PyTorch)."""
    from dpaudit.engine.config import ExecutionConfig

    if args.backend == "local":
        if args.ray_address or args.workers not in (None, 1):
            raise InvalidArgumentError(
                "--workers/--ray-address", args.workers or args.ray_address, "--backend ray"
            )
        return ExecutionConfig(workers=1)
    return ExecutionConfig(backend="ray", workers=args.workers, ray_address=args.ray_address)


def _embedder(name: str | None) -> Any:
    """A factory fitting embedder ``name`` on each pair's training rewrites, or None."""
    if name is None:
        return None
    from dpaudit.text.embedders import fit_embedder

    return functools.partial(fit_embedder, name)


def _check_args(args: argparse.Namespace) -> None:
    """The checks that need no model, made before one loads (a typo is answered at once)."""
    from dpaudit.validation import check_epsilon

    check_epsilon(args.epsilon, "--epsilon")
    low, high = args.clip
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise InvalidArgumentError(
            "--clip", f"{low:g} {high:g}", "LO HI, finite numbers with LO < HI (default -5 5)"
        )


def run(args: argparse.Namespace) -> int:
    """Build the rewriter, audit it, print the result."""
    _check_args(args)
    from dpaudit.auditors.rewriter import (
        RewriterAuditConfig,
        TextAuditConfig,
        audit_rewriter,
        audit_text_mechanism,
        summary,
    )
    from dpaudit.mechanisms.rewriters.catalogue import make_rewriter, model_kind
    from dpaudit.serialization import dumps

    kind = model_kind(args.mechanism)
    pairs = _pairs(args)
    if args.out and not Path(args.out).resolve().parent.is_dir():
        raise InvalidArgumentError("--out", args.out, "a file in an existing directory")
    if args.out and Path(args.out).is_dir():
        raise InvalidArgumentError("--out", args.out, "a file path (it is a directory)")
    # Sizes, confidence and execution are checked here too, before the model loads.
    if args.black_box:
        cfg: Any = TextAuditConfig(
            args.samples, args.final_samples, args.confidence, seed=args.seed
        )
    else:
        cfg = RewriterAuditConfig(args.samples, args.final_samples, args.confidence, seed=args.seed)
        execution = _execution(args)
    rewriter = make_rewriter(
        args.mechanism, _load(args, kind), args.epsilon,
        clip=tuple(args.clip), max_new_tokens=args.max_new_tokens,
    )  # fmt: skip
    if args.black_box:
        result = audit_text_mechanism(
            rewriter.sample, pairs, rewriter.claim, max_units=args.max_new_tokens,
            config=cfg, name=f"{rewriter.name}: {rewriter.decoding.describe()}",
            embedder=_embedder(args.embedder),
        )  # fmt: skip
    else:
        result = audit_rewriter(rewriter, pairs, cfg, execution=execution)
    if args.out:
        atomic_write_text(args.out, dumps(result) + "\n")
    emit(args, result, summary)
    return 0
