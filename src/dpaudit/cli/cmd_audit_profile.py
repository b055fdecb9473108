"""``dpaudit audit MECHANISM --claim ...``: audit a whole claim (profile, GDP, RDP, zCDP).

With ``--claim`` the audit certifies lower bounds on the whole privacy profile
``δ(ε)`` of one input pair, on its GDP parameter μ and on its Rényi curve
(a :class:`~dpaudit.auditors.profile.ProfileAuditor` run through the one entry,
:func:`dpaudit.api.audit`), and compares them with the
claim at every ε of the grid, its μ, its ε(α) or its ρ.  The forms of the
claim are those of :mod:`dpaudit.claims.parse`, plus ``library``: the
whole claim the mechanism's own library states (an OpenDP measurement's
privacy map, a diffprivlib Gaussian's calibration; see ``profile_claim`` on
the adapters).  Without ``--samples``/``--final-samples`` its sizes are fitted to
``--time-budget`` (default 120 s) from timed pilot runs, as the black box's are.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dpaudit import progress
from dpaudit.cli.common import build_mechanism, emit_verdict, run_recorded
from dpaudit.cli.sizing import plan
from dpaudit.errors import InvalidArgumentError
from dpaudit.serialization import to_jsonable

if TYPE_CHECKING:  # claims and the auditor need scipy, which the CLI's start-up must not load
    from dpaudit.auditors.blackbox.pairs import InputPair
    from dpaudit.auditors.profile import ProfileAuditConfig
    from dpaudit.claims.parse import ParsedClaim
    from dpaudit.mechanisms.base import Mechanism
    from dpaudit.results.audit import AuditResult

#: The forms of ``--claim`` (those of :data:`dpaudit.claims.parse.CLAIM_FORMS`, kept
#: here as text so that ``--help`` does not load scipy; a test checks that they agree).
CLAIM_FORMS = (
    "pure:EPS",
    "approx:EPS,DELTA",
    "gdp:MU",
    "zcdp:RHO",
    "renyi:ORDER=EPS[,ORDER=EPS...]",
    "gaussian-analytic:EPS,DELTA[,SENSITIVITY]",
    "gaussian-classic:EPS,DELTA[,SENSITIVITY]",
)
#: Scores of a whole-claim audit (``auto``: the likelihood ratio when the mechanism has one).
SCORES = ("auto", "likelihood-ratio", "projection")
#: The form that reads the mechanism's own whole claim.
LIBRARY = "library"
#: Final samples per selection sample when the sizes are fitted to a time budget.  Selection
#: only places the thresholds; the fresh final count certifies them, and its cost per output
#: is the selection's (one score each), so the budget goes to it: on the classic Gaussian at
#: (10, 0.01), exact δ(10) = 0.041, ``--claim approx:10,0.01`` on the default ε grid finds
#: no violation at 10⁶ / 10⁷ and certifies δ(10) ≥ 0.027 at 10⁵ / 10⁸ and at 10⁶ / 10⁸ alike
#: (about 10 s on one worker).
PLAN_RATIO = 100
#: The most selection samples a plan chooses (final: PLAN_RATIO times as many, 10⁸): beyond
#: 10⁸ outputs per input a δ below 10⁻⁷ or an ε beyond ln 10⁸ ≈ 18 is all that more samples
#: could add, and a fast mechanism's audit at these sizes takes seconds, not the budget.
PLAN_CAP = 1_000_000
#: Selection samples of the smallest pilot (its warm-up: a quarter, the auditor's minimum 100).
PILOT_SAMPLES = 400

#: Printed under every whole-claim verdict: what the numbers mean.
PROFILE_BOUND_MEANING = (
    "δ_lcb(ε) and μ_lcb are one-sided lower bounds on the pair's true privacy profile δ(ε) "
    "and GDP parameter μ, holding together for every ε of the grid at the stated confidence: "
    "δ_lcb(ε) = max over the certified sets S of Pr[M(x) ∈ S]_lower − e^ε·Pr[M(x′) ∈ S]_upper. "
    "They can show a violation of a claim; they never show that a mechanism is private."
)


def add_profile_args(p: argparse.ArgumentParser) -> None:
    """``--claim`` and ``--score``."""
    p.add_argument(
        "--claim",
        default=None,
        metavar="CLAIM",
        help="audit a whole claim instead of one (ε, δ): "
        + ", ".join((*CLAIM_FORMS, LIBRARY))
        + " (library: the mechanism's own, e.g. an OpenDP privacy map); one pair, sized "
        "to --time-budget unless --samples/--final-samples are given",
    )
    p.add_argument(
        "--epsilons",
        default=None,
        metavar="GRID",
        help="with --claim: the ε grid, as START:STOP:STEP (e.g. 9.5:11:0.1) or a list 1,2,5 "
        "(default 0 to ln(final samples) in steps of 0.25; fewer points, fewer sets to certify)",
    )
    p.add_argument(
        "--score",
        choices=SCORES,
        default="auto",
        help="with --claim: the attack score (auto = likelihood-ratio when the mechanism has "
        "a log-density, else projection on x − x′)",
    )


def _reject_unused(args: argparse.Namespace) -> None:
    """Options of the single-point search that a whole-claim audit does not use."""
    unused = (
        ("--mode", args.mode != "dpaudit", "dpaudit (the default)"),
        ("--classifier", args.classifier != "auto", "--score with --claim"),
        ("--train-samples", args.train_samples is not None, "not given with --claim"),
        ("--final-candidates", args.final_candidates != 1, "not given with --claim"),
        ("--no-patterns", args.no_patterns and not args.pair, "used together with --pair"),
    )
    for option, given, allowed in unused:
        if given:
            raise InvalidArgumentError(option, getattr(args, option[2:].replace("-", "_")), allowed)
    if len(args.pair) > 1:
        raise InvalidArgumentError("--pair", args.pair, "at most one pair with --claim")


def resolve_claim(text: str, mechanism: Mechanism) -> ParsedClaim:
    """The claim of ``--claim``: parsed, or (``library``) read from the mechanism's library."""
    from dpaudit.claims.parse import ParsedClaim, parse_claim

    if text.strip().lower() != LIBRARY:
        return parse_claim(text, "--claim", (LIBRARY,))
    own = getattr(mechanism, "profile_claim", None)
    if own is None:
        raise InvalidArgumentError(
            "--claim",
            text,
            f"one of {', '.join(CLAIM_FORMS)} ({mechanism.name!r} states no whole claim of its "
            "own; 'library' needs an adapter that does, e.g. opendp-gaussian)",
        )
    source = getattr(mechanism, "profile_claim_source", None)
    return ParsedClaim(own, LIBRARY, source)


