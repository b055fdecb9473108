"""``dpaudit audit-training TRAINER``: audit a DP training claim (DP-SGD ...) with canaries.

``TRAINER`` is ``dpsgd`` (dpaudit's numpy DP-SGD on a logistic-regression text classifier,
with the broken variants of ``-p flaw=...``), ``opacus`` (Opacus' ``make_private`` on a
torch classifier; extra ``training``), ``dp-bigram`` (a DP synthetic-text generator: the
released corpus is the model, scored by how much each canary echoes in it),
``dp-transformers`` (dp-transformers' ``OpacusDPTrainer`` on a tiny causal LM; its own
environment ``.venv-dpt``) or ``MODULE:TRAIN``, your own
``train(dataset, rng) -> model`` with ``--score MODULE:SCORE``, ``score(model, records) ->
one number per record`` (high: looks included), trained on ``--data`` (a corpus file; default
the bundled one) plus the canaries, each a ``(text, label)`` tuple.

``--method one-run`` (default): ``--canaries`` canaries, each in the training set with
probability 1/2, one training (``--runs`` pooled), guesses certified by Steinke, Nasr &
Jagielski (NeurIPS 2023).  ``--method multi-run``: ``--runs`` trainings with and ``--runs``
without one canary, thresholds certified by the whole-claim certifier (Nasr et al. 2021,
2023).  ``--claim gdp:MU`` (or ``renyi:...``, ``accountant-rdp``) states the claim as a curve:
the one-run audit then also tests the curve whole (``--bound f-dp``, Mahloujifar, Melis &
Chaudhuri 2024).  Every training run is one work unit: progress is shown per run, ``--out DIR
--resume`` continues from the finished runs, ``--workers``/``--backend ray`` spread them.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from typing import Any

from dpaudit.cli.common import add_run_args, add_seed, emit_verdict, parse_params, run_recorded
from dpaudit.cli.main import command_help
from dpaudit.cli.parser import bounded_integer
from dpaudit.errors import InvalidArgumentError

#: The built-in trainers: name → (module, class).
TRAINERS = {
    "dpsgd": ("dpaudit.mechanisms.training.dpsgd", "DPSGD"),
    "opacus": ("dpaudit.mechanisms.training.opacus_classifier", "OpacusClassifier"),
    "dp-bigram": ("dpaudit.mechanisms.training.dp_bigram", "DPBigramText"),
    "dp-transformers": ("dpaudit.mechanisms.training.dp_transformers_lm", "DPTransformersCausalLM"),
}
#: Canary kinds (``auditors.training.canaries.CANARY_KINDS``; a test keeps them equal).
CANARY_KINDS = ("gradient", "mislabelled", "held-out", "random-tokens", "echo")
METHODS = ("one-run", "multi-run")
#: One-run bounds (``auditors.training.one_run.BOUNDS``; a test keeps them equal).
BOUNDS = ("auto", "eps-delta", "f-dp")


def register(sub: Any) -> None:
    """Add the ``audit-training`` sub-command."""
    p = sub.add_parser("audit-training", help=command_help("audit-training"), description=__doc__)
    p.add_argument(
        "mechanism",
        metavar="TRAINER",
        help=(
            "dpsgd, opacus (extra training), dp-bigram (synthetic text), dp-transformers "
            "(in .venv-dpt) or MODULE:TRAIN, "
            "your train(dataset, rng) -> model"
        ),
    )
    p.add_argument("--score", default=None, metavar="MODULE:SCORE", help="with MODULE:TRAIN")
    p.add_argument(
        "--data", default=None, metavar="FILE", help="training corpus (default: the bundled one)"
    )
    p.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--epsilon", type=float, default=None, help="claimed ε (default: accountant)")
    p.add_argument("--delta", type=float, default=None, help="claimed δ, in [0, 1)")
    p.add_argument(
        "--claim",
        default=None,
        metavar="SPEC",
        help="the claim as a curve instead of --epsilon: gdp:MU, renyi:ORDER=EPS,..., zcdp:RHO, "
        "approx:EPS,DELTA, pure:EPS, or accountant-rdp (the trainer's own RDP curve); a curve "
        "is read at --delta",
    )
    p.add_argument("--method", choices=METHODS, default="one-run")
    _add_multi_run_args(p)
    p.add_argument(
        "--bound",
        choices=BOUNDS,
        default="auto",
        help="one-run: eps-delta (Steinke et al.'s bound on ε at δ), f-dp (that, and the "
        "claimed curve tested whole; Mahloujifar et al. 2024), auto (f-dp for curve claims)",
    )
    p.add_argument(
        "--canaries",
        type=bounded_integer(2, 10_000_000),
        default=None,
        metavar="K",
        help="one-run: canaries per training, >= 2 (default 1000; canaries drawn from the "
        "data: at most half of it)",
    )
    p.add_argument("--canary-kind", choices=CANARY_KINDS, default=None)
    p.add_argument(
        "--runs",
        type=bounded_integer(1, 10_000_000),
        default=None,
        metavar="R",
        help="one-run: trainings pooled (default 1); multi-run: trainings per world, >= 300 "
        "(default 600)",
    )
    p.add_argument(
        "--access",
        choices=("black-box", "white-box"),
        default="black-box",
        help="MODULE:TRAIN: what your score reads (white-box allows gradient canaries)",
    )
    p.add_argument("--confidence", type=float, default=0.95)
    p.add_argument(
        "--fail-on-violation", action="store_true", help="exit 1 when a violation is found"
    )
    add_seed(p)
    add_run_args(p)
    p.set_defaults(func=run)


def _add_multi_run_args(p: Any) -> None:
    """The flags only ``--method multi-run`` reads."""
    p.add_argument(
        "--multi-run-score",
        default=None,
        metavar="NAME",
        help="multi-run: which named score the thresholds cut (default: likelihood-ratio for "
        "gradient canaries, else the trainer's score); 'all': every named score, the best "
        "chosen on the selection runs",
    )
    p.add_argument(
        "--background",
        choices=("data", "opposing"),
        default="data",
        help="multi-run: the base data: the trainer's own, or (gradient canaries, white box) "
        "as many crafted gradient records opposite the canary, which shows fixed-size batches "
        "accounted as Poisson",
    )
    p.add_argument(
        "--pilot-runs",
        type=bounded_integer(0, 10_000_000),
        default=None,
        metavar="P",
        help="multi-run: trainings per world that fit a linear score to the canary's "
        "white-box trace before any certified run (default: a third of --runs with "
        "--background opposing, else 0)",
    )


def _coerce(field: dataclasses.Field[Any], text: str) -> Any:
    default = field.default
    try:
        if isinstance(default, bool):
            if text.lower() not in ("true", "false", "1", "0"):
                raise ValueError(text)
            return text.lower() in ("true", "1")
        if isinstance(default, int):
            return int(float(text)) if float(text).is_integer() else int(text)
        if isinstance(default, float) or (default is None and text[:1].isdigit()):
            return float(text)
    except ValueError:
        raise InvalidArgumentError(
            f"-p {field.name}", text, f"a {type(default).__name__}"
        ) from None
    return text


def _records(path: str | None) -> tuple[Any, ...]:
    from dpaudit.mechanisms.training.contract import TextRecord
    from dpaudit.text.corpus import default_corpus, read_corpus

    corpus = default_corpus() if path is None else read_corpus(path)
    if corpus.labels is None:
        raise InvalidArgumentError("--data", path, "a labelled corpus (uci, csv or jsonl)")
    return tuple(
        TextRecord(s, int(y)) for s, y in zip(corpus.sentences, corpus.labels, strict=True)
    )


def _builtin(args: argparse.Namespace) -> Any:
    from importlib import import_module

    module, name = TRAINERS[args.mechanism]
    cls = getattr(import_module(module), name)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {}
    for key, text in parse_params(args.param).items():
        if key not in fields or key == "records":
            allowed = ", ".join(sorted(k for k in fields if k != "records"))
            raise InvalidArgumentError("-p", key, f"one of {allowed}")
        values[key] = _coerce(fields[key], text)
    if args.data is not None:
        values["records"] = _records(args.data)
    return cls(**values)


def _user(args: argparse.Namespace) -> Any:
    from dpaudit.adapters.callable import import_target
    from dpaudit.claims import ApproxDP
    from dpaudit.mechanisms.training.contract import CallableTraining

    if args.score is None:
        raise InvalidArgumentError("--score", None, "MODULE:SCORE for a MODULE:TRAIN trainer")
    if args.claim is None and (args.epsilon is None or args.delta is None):
        raise InvalidArgumentError(
            "--epsilon", args.epsilon, "--epsilon and --delta (or --claim): your accountant's claim"
        )
    if args.param:
        raise InvalidArgumentError("-p", args.param, "no -p for MODULE:TRAIN")
    train = import_target(args.mechanism, "TRAINER")
    score = import_target(args.score, "--score")
    declared = ApproxDP(args.epsilon, args.delta) if args.claim is None else None
    return CallableTraining(
        train,
        score,
        _records(args.data),
        declared if declared is not None else _curve_claim(args, None),
        label=args.mechanism,
        declared_access=args.access,
    )


def _claim(args: argparse.Namespace, trainer: Any) -> Any:
    from dpaudit.claims import ApproxDP

    if args.claim is not None:
        return _curve_claim(args, trainer)
    if args.epsilon is None and args.delta is None:
        return None
    own = trainer.claim
    if args.epsilon is None and not _is_point(own):
        return None  # the trainer's own curve, read at --delta
    epsilon = own.epsilon if args.epsilon is None else args.epsilon
    delta = own.delta if args.delta is None else args.delta
    return ApproxDP(epsilon, delta)


def _curve_claim(args: argparse.Namespace, trainer: Any) -> Any:
    """``--claim SPEC``: a parsed claim, or the trainer's accountant's RDP curve."""
    from dpaudit.claims.parse import parse_claim

    if args.epsilon is not None:
        raise InvalidArgumentError("--claim", args.claim, "either --claim or --epsilon, not both")
    if args.claim == "accountant-rdp":
        accountant = getattr(trainer, "accountant", None)
        if not callable(getattr(accountant, "renyi_claim", None)):
            raise InvalidArgumentError(
                "--claim", args.claim, f"a written claim: {args.mechanism} has no RDP accountant"
            )
        claim = accountant.renyi_claim()
    else:
        claim = parse_claim(args.claim, "--claim", ("accountant-rdp",)).claim
    point = isinstance(getattr(claim, "epsilon", None), int | float)
    if not point and args.delta is None:
        raise InvalidArgumentError("--delta", None, "the δ in (0, 1) to read the curve at")
    if point and args.delta is not None:
        raise InvalidArgumentError("--delta", args.delta, "no --delta with a point claim")
    return claim


def _check(args: argparse.Namespace) -> None:
    if args.mechanism not in TRAINERS and ":" not in args.mechanism:
        raise InvalidArgumentError(
            "TRAINER", args.mechanism, f"{', '.join(TRAINERS)} or MODULE:TRAIN"
        )
    if args.epsilon is not None and not (math.isfinite(args.epsilon) and args.epsilon >= 0):
        raise InvalidArgumentError("--epsilon", args.epsilon, "a finite number >= 0")
    if args.delta is not None and not 0.0 <= args.delta < 1.0:
        raise InvalidArgumentError("--delta", args.delta, "a probability in [0, 1)")
    if not 0.0 < args.confidence < 1.0:
        raise InvalidArgumentError("--confidence", args.confidence, "a probability in (0, 1)")
    if args.multi_run_score is not None and args.method != "multi-run":
        raise InvalidArgumentError(
            "--multi-run-score", args.multi_run_score, "only with --method multi-run"
        )
    for flag, given in (
        ("--background", args.background != "data"),
        ("--pilot-runs", args.pilot_runs is not None),
    ):
        if given and args.method != "multi-run":
            raise InvalidArgumentError(
                flag, getattr(args, flag[2:].replace("-", "_")), "only with --method multi-run"
            )
    if args.pilot_runs == 1:
        raise InvalidArgumentError("--pilot-runs", 1, "0, or at least 2")
    if args.bound != "auto" and args.method != "one-run":
        raise InvalidArgumentError("--bound", args.bound, "only with --method one-run")
    if args.method == "multi-run" and args.runs is not None and args.runs < 300:
        raise InvalidArgumentError("--runs", args.runs, "at least 300 for --method multi-run")
    if args.mechanism in TRAINERS and (args.score or args.access != "black-box"):
        raise InvalidArgumentError(
            "--score", args.score or args.access, f"no --score/--access for {args.mechanism}"
        )


def _rule_line(rule: Any, auc: float) -> str:
    if rule.epsilon_lower_bound <= 0 and not rule.refutes_curve and not rule.mu_lower_bound:
        return "best guess rule: none certified a positive bound (no score told in from out)"
    shown = [f"ε ≥ {rule.epsilon_lower_bound:.4g}"]
    if rule.mu_lower_bound is not None:
        shown.append(f"μ ≥ {rule.mu_lower_bound:.4g}")
    if rule.refutes_curve is not None:
        shown.append("claimed curve refuted" if rule.refutes_curve else "claimed curve not refuted")
    return (
        f"best guess rule, on score {rule.score!r}: {rule.positive} guessed in, "
        f"{rule.negative} out, {rule.correct} of {rule.guesses} correct → {', '.join(shown)} "
        f"(AUC of that score, descriptive: {auc:.3f})"
    )


def render(result: Any) -> str:
    """Verdict first, then what was audited, the best guess rule and what the audit assumed."""
    if result.kind.value == "profile":
        from dpaudit.cli.cmd_audit_profile import render_profile

        return render_profile(result)
    d = result.detail
    rule = d.rules[d.best]
    lines = [
        result.verdict_text,
        f"claim: {result.claim} ({d.claim_source}); trainer: {result.mechanism['mechanism']}",
        f"canaries: {d.canary_description}; {d.runs} training run{'s' if d.runs > 1 else ''}, "
        f"{d.included} of {d.canaries * d.runs} included at random; access: {d.access}",
        _rule_line(rule, d.auc),
        f"largest bound these canaries could give: {d.ceiling:.4g}"
        + (f" (μ: {d.mu_ceiling:.4g})" if d.mu_ceiling is not None else "")
        + " (every guess of a rule correct)",
        result.confidence_statement,
        "assumes: " + "; ".join(d.assumptions),
        f"time: {result.timing['total']:.2f} s ({d.seconds_per_run:.3g} s per training run)",
    ]
    return "\n".join(lines)


def _is_point(claim: Any) -> bool:
    return claim is None or isinstance(getattr(claim, "epsilon", None), int | float)


def _reading_delta(args: argparse.Namespace, trainer: Any, claim: Any) -> float | None:
    """The δ a curve claim is read at: ``--delta``, else the trainer's own ``delta``."""
    if _is_point(claim if claim is not None else trainer.claim):
        return None
    return args.delta if args.delta is not None else getattr(trainer, "delta", None)


