"""``dpaudit audit-rewriter``: audit an LM rewriter's claim, white box and black box.

White box: every rewrite is scored exactly under both documents by teacher
forcing with the decoding the rewriter declares, the declaration is checked
against its real samples, and likelihood-ratio sets are certified on fresh
rewrites.  Black box (``--black-box``): only the rewritten text is read.  DP-BART
(noise on clipped encoder states, a per-document claim) declares no per-token decoding, so
it is audited black box.  A rewriter of the user's own, ``MODULE:CALLABLE``, is audited
against ``--epsilon`` per ``--unit`` on the user's ``--pair`` documents: a generation call
``f(model, tokenizer, text)`` (it calls ``model.generate`` on the ``--model`` loaded for it)
white box, its decoding recorded as it runs; ``f(text, n, rng) -> n strings`` black box.
Every audit runs through the one entry, ``dpaudit.audit``.
"""

from __future__ import annotations

import argparse
import functools
import math
from pathlib import Path
from typing import Any

from dpaudit.cli.common import add_json, add_seed, emit
from dpaudit.cli.main import command_help
from dpaudit.cli.parser import bounded_integer, integer, positive_seconds
from dpaudit.cli.sizing import (
    REWRITER_DEFAULT_SIZES,
    plan_rewriter,
    plan_text,
    rewriter_sizes,
)
from dpaudit.engine.config import MAX_WORKERS
from dpaudit.errors import InvalidArgumentError
from dpaudit.io import atomic_write_text
from dpaudit.text.neighbours import DEFAULT_DOCUMENT, DEFAULT_PAIR_KINDS

#: Every name of ``mechanisms.rewriters.catalogue.REWRITERS`` (a test keeps them equal; the
#: catalogue is not imported here, as it loads the rewriters' modules).
REWRITER_HELP = (
    "dp-prompt, dp-paraphrase (a causal LM: --model smollm2, tiny or a directory), "
    "dp-decoding (the same causal LM, each token's softmax mixed with the uniform "
    "distribution at the λ that --epsilon per token allows; no --clip), "
    "dp-mlm (a masked LM: --model tiny or a directory), dp-bart (a BART encoder-decoder: "
    "--model tiny or a directory; with --black-box), or MODULE:CALLABLE, your own: a "
    "generation call f(model, tokenizer, text) on --model (white box, recorded as it runs) "
    "or f(text, n, rng) returning n rewrites (black box)"
)
#: The units a claim of the user's own rewriter may count ε in.
UNITS = ("token", "word", "document")
#: The rewriter whose options are --delta, --noise, --state-clip and --max-length.
BART = "dp-bart"
#: The rewriter that mixes in the uniform distribution instead of clipping (no --clip).
MIXTURE = "dp-decoding"
#: DP-BART's noises (``mechanisms.rewriters.bart.NOISES``; a test keeps them equal).
BART_NOISES = ("laplace", "gaussian", "analytic_gaussian")
#: DP-BART's defaults, as the authors' code (``dp_bart``): C = 0.1, n = 20 positions.
BART_DEFAULTS = {"delta": 0.0, "noise": "laplace", "state_clip": 0.1, "max_length": 20}
LOGIT_CLIP = (-5.0, 5.0)
#: What ``--declare`` may name for a generation call: the clipped exponential mechanism per
#: token, as each paper states it.
DECLARATIONS = ("dp-prompt", "dp-paraphrase")


def register(sub: Any) -> None:
    """Add the ``audit-rewriter`` sub-command."""
    p = sub.add_parser("audit-rewriter", help=command_help("audit-rewriter"), description=__doc__)
    p.add_argument("mechanism", metavar="REWRITER", help=REWRITER_HELP)
    p.add_argument("--epsilon", type=float, required=True, help="claimed ε per --unit (> 0)")
    p.add_argument(
        "--unit",
        choices=UNITS,
        default=None,
        help="MODULE:CALLABLE only: what one ε pays for (default token: a rewrite of n tokens, "
        "at most --max-new-tokens, is allowed n·ε)",
    )
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
        default=None,
        metavar=("LO", "HI"),
        help="logits are clipped into [LO, HI], LO < HI (default -5 5); the temperature is "
        "2(HI − LO)/ε (not for dp-bart)",
    )
    _add_declare_arg(p)
    _add_bart_args(p)
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
        default=",".join(DEFAULT_PAIR_KINDS),
        help="neighbour kinds built from --document when no --pair is given "
        "(one_word, stopword, punctuation, name, length, nothing_to_rewrite)",
    )
    _add_size_args(p)
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