def _pair(args: argparse.Namespace, mechanism: Mechanism) -> InputPair:
    from dpaudit.auditors.blackbox.pairs import InputPair, check_pair, parse_pair

    if args.pair:
        return parse_pair(args.pair[0], mechanism)
    domain = mechanism.input_domain
    if not domain.bounded:
        raise InvalidArgumentError(
            "--pair",
            None,
            f"one pair 'A;B' (the domain {domain.describe()} has no corners to default to)",
        )
    pair = InputPair(
        [domain.low] * domain.size, [domain.high] * domain.size, "box: opposite corners"
    )
    check_pair(mechanism, pair)
    return pair


def _score(choice: str, mechanism: Mechanism, pair: InputPair, bits: bool = True) -> Any:
    """The score of ``--score``: ``auto`` is the entry's own choice
    (:func:`dpaudit.api.profile_score`), else the one named, checked against the mechanism."""
    import numpy as np

    from dpaudit.api import profile_score
    from dpaudit.auditors.blackbox.scores import LikelihoodRatioScore
    from dpaudit.auditors.profile.scores import ProjectionScore

    x, xp = tuple(pair.x), tuple(pair.x_prime)
    if choice == "auto":
        chosen = profile_score(mechanism, x, xp, bits=bits)
        if chosen is not None:
            return chosen
        # Outputs of the input's size that are not real (integers, say), or of another size
        # (refused below): the projection, as --score projection has it.
        choice = "projection"
    if choice == "likelihood-ratio":
        if not mechanism.has_log_prob:
            raise InvalidArgumentError(
                "--score", choice, f"projection ({mechanism.name!r} has no log-density)"
            )
        return LikelihoodRatioScore(mechanism, x, xp)
    if int(np.prod(mechanism.output_shape)) != len(x):
        raise InvalidArgumentError(
            "--score",
            choice,
            f"likelihood-ratio ({mechanism.name!r}'s outputs are not of the "
            "input's size, so the projection score does not apply)",
        )
    return ProjectionScore(x, xp)