def run(args: argparse.Namespace) -> int:
    """Build the trainer, audit it through ``dpaudit.api.audit_training``, print the result."""
    _check(args)
    from dpaudit.api import audit
    from dpaudit.auditors.training.multi_run import MultiRunConfig
    from dpaudit.auditors.training.one_run import OneRunConfig

    trainer = _builtin(args) if args.mechanism in TRAINERS else _user(args)
    claim = _claim(args, trainer)
    if args.method == "one-run":
        config: Any = OneRunConfig(
            canaries=args.canaries,
            runs=args.runs or 1,
            canary_kind=args.canary_kind,
            confidence=args.confidence,
            seed=args.seed,
            delta=_reading_delta(args, trainer, claim),
            bound=args.bound,
        )
    else:
        config = MultiRunConfig(
            runs=args.runs or 600,
            score=args.multi_run_score,
            canary_kind=args.canary_kind,
            background=args.background,
            pilot_runs=args.pilot_runs,
            confidence=args.confidence,
            seed=args.seed,
        )

    def compute(execution: Any) -> Any:
        return audit(
            trainer,
            claim,
            method=args.method,
            config=dataclasses.replace(config, execution=execution),
        )

    result = run_recorded(args, "audit-training", compute)
    return emit_verdict(args, result, render, result.violation)