def _add_size_args(p: Any) -> None:
    """The sample sizes, or the time budget they are fitted to, and the confidence."""
    p.add_argument(
        "--samples",
        type=integer,
        default=None,
        help="training rewrites per document (sized to --time-budget when neither size is "
        "given; else 100)",
    )
    p.add_argument(
        "--final-samples", type=integer, default=None, help="certifying rewrites (else 300)"
    )
    p.add_argument(
        "--time-budget",
        type=positive_seconds,
        default=None,
        metavar="SECONDS",
        help="size the audit to about this many seconds from a timed pilot of it, white box "
        "or black box (default 180, when --samples/--final-samples are not given; the sizes "
        "are printed)",
    )
    p.add_argument("--confidence", type=float, default=0.95)


def _add_declare_arg(p: Any) -> None:
    """``--declare``: a declaration set beside a recorded generation call."""
    p.add_argument(
        "--declare",
        choices=DECLARATIONS,
        default=None,
        help="a generation call only: what it is meant to do, set beside its recording "
        "(dp-prompt, dp-paraphrase: logits clipped into --clip, T = 2(HI − LO)/ε, at most "
        "--max-new-tokens); where the two differ is reported (the recording is what is scored)",
    )


def _add_bart_args(p: Any) -> None:
    """DP-BART's own options (None: its default, so that another rewriter can refuse them)."""
    p.add_argument(
        "--delta", type=float, default=None, help="dp-bart: claimed δ per document (default 0)"
    )
    p.add_argument(
        "--noise",
        choices=BART_NOISES,
        default=None,
        help="dp-bart: noise on the encoder states (default laplace; Gaussian needs --delta)",
    )
    p.add_argument(
        "--state-clip",
        type=float,
        default=None,
        metavar="C",
        help="dp-bart: encoder states are clipped into [-C, C], C > 0 (default 0.1)",
    )
    p.add_argument(
        "--max-length",
        type=bounded_integer(1),
        default=None,
        metavar="N",
        help="dp-bart: token positions a document is padded and truncated to (default 20)",
    )


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
    elif args.model == "smollm2" and kind != "causal":
        raise InvalidArgumentError(
            "--model", args.model, f"a {kind} LM for {args.mechanism}: tiny, or a directory of "
            "one (the default SmolLM2 is a causal LM)",
        )  # fmt: skip
    elif args.model != "smollm2" and not Path(args.model).is_dir():
        raise InvalidArgumentError("--model", args.model, "smollm2, tiny or a model directory")
    else:
        try:
            loaded = load_model(None if args.model == "smollm2" else args.model, kind=kind)
        except InvalidArgumentError as exc:
            if exc.argument != "kind":
                raise
            raise InvalidArgumentError(
                "--model", args.model, f"a {kind} LM for {args.mechanism} ({exc.allowed})"
            ) from None
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
    if args.mechanism == BART:
        _check_bart_args(args)
        return
    for key in BART_DEFAULTS:
        if getattr(args, key) is not None:
            option = f"--{key.replace('_', '-')}"
            raise InvalidArgumentError(
                option, getattr(args, key), f"no {option} for {args.mechanism} (a dp-bart option)"
            )
    if args.mechanism == MIXTURE and args.clip is not None:
        raise InvalidArgumentError(
            "--clip", " ".join(f"{v:g}" for v in args.clip),
            "no --clip for dp-decoding (its bound comes from the uniform mixture, not a clip)",
        )  # fmt: skip
    low, high = args.clip or LOGIT_CLIP
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise InvalidArgumentError(
            "--clip", f"{low:g} {high:g}", "LO HI, finite numbers with LO < HI (default -5 5)"
        )


def _check_bart_args(args: argparse.Namespace) -> None:
    """DP-BART's options: black box, a δ that its noise needs, a clip C > 0."""
    from dpaudit.validation import check_delta

    if not args.black_box:
        raise InvalidArgumentError(
            "--black-box",
            "not given",
            "--black-box for dp-bart: it declares no per-token decoding to score white box "
            "(its noise is on the encoder states; its exact worst case is analytic)",
        )
    if args.clip is not None:
        low, high = args.clip
        raise InvalidArgumentError(
            "--clip", f"{low:g} {high:g}", "--state-clip C for dp-bart (--clip clips logits)"
        )
    delta = check_delta(BART_DEFAULTS["delta"] if args.delta is None else args.delta, "--delta")
    if (args.noise or BART_DEFAULTS["noise"]) != "laplace" and delta == 0.0:
        raise InvalidArgumentError("--delta", delta, "a number in (0, 1) for Gaussian noise")
    clip = BART_DEFAULTS["state_clip"] if args.state_clip is None else args.state_clip
    if not (math.isfinite(clip) and clip > 0):
        raise InvalidArgumentError("--state-clip", clip, "a finite number C > 0 (default 0.1)")


