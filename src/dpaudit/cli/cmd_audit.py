"""``dpaudit audit``: black-box ε lower bound with a re-checkable witness.

Searches input pairs and threshold attacks for a set S with
Pr[M(x) ∈ S] > e^ε·Pr[M(x') ∈ S] + δ and reports the one-sided bound
ε ≥ ln(p1_lower − δ) − ln(p2_upper) at the chosen confidence.  A violation is
reported only when that bound exceeds the claimed ε; otherwise "no violation
found" (never "the mechanism is private").

Word-level mechanisms (cmp, mahalanobis, vickrey, tem, truncated-gumbel,
santext, santext+, custext) make a metric-DP claim: every word pair is audited
against its own allowed loss ε·d(w, w') (see dpaudit.auditors.metric.auditor), with
pairs from the embedding's geometry plus --pair 'A;B'; a pair whose honest
bound would need more samples than drawn is "inconclusive", never a pass.

With --claim (e.g. --claim gdp:0.5, zcdp:0.125, approx:1,1e-5, renyi:2=0.25,4=0.5,
gaussian-analytic:1,1e-5 or library) the audit certifies the whole privacy
profile δ(ε) of one pair, its GDP μ and Rényi curve, and judges the whole claim
(see dpaudit.cli.cmd_audit_profile).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from dpaudit import progress
from dpaudit.auditors.blackbox.auditor import AuditConfig
from dpaudit.auditors.blackbox.config import default_train_samples
from dpaudit.auditors.blackbox.names import CLASSIFIERS, MODES
from dpaudit.auditors.blackbox.pairs import InputPair, parse_pair
from dpaudit.auditors.core.guard import check_sample_memory, checked_sample, domain_corners
from dpaudit.auditors.metric.auditor import MetricAuditConfig
from dpaudit.auditors.metric.sampling import sample_word_codes
from dpaudit.cli.cmd_audit_profile import add_profile_args, render_profile, run_profile
from dpaudit.cli.common import (
    add_mechanism_args,
    add_run_args,
    add_seed,
    build_mechanism,
    emit_verdict,
    parse_params,
    require_callable_domain,
    run_recorded,
)
from dpaudit.cli.main import command_help
from dpaudit.cli.parser import integer, positive_seconds
from dpaudit.cli.sizing import plan
from dpaudit.cli.word_args import (
    add_word_args,
    build_word_mechanism,
    fmt,
    parse_word_pair,
    wants_word_audit,
)
from dpaudit.engine.config import ExecutionConfig
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.word.base import WordMechanism
from dpaudit.results.audit import AuditorKind, AuditResult
from dpaudit.serialization import to_jsonable
from dpaudit.validation import check_epsilon
from dpaudit.witness import Witness, format_value


def register(sub: Any) -> None:
    """Add the ``audit`` sub-command."""
    p = sub.add_parser(
        "audit",
        help=command_help("audit"),
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_mechanism_args(p)
    _add_size_args(p)
    _add_search_args(p)
    _add_pair_args(p)
    add_word_args(p, metric=True)
    add_profile_args(p)
    p.add_argument(
        "--fail-on-violation",
        action="store_true",
        help="exit with status 1 when a violation is found",
    )
    add_seed(p)
    add_run_args(p)
    p.set_defaults(func=run)


def _add_size_args(p: argparse.ArgumentParser) -> None:
    """Sample sizes, time budget and confidence."""
    p.add_argument(
        "--samples",
        type=integer,
        default=None,
        metavar="N",
        help="outputs per input for each selection estimate (default 1e6, word mechanisms "
        "1e5; DP-Sniper: 10.7e6)",
    )
    p.add_argument(
        "--final-samples",
        type=integer,
        default=None,
        metavar="N",
        help="outputs per input for the final estimate (default 1e7, word mechanisms 1e6; "
        "DP-Sniper: 2e8)",
    )
    p.add_argument(
        "--train-samples",
        type=integer,
        default=None,
        metavar="N",
        help="outputs per input for training (classifiers, threshold grid) "
        "(default: min(samples, max(131072, samples/8)); dpsniper mode: samples)",
    )
    p.add_argument(
        "--confidence",
        type=float,
        default=0.95,
        help="confidence 1−α of the bound, in (0, 1) (default 0.95; DP-Sniper: 0.9)",
    )
    p.add_argument(
        "--time-budget",
        type=positive_seconds,
        default=None,
        metavar="SECONDS",
        help="size the audit to about this many seconds from timed pilot runs on this machine "
        "(used when --samples/--final-samples are not given; the sizes chosen are printed)",
    )
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="print the attack's details, the confidence statement and every note",
    )


def _add_search_args(p: argparse.ArgumentParser) -> None:
    """How the black-box search looks for a witness."""
    p.add_argument(
        "--mode",
        choices=MODES,
        default="dpaudit",
        help="dpaudit (no ceiling, exact likelihood ratio) or dpsniper (as published)",
    )
    p.add_argument(
        "--classifier",
        choices=CLASSIFIERS,
        default="auto",
        help="attack family; auto = likelihood-ratio + logistic when the mechanism has a "
        "log-density, else logistic + mlp + split + histogram (discrete outputs) "
        "(dpsniper mode: logistic)",
    )
    p.add_argument(
        "--target-mass",
        type=float,
        default=0.01,
        metavar="C",
        help="DP-Sniper's target mass c in dpsniper mode (default 0.01)",
    )
    p.add_argument(
        "--final-candidates",
        type=integer,
        default=1,
        metavar="K",
        help="best candidates re-estimated on the final samples, beside the winner's ladder of "
        "smaller sets (Bonferroni over all of them; default 1)",
    )
    p.add_argument(
        "--sequential",
        action="store_true",
        help="count the final sets in doubling looks and stop at the first that refutes the "
        "claim, or once none could at the last look (each look at its own share of the "
        "error; the last at half of it)",
    )
    p.add_argument(
        "--values-only",
        action="store_true",
        help="read float outputs as real numbers: no sets on their low-order bits (the float "
        "representation check is off)",
    )


def _add_pair_args(p: argparse.ArgumentParser) -> None:
    """Which input pairs are tried."""
    p.add_argument(
        "--pair",
        action="append",
        default=[],
        metavar="A;B",
        help="input pair to try, e.g. '0;1' or '0,0;1,1'; with a typed --domain 'A|B', e.g. "
        "'3|4', 'red|blue', '[1, 2]|[1, 2, 100]' (repeatable; added to the patterns)",
    )
    p.add_argument(
        "--no-patterns",
        action="store_true",
        help="try only the --pair pairs, not the generated patterns",
    )
    p.add_argument(
        "--pair-search",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="black-box audits of a box or of categories: screen a space-filling design of "
        "inputs over the whole domain, then search single-entry moves around the best-looking "
        "pairs, on outputs of their own (default on; costs no confidence; off by itself with "
        "--no-patterns)",
    )
    p.add_argument(
        "--max-pairs",
        type=integer,
        default=16,
        metavar="N",
        help="word mechanisms: word pairs audited (default 16; --pair pairs always included)",
    )


def _check_common(args: argparse.Namespace, samples: int, final_samples: int) -> None:
    """Checks shared by the black-box and the word audit (sizes, confidence, seed, pairs)."""
    for option, value in (("--samples", samples), ("--final-samples", final_samples)):
        if value < 1:
            raise InvalidArgumentError(option, value, "an integer >= 1")
    if not (math.isfinite(args.confidence) and 0.0 < args.confidence < 1.0):
        raise InvalidArgumentError(
            "--confidence", args.confidence, "a number in the open interval (0, 1)"
        )
    if args.seed < 0:
        raise InvalidArgumentError("--seed", args.seed, "an integer >= 0")
    if args.no_patterns and not args.pair:
        raise InvalidArgumentError("--no-patterns", True, "used together with --pair")


def build_config(args: argparse.Namespace, mechanism: Any) -> AuditConfig:
    """The :class:`AuditConfig` described by the command line (validated)."""
    from dpaudit.auditors.blackbox.config import AuditConfig, SearchConfig

    args.samples = 1_000_000 if args.samples is None else args.samples
    args.final_samples = 10_000_000 if args.final_samples is None else args.final_samples
    _check_common(args, args.samples, args.final_samples)
    if args.train_samples is not None and args.train_samples < 1:
        raise InvalidArgumentError("--train-samples", args.train_samples, "an integer >= 1")
    if not (math.isfinite(args.target_mass) and 0.0 < args.target_mass < 1.0):
        raise InvalidArgumentError(
            "--target-mass", args.target_mass, "a number in the open interval (0, 1)"
        )
    if args.final_candidates < 1:
        raise InvalidArgumentError("--final-candidates", args.final_candidates, "an integer >= 1")
    if getattr(mechanism, "typed", False):  # typed --pair 'A|B', parsed with the mechanism
        pairs = tuple(InputPair(*p) for p in mechanism.given_pairs())
    else:
        pairs = tuple(parse_pair(text, mechanism) for text in args.pair)
    return AuditConfig(
        samples=args.samples,
        final_samples=args.final_samples,
        train_samples=args.train_samples,
        confidence=args.confidence,
        mode=args.mode,
        classifier=args.classifier,
        target_mass=args.target_mass,
        best_candidates=args.final_candidates,
        pairs=pairs,
        use_patterns=not args.no_patterns,
        search=SearchConfig(
            pair_search=args.pair_search,
            input_design=args.pair_search,
            representation=not getattr(args, "values_only", False),
        ),
        seed=args.seed,
        unit_timeout=getattr(args, "unit_timeout", None),
        sequential=getattr(args, "sequential", False),
    )


#: Printed under every black-box verdict: what the number means.
BOUND_MEANING = (
    "ε_lcb is a one-sided lower bound on the mechanism's true ε: with the stated "
    "confidence the true ε is at least ε_lcb. It can show a violation of a claim; it never "
    "shows that a mechanism is private."
)


def _render(result: AuditResult, verbose: bool = False) -> str:
    """Verdict first, what the bound means, the witness in x/x′ terms; details with -v."""
    lines = [result.verdict_text, "  " + BOUND_MEANING]
    lines += [f"finding: {f.summary} ({f.evidence})" for f in result.declaration_findings]
    if result.witness is not None:
        lines += _witness_lines(result.witness, verbose)
    # Without a violation, what the audit could see and which inputs it looked at come first.
    shown = ("What this audit could see", "inputs looked at", "float representation")
    power = [n for n in result.notes if n.startswith(shown) and not result.violation]
    # A witness read from the float bits comes with what the representation check saw.
    attack = result.witness.attack if result.witness is not None else None
    if result.violation and attack is not None and attack.family == "representation":
        power += [n for n in result.notes if n.startswith("float representation")]
    lines += power
    if verbose:
        lines += [f"claim: {result.claim}  (mode {result.detail.mode})"]
        lines.append(result.confidence_statement)
        lines += [f"note: {n}" for n in result.notes if n not in power]
    elif len(result.notes) > len(power):
        lines.append(f"({len(result.notes) - len(power)} more note(s): -v)")
    lines.append(f"time: {result.timing['total']:.2f} s")
    return "\n".join(lines)


def _shown(x: tuple[float, ...] | str) -> Any:
    """An input as its JSON form shows it (a list of numbers, or a word as it is)."""
    return x if isinstance(x, str) else to_jsonable(list(x))


def _witness_lines(w: Witness, verbose: bool) -> list[str]:
    """The witness: the pair, the set S and the two estimates whose bounds give ε_lcb."""
    a, p1, p2 = w.attack, w.p1, w.p2
    assert a is not None and p1 is not None and p2 is not None  # a black-box witness has all
    typed = w.values is not None  # a typed domain: x, x′ are the user's values
    x, xp = (
        (format_value(w.values[0]), format_value(w.values[1]))
        if w.values is not None
        else (_shown(w.x), _shown(w.x_prime))
    )
    lines = [
        f"witness: x = {x}, x′ = {xp}  ({w.pair_origin})",
        f"  S = {w.output_set}  (the outputs y with {a.set_description}; attack: {a.family})"
        if w.output_set
        else f"  S = {{y : {a.set_description}}}  (attack: {a.family})",
        f"  Pr[M(x) ∈ S]  ≈ {p1.estimate:.6g} ({p1.hits} of {p1.samples} outputs), "
        f"at least {p1.bound:.6g}",
        f"  Pr[M(x′) ∈ S] ≈ {p2.estimate:.6g} ({p2.hits} of {p2.samples} outputs), "
        f"at most {p2.bound:.6g}",
    ]
    if verbose and typed:
        lines.append(f"  inputs: {w.input_encoding}")
    if verbose:
        # The score's inputs are the encoded ones (x, x_prime), whatever the user sees.
        names = {tuple(_shown(w.x)): "x", tuple(_shown(w.x_prime)): "x′"}
        a_in, b_in = (_shown(v) for v in a.score_inputs)
        a_name = names.get(tuple(a_in), str(a_in))
        b_name = names.get(tuple(b_in), str(b_in))
        lines.append(f"  score(y) = {a.score}, where a = {a_name} and b = {b_name}")
    return lines


def build_word_config(
    args: argparse.Namespace, default_samples: tuple[int, int] | None = None
) -> MetricAuditConfig:
    """The :class:`MetricAuditConfig` described by the command line (validated).

    ``default_samples`` (the mechanism's, e.g. a slow adapter's) replaces the
    auditor's default (selection, final) sample sizes.
    """
    from dpaudit.auditors.metric.auditor import MetricAuditConfig

    base = MetricAuditConfig()
    default_sel, default_fin = default_samples or (base.samples, base.final_samples)
    samples = default_sel if args.samples is None else args.samples
    final = default_fin if args.final_samples is None else args.final_samples
    _check_common(args, samples, final)
    if args.max_pairs < 1:
        raise InvalidArgumentError("--max-pairs", args.max_pairs, "an integer >= 1")
    return MetricAuditConfig(
        samples=samples,
        final_samples=final,
        confidence=args.confidence,
        max_pairs=args.max_pairs,
        pairs=tuple(parse_word_pair(t) for t in args.pair),
        search=not args.no_patterns,
        seed=args.seed,
    )


def _render_word(result: AuditResult) -> str:
    lines = [result.verdict_text, f"claim: {result.claim}"]
    header = f"{'pair':<42} {'d':>8} {'ε·d':>8} {'ε_lcb':>8} {'ratio':>7}  verdict"
    lines += ["", header, "-" * len(header)]
    for p in result.detail.pairs:
        pair = f"{p.w!r} / {p.w_prime!r} [{p.origin}]"
        verdict = p.verdict + p.power_clause()
        lines.append(
            f"{pair:<42} {fmt(p.distance):>8} {fmt(p.allowed_loss):>8} "
            f"{fmt(p.epsilon_lower_bound):>8} {fmt(p.ratio):>7}  {verdict}"
        )
    w = result.detail.worst
    if w is not None:
        lines += [
            "",
            f"worst pair: {w.w!r} vs {w.w_prime!r}; S = {w.set_rule} "
            f"({w.set_size} outcomes, e.g. {', '.join(w.set_preview[:6])})",
            f"  p1 ≈ {w.p1.estimate:.6g} ({w.p1.hits}/{w.p1.samples}), "
            f"lower bound {w.p1.bound:.6g}; p2 ≈ {w.p2.estimate:.6g} "
            f"({w.p2.hits}/{w.p2.samples}), upper bound {w.p2.bound:.6g}",
        ]
    lines.append(result.confidence_statement)
    lines += [f"note: {n}" for n in result.notes]
    lines.append(f"time: {result.timing['total']:.2f} s")
    return "\n".join(lines)


def _draw(mechanism: Mechanism) -> Callable[[int], Any]:
    """``k`` outputs of the mechanism at its domain's low corner (the speed probe's draw)."""
    x = domain_corners(mechanism)[0]
    rng = np.random.default_rng(0)
    return lambda k: checked_sample(mechanism, x, k, rng)


def _word_draw(mechanism: WordMechanism) -> Callable[[int], Any]:
    """``k`` outputs of a word mechanism on its most frequent word (the speed probe's draw)."""
    word = mechanism.vocabulary.words[0]
    rng = np.random.default_rng(0)
    return lambda k: sample_word_codes(mechanism, word, k, rng)


def _pilot_args(args: argparse.Namespace, samples: int, final: int) -> argparse.Namespace:
    return argparse.Namespace(**{**vars(args), "samples": samples, "final_samples": final})


def _check_pair_search(args: argparse.Namespace) -> None:
    """``--no-pair-search`` only where there is a pair search to switch off.

    The word audit picks its pairs from the embedding, ``--claim`` audits one pair,
    and dpsniper mode keeps DP-Sniper's fixed patterns: a switch that would change
    nothing there is refused rather than silently ignored.
    """
    if args.pair_search:
        return
    other = (
        "--claim"
        if args.claim is not None
        else "a word mechanism"
        if wants_word_audit(args)
        else "--mode dpsniper"
        if args.mode == "dpsniper"
        else None
    )
    if other is not None:
        raise InvalidArgumentError(
            "--no-pair-search", True, f"a dpaudit-mode black-box audit, not with {other}"
        )


def run(args: argparse.Namespace) -> int:
    """Run the audit; exit 1 on a violation with ``--fail-on-violation``."""
    if args.epsilon is not None:  # the commonest typo, refused before the auditors load
        check_epsilon(args.epsilon, "--epsilon")
    require_callable_domain(args)
    # The one entry (it loads scipy and every auditor): after the cheap argument checks.
    from dpaudit.api import audit
    from dpaudit.auditors.metric.auditor import MetricAuditConfig, sampling_seconds

    pilot_execution = ExecutionConfig(workers=args.workers)
    verbose = getattr(args, "verbose", False)
    _check_pair_search(args)
    if args.claim is not None:
        if wants_word_audit(args):
            raise InvalidArgumentError(
                "--claim", args.claim, "a non-word mechanism (word mechanisms claim metric DP)"
            )
        return run_profile(args)
    for option, unused in (("--score", args.score != "auto"), ("--epsilons", args.epsilons)):
        if unused:
            raise InvalidArgumentError(option, getattr(args, option[2:]), "used with --claim")
    if wants_word_audit(args):
        word_mech = build_word_mechanism(args, parse_params(args.param))
        word_draw = _word_draw(word_mech)
        if word_mech.default_samples is not None and args.time_budget is None:
            # A slow library's own defaults stand in for explicit sizes (and get an estimate).
            sel, fin = word_mech.default_samples
            args.samples = sel if args.samples is None else args.samples
            args.final_samples = fin if args.final_samples is None else args.final_samples
        plan(
            args,
            lambda s, f: audit(
                word_mech,
                config=build_word_config(_pilot_args(args, s, f)),
                execution=pilot_execution,
            ),
            cap=MetricAuditConfig().samples,
            # A slow library (one with its own defaults) gets pilots a tenth as large.
            pilot_samples=200 if word_mech.default_samples is None else 20,
            draw=word_draw,
            sized_seconds=sampling_seconds,
        )
        word_config = build_word_config(args, word_mech.default_samples)
        with progress.whole_run(getattr(args, "planned_seconds", None), "audit"):
            result = run_recorded(
                args, "audit", lambda e: audit(word_mech, config=word_config, execution=e)
            )
        return emit_verdict(args, result, _render_word, result.violation)
    mechanism = build_mechanism(args)
    if args.mode == "dpaudit":
        plan(
            args,
            lambda s, f: audit(
                mechanism,
                config=build_config(_pilot_args(args, s, f), mechanism),
                execution=pilot_execution,
            ),
            cap=1_000_000,
            pilot_samples=2_000,
            draw=_draw(mechanism),
        )
    config = build_config(args, mechanism)
    train = config.train_samples or (
        config.samples if config.mode == "dpsniper" else default_train_samples(config.samples)
    )
    check_sample_memory(mechanism, train, 2, "--train-samples", "the training outputs")
    with progress.whole_run(getattr(args, "planned_seconds", None), "audit"):
        result = run_recorded(args, "audit", lambda e: audit(mechanism, config=config, execution=e))
    return emit_verdict(args, result, lambda r: _render_any(r, verbose), result.violation)


def _render_any(result: AuditResult, verbose: bool) -> str:
    """The black-box rendering, or the profile's where the profile certifier refuted the claim."""
    if result.kind is AuditorKind.PROFILE:
        return render_profile(result, verbose)
    return _render(result, verbose)