def parse_grid(text: str | None) -> tuple[float, ...] | None:
    """``--epsilons``: ``START:STOP:STEP`` (both ends included) or a comma-separated list."""
    if text is None:
        return None
    allowed = "START:STOP:STEP with 0 <= START <= STOP, STEP > 0 (at most 1000 points) or a list"
    try:
        if ":" in text:
            start, stop, step = (float(v) for v in text.split(":"))
            if not (0.0 <= start <= stop and step > 0 and (stop - start) / step <= 1000):
                raise ValueError
            count = int((stop - start) / step + 1e-9) + 1  # STOP included when on the grid
            grid = tuple(round(start + i * step, 12) for i in range(count))
        else:
            grid = tuple(float(v) for v in text.split(","))
    except ValueError:
        raise InvalidArgumentError("--epsilons", text, allowed) from None
    if not grid or any(not (0.0 <= e < float("inf")) for e in grid):
        raise InvalidArgumentError("--epsilons", text, "finite numbers >= 0: " + allowed)
    return grid


def _check_args(args: argparse.Namespace) -> None:
    """Sizes (where given), confidence, seed and grid, before anything is built or timed."""
    for option, value in (("--samples", args.samples), ("--final-samples", args.final_samples)):
        if value is not None and value < 100:
            raise InvalidArgumentError(option, value, "an integer >= 100 with --claim")
    explicit = args.samples is not None or args.final_samples is not None
    if explicit and args.time_budget is not None:
        raise InvalidArgumentError(
            "--time-budget", args.time_budget, "no --samples/--final-samples beside it"
        )
    if not 0.0 < args.confidence < 1.0:
        raise InvalidArgumentError(
            "--confidence", args.confidence, "a number in the open interval (0, 1)"
        )
    if args.seed < 0:
        raise InvalidArgumentError("--seed", args.seed, "an integer >= 0")
    parse_grid(args.epsilons)


def _config(args: argparse.Namespace, samples: int, final: int) -> ProfileAuditConfig:
    from dpaudit.auditors.profile import ProfileAuditConfig

    return ProfileAuditConfig(
        selection_samples=samples,
        final_samples=final,
        confidence=args.confidence,
        epsilons=parse_grid(args.epsilons),
        seed=args.seed,
    )


def _sizes(args: argparse.Namespace, pilot: Callable[[int, int], Any]) -> None:
    """``--samples``/``--final-samples``: as given (one alone: the other at the profile
    auditor's default), or fitted to ``--time-budget`` from timed pilots and printed."""
    from dpaudit.auditors.profile import ProfileAuditConfig

    if args.samples is None and args.final_samples is None:
        plan(args, pilot, cap=PLAN_CAP, pilot_samples=PILOT_SAMPLES, ratio=PLAN_RATIO)
        return
    base = ProfileAuditConfig()
    args.samples = base.selection_samples if args.samples is None else args.samples
    args.final_samples = base.final_samples if args.final_samples is None else args.final_samples