def _params(args: argparse.Namespace) -> dict[str, Any]:
    """The rewriter's constructor keywords from the command line."""
    if args.mechanism == MIXTURE:
        return {"max_new_tokens": args.max_new_tokens}
    if args.mechanism != BART:
        return {"clip": tuple(args.clip or LOGIT_CLIP), "max_new_tokens": args.max_new_tokens}
    given = {k: getattr(args, k) for k in BART_DEFAULTS}
    params = {k: BART_DEFAULTS[k] if v is None else v for k, v in given.items()}
    params["clip"] = params.pop("state_clip")
    return params


def _is_user_function(args: argparse.Namespace) -> bool:
    return ":" in args.mechanism


def _is_generation_call(function: Any) -> bool:
    """``f(model, tokenizer, text)``: a generation call to record, read from its parameters."""
    import inspect

    try:
        names = list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return False
    return names[:2] == ["model", "tokenizer"] and len(names) >= 3


def _run_user_function(args: argparse.Namespace) -> int:
    """``MODULE:CALLABLE``: the user's generation call recorded white box, or their
    ``f(text, n, rng)`` black box, on their pairs."""
    from dpaudit.adapters.callable import import_target, resolve_callable
    from dpaudit.api import audit
    from dpaudit.auditors.rewriter import TextAuditConfig, TextAuditor, summary
    from dpaudit.claims import TextClaim
    from dpaudit.validation import check_delta, check_epsilon

    check_epsilon(args.epsilon, "--epsilon")
    if _is_generation_call(import_target(args.mechanism)):
        return _run_generation_call(args)
    delta = check_delta(0.0 if args.delta is None else args.delta, "--delta")
    for option, value in (
        ("--declare", args.declare),
        ("--noise", args.noise),
        ("--state-clip", args.state_clip),
        ("--max-length", args.max_length),
        ("--clip", args.clip),
    ):
        if value is not None:
            raise InvalidArgumentError(
                option, value, f"no {option} for MODULE:CALLABLE (your function decodes itself)"
            )
    if args.model != "smollm2":
        raise InvalidArgumentError(
            "--model", args.model, "no --model for MODULE:CALLABLE (your function loads its own)"
        )
    _check_out(args)
    # f(text, n, rng) is read as text only: black-box sizes, fitted to the budget by default
    sizes = rewriter_sizes(args)
    cfg = TextAuditConfig(*(sizes or REWRITER_DEFAULT_SIZES), args.confidence, seed=args.seed)
    claim = TextClaim(args.epsilon, unit=args.unit or "token", delta=delta)
    function = resolve_callable(args.mechanism)
    pairs, embedder = tuple(_pairs(args)), _embedder(args.embedder)
    if sizes is None:
        cfg = plan_text(args, function, pairs, cfg, embedder, claim)
    auditor = TextAuditor(pairs, args.max_new_tokens, embedder, args.mechanism)
    result = audit(function, claim, method=auditor, config=cfg)
    if args.out:
        atomic_write_text(args.out, dumps_result(result))
    emit(args, result, summary)
    return 0


def _run_generation_call(args: argparse.Namespace) -> int:
    """``f(model, tokenizer, text)`` on ``--model``, its decoding recorded as it runs."""
    from dpaudit.adapters.callable import import_target
    from dpaudit.api import audit
    from dpaudit.auditors.rewriter import RewriterAuditConfig, RewriterAuditor, summary
    from dpaudit.claims import TextClaim
    from dpaudit.engine.pace import threads_for_now
    from dpaudit.mechanisms.rewriters.recorded import RecordedRewriter
    from dpaudit.text.models.loading import torch_threads
    from dpaudit.validation import check_delta

    clip = None if args.declare else args.clip  # --clip belongs to the declaration
    for option, value in (("--noise", args.noise), ("--state-clip", args.state_clip),
                          ("--max-length", args.max_length), ("--clip", clip),
                          ("--embedder", args.embedder)):  # fmt: skip
        if value is not None:
            raise InvalidArgumentError(
                option, value, f"no {option} for a generation call (your call decodes itself)"
            )
    if args.black_box:
        raise InvalidArgumentError(
            "--black-box",
            "given",
            "a generation call is recorded white box; for a black-box audit give "
            "f(text, n, rng) -> n rewrites",
        )
    delta = check_delta(0.0 if args.delta is None else args.delta, "--delta")
    pairs = _pairs(args)
    _check_out(args)
    sizes = rewriter_sizes(args)
    cfg = RewriterAuditConfig(*(sizes or (10, 10)), args.confidence, seed=args.seed)
    execution = _execution(args)
    claim = TextClaim(args.epsilon, unit=args.unit or "token", delta=delta)
    declared = _declared(args)  # checked before the model loads
    rewriter = RecordedRewriter(
        args.mechanism,
        _load(args, "causal"),
        import_target(args.mechanism),
        claim,
        max_new_tokens=args.max_new_tokens,
        declared=declared,
    )
    with torch_threads(threads_for_now()):
        if sizes is None:
            cfg = plan_rewriter(args, rewriter, pairs, cfg)
        result = audit(
            rewriter, method=RewriterAuditor(tuple(pairs)), config=cfg, execution=execution
        )
    if args.out:
        atomic_write_text(args.out, dumps_result(result))
    emit(args, result, summary)
    return 0