def run_profile(args: argparse.Namespace) -> int:
    """Validate everything, size the whole-claim audit, run it through the one entry
    (:func:`dpaudit.api.audit` with a :class:`~dpaudit.auditors.profile.ProfileAuditor`),
    print or store its result."""
    from dpaudit.claims.parse import parse_claim

    _reject_unused(args)
    if args.claim.strip().lower() != LIBRARY:
        parse_claim(args.claim, "--claim", (LIBRARY,))  # bad text fails before any sampling
    _check_args(args)
    mechanism = build_mechanism(args)
    parsed = resolve_claim(args.claim, mechanism)
    pair = _pair(args, mechanism)
    score = _score(args.score, mechanism, pair, bits=not getattr(args, "values_only", False))

    # The one entry (it loads scipy and every auditor): after every argument is checked.
    from dpaudit.api import audit
    from dpaudit.auditors.profile import ProfileAuditor
    from dpaudit.engine.config import ExecutionConfig

    auditor = ProfileAuditor(
        pair.x,
        pair.x_prime,
        score,
        pair_origin=pair.origin,
        claim_source=parsed.text,
        claim_note=parsed.note or "",
    )
    pilots = ExecutionConfig(workers=args.workers)
    _sizes(
        args,
        lambda s, f: audit(
            mechanism, parsed.claim, method=auditor, config=_config(args, s, f), execution=pilots
        ),
    )
    config = _config(args, args.samples, args.final_samples)

    def compute(execution: ExecutionConfig) -> AuditResult:
        return audit(mechanism, parsed.claim, method=auditor, config=config, execution=execution)

    with progress.whole_run(getattr(args, "planned_seconds", None), "audit"):
        result = run_recorded(args, "audit", compute)
    return emit_verdict(args, result, lambda r: render_profile(r, args.verbose), result.violation)


def _witness_lines(r: AuditResult) -> list[str]:
    d = r.detail
    lines = [
        f"witness: x = {to_jsonable(list(d.x))}, x′ = {to_jsonable(list(d.x_prime))}  "
        f"({d.pair_origin})"
    ]
    k = d.witness_set
    if k is None:
        return lines
    s = d.certified[k]
    a, b = ("x", "x′") if s.forward else ("x′", "x")
    name = f"score[{s.score_column}]" if s.score_column else "score"
    lines += [
        f"  S = {{y : {name}(y) {'>' if s.above else '≤'} {s.threshold:.6g}}}  (score: {d.score})",
        f"  Pr[M({a}) ∈ S] ≈ {s.p1_hits / s.p1_samples:.6g} ({s.p1_hits} of "
        f"{s.p1_samples} outputs), at least {s.p1_lower:.6g}",
        f"  Pr[M({b}) ∈ S] ≈ {s.p2_hits / s.p2_samples:.6g} "
        f"({s.p2_hits} of {s.p2_samples} outputs), at most {s.p2_upper:.6g}",
    ]
    return lines


def render_profile(r: AuditResult, verbose: bool = False) -> str:
    """Verdict first, what the bounds mean, the witness, then what the audit could see."""
    d = r.detail
    lines = [r.verdict_text, "  " + PROFILE_BOUND_MEANING]
    lines.append(f"claim: {r.claim}  (--claim {d.claim_source})")
    if d.claim_note:
        lines.append(f"  {d.claim_note}")
    lines += _witness_lines(r)
    lines += [f"finding: {f}" for f in d.findings if not f.startswith("verdict:")]
    if verbose:
        lines.append(f"{'ε':>6} {'claimed δ(ε)':>13} {'δ_lcb(ε)':>11} {'ceiling':>10}  verdict")
        for p in d.profile:
            lines.append(
                f"{p.epsilon:>6g} {p.claimed_delta:>13.4g} {p.delta_lower_bound:>11.4g} "
                f"{p.ceiling:>10.4g}  {p.verdict}"
            )
    else:
        lines.append(f"({len(d.profile)} grid points of δ_lcb(ε): -v)")
    lines.append(f"time: {r.timing['total']:.2f} s")
    return "\n".join(lines)