def _declared(args: argparse.Namespace) -> Any:
    """``--declare``'s decoding: the clipped exponential mechanism at ``--epsilon`` per token."""
    if args.declare is None:
        return None
    from dpaudit.mechanisms.rewriters.decoding import exponential_decoding

    low, high = args.clip or LOGIT_CLIP
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise InvalidArgumentError(
            "--clip", f"{low:g} {high:g}", "LO HI, finite numbers with LO < HI (default -5 5)"
        )
    return exponential_decoding(args.epsilon, (low, high), max_new_tokens=args.max_new_tokens)


def dumps_result(result: Any) -> str:
    """The result's JSON, one line per file (``--out``)."""
    from dpaudit.serialization import dumps

    return dumps(result) + "\n"


def _check_out(args: argparse.Namespace) -> None:
    if args.out and not Path(args.out).resolve().parent.is_dir():
        raise InvalidArgumentError("--out", args.out, "a file in an existing directory")
    if args.out and Path(args.out).is_dir():
        raise InvalidArgumentError("--out", args.out, "a file path (it is a directory)")


def run(args: argparse.Namespace) -> int:
    """Build the rewriter, audit it through ``dpaudit.audit``, print the result."""
    if _is_user_function(args):
        return _run_user_function(args)
    if args.unit is not None:
        raise InvalidArgumentError(
            "--unit", args.unit, f"no --unit for {args.mechanism} (its paper's claim is used)"
        )
    if args.declare is not None:
        raise InvalidArgumentError(
            "--declare", args.declare, f"no --declare for {args.mechanism} (it declares its own "
            "decoding); --declare sets a declaration beside a recorded generation call",
        )  # fmt: skip
    _check_args(args)
    from dpaudit.auditors.rewriter import RewriterAuditConfig, TextAuditConfig, summary
    from dpaudit.engine.pace import threads_for_now
    from dpaudit.mechanisms.rewriters.catalogue import make_rewriter, model_kind
    from dpaudit.text.models.loading import torch_threads

    kind = model_kind(args.mechanism)
    pairs = _pairs(args)
    _check_out(args)
    # Sizes, confidence and execution are checked here too, before the model loads.
    execution = None
    sizes = rewriter_sizes(args)
    if args.black_box:
        cfg: Any = TextAuditConfig(*(sizes or REWRITER_DEFAULT_SIZES), args.confidence,
                                   seed=args.seed)  # fmt: skip
    else:
        cfg = RewriterAuditConfig(*(sizes or (10, 10)), args.confidence, seed=args.seed)
        execution = _execution(args)
    rewriter = make_rewriter(args.mechanism, _load(args, kind), args.epsilon, **_params(args))
    with torch_threads(threads_for_now()):  # one thread when other work shares the cores
        if sizes is None and args.black_box:
            embedder = _embedder(args.embedder)
            cfg = plan_text(args, rewriter.sample, pairs, cfg, embedder, rewriter.claim)
        elif sizes is None:
            cfg = plan_rewriter(args, rewriter, pairs, cfg)
        result = _audit_builtin(args, rewriter, pairs, cfg, execution)
    if args.out:
        atomic_write_text(args.out, dumps_result(result))
    emit(args, result, summary)
    return 0


def _audit_builtin(
    args: argparse.Namespace, rewriter: Any, pairs: Any, cfg: Any, execution: Any
) -> Any:
    """The built-in rewriter's audit: white box by default, black box with ``--black-box``."""
    from dpaudit.api import audit
    from dpaudit.auditors.rewriter import RewriterAuditor, TextAuditor

    if args.black_box:
        decoding = getattr(rewriter, "decoding", None)  # DP-BART: described whole
        name = (
            rewriter.describe() if decoding is None else f"{rewriter.name}: {decoding.describe()}"
        )
        auditor: Any = TextAuditor(
            tuple(pairs), args.max_new_tokens, _embedder(args.embedder), name
        )
        return audit(rewriter.sample, rewriter.claim, method=auditor, config=cfg)
    return audit(rewriter, method=RewriterAuditor(tuple(pairs)), config=cfg, execution=execution)
