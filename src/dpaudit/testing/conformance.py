"""A conformance suite for mechanisms: :func:`check_mechanism`, like ``check_estimator``.

One call runs a list of named checks on any mechanism — a registered one
(:func:`dpaudit.mechanisms.make_mechanism`, the word-level ones of
:mod:`dpaudit.mechanisms.word`) or a user's own (wrap a function ``f(x, n, rng)``
with :func:`dpaudit.testing.as_mechanism` first)::

    from dpaudit.mechanisms import make_mechanism
    from dpaudit.testing import check_mechanism

    check_mechanism(make_mechanism("laplace", epsilon=1.0))   # raises if a check fails

Checks of a vector mechanism (:class:`~dpaudit.mechanisms.base.Mechanism`):

* ``claim`` — a :class:`~dpaudit.claims.PrivacyClaim` with finite ε > 0, δ in
  [0, 1) (0 for pure ε-DP), a well-formed input domain; a metric claim needs a metric;
* ``domain`` — the sampler accepts the points of its claimed domain it is tried
  on (both corners and the middle);
* ``output_shape`` — ``n`` draws come back as an array of shape ``(n, *output_shape)``,
  for ``n = 1`` and ``n > 1``;
* ``dtype`` — numbers, and values that fit the declared ``output_kind``;
* ``finite`` — no ±inf, and no NaN unless the mechanism declares a NaN policy;
* ``seeding`` — same seed → same outputs, different seeds → different outputs
  (:func:`dpaudit.auditors.core.guard.check_randomness`); a fixed internal seed fails, and an
  unseedable source (OS entropy) fails unless the mechanism declares ``externally_seeded``;
* ``log_prob`` — a declared density gives each of the sampler's own outputs a
  finite log-density and passes :func:`dpaudit.auditors.core.declarations.check_log_prob`;
* ``noise_transform`` — a declared ``noise_from_uniform`` passes
  :func:`dpaudit.auditors.core.declarations.check_transform`.

A training algorithm (:class:`~dpaudit.mechanisms.training.contract.TrainingMechanism`)
gets the checks of :mod:`dpaudit.testing.training_checks` (claim, base, scores, seeding,
pickling).  A word mechanism (:class:`~dpaudit.mechanisms.word.base.WordMechanism`) gets
``claim`` (a :class:`~dpaudit.claims.MetricClaim` whose metric gives ``d(w, w) = 0``
and symmetric, non-negative distances), ``output_shape``, ``dtype`` (int64 codes
in ``[0, V + N_SPECIAL)``), ``seeding`` and ``log_prob`` (the declared
``output_log_probs`` sum to 1 and agree with sampled frequencies: one-sided
Clopper–Pearson bounds per code, Bonferroni over the codes, error
:data:`~dpaudit.auditors.core.declarations.DECLARATION_ALPHA`).

Statistical checks draw from fixed seeds, so a report is the same on every run;
a correct declaration fails with probability at most ``DECLARATION_ALPHA`` per
check.  Passing means *no defect found by these checks*, not that the
mechanism is private: that is what :func:`dpaudit.testing.assert_no_violation` probes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.auditors.core.declarations import DECLARATION_ALPHA, check_log_prob, check_transform
from dpaudit.auditors.core.guard import (
    check_randomness,
    domain_corners,
    own_code,
    with_seeded_globals,
)
from dpaudit.claims import Definition, InputDomain, PrivacyClaim
from dpaudit.engine.timeout import mechanism_label, preview
from dpaudit.errors import InvalidTypeError, MechanismError
from dpaudit.mechanisms.base import OUTPUT_KINDS, Mechanism
from dpaudit.mechanisms.training.contract import TrainingMechanism
from dpaudit.mechanisms.word.base import WordMechanism
from dpaudit.random import stable_hash, unit_rng
from dpaudit.testing.results import (
    CheckResult,
    ConformanceError,
    ConformanceReport,
    complete,
    error_text,
    failed,
    passed,
    skipped,
)
from dpaudit.testing.training_checks import training_checks
from dpaudit.testing.word_checks import BATCH_SIZES, word_checks
from dpaudit.validation import check_int

#: Outputs per input drawn by the declaration checks (log_prob, noise_transform).
DEFAULT_DECLARATION_ROWS = 1 << 14

_SEED_TAG = stable_hash("dpaudit.testing.conformance")


# ------------------------------------------------------------------ the claim
def _check_privacy_claim(claim: Any) -> str | None:
    """What is wrong with a vector mechanism's claim, or None."""
    if not isinstance(claim, PrivacyClaim):
        return (
            f"claim is a {type(claim).__name__}: expected a dpaudit.claims.PrivacyClaim "
            "(return one from the claim property)"
        )
    eps, delta = claim.epsilon, claim.delta
    if not (isinstance(eps, int | float) and math.isfinite(eps) and eps > 0):
        return f"claimed ε = {eps!r}: expected a finite number > 0"
    if not (isinstance(delta, int | float) and 0.0 <= delta < 1.0):
        return f"claimed δ = {delta!r}: expected a number in [0, 1)"
    if claim.definition is Definition.PURE and delta != 0.0:
        return f"a pure ε-DP claim with δ = {delta!r}: use Definition.APPROXIMATE or δ = 0"
    if claim.definition is Definition.METRIC:
        return (
            "a metric claim on a vector mechanism has no metric to scale ε by: claim "
            "pure or approximate DP, or make it a word mechanism with a MetricClaim"
        )
    return _check_domain_value(claim.domain)


def _check_domain_value(domain: Any) -> str | None:
    if not isinstance(domain, InputDomain):
        return f"claim.domain is a {type(domain).__name__}: expected a dpaudit.claims.InputDomain"
    shape = domain.shape
    if not (
        isinstance(shape, tuple) and shape and all(isinstance(s, int) and s > 0 for s in shape)
    ):
        return f"domain shape {shape!r}: expected a non-empty tuple of positive integers"
    if not domain.low < domain.high:
        return f"domain [{domain.low}, {domain.high}]: expected LOW < HIGH"
    if domain.integer and not (
        domain.bounded and float(domain.low).is_integer() and float(domain.high).is_integer()
    ):
        return f"integer domain {domain.describe()}: expected finite integer bounds"
    return None


def check_claim(mechanism: Mechanism) -> CheckResult:
    """Check a vector mechanism's ``claim``: see the module docstring."""
    try:
        claim = mechanism.claim
    except Exception as exc:  # a claim that cannot be built is a finding, not a crash
        return failed("claim", f"reading the claim raised {error_text(exc)}")
    problem = _check_privacy_claim(claim)
    if problem is not None:
        return failed("claim", problem)
    return passed("claim", f"well-formed: {claim.describe()}")


# ------------------------------------------------------------- vector outputs
def _probe_inputs(mechanism: Mechanism) -> list[np.ndarray]:
    """Both corners of the claimed domain and, when bounded, its middle (rounded if integer)."""
    xs = domain_corners(mechanism)
    domain = mechanism.input_domain
    if domain.bounded:
        mid = (domain.low + domain.high) / 2.0
        mid = math.floor(mid) if domain.integer else mid
        if domain.low < mid < domain.high:
            xs.append(np.full(domain.shape, mid, dtype=np.float64))
    return xs


def _draw(mechanism: Mechanism, x: np.ndarray, n: int, rng: np.random.Generator) -> Any:
    """``n`` raw outputs at ``x``; foreign code runs with the global generators seeded.

    ``_sample`` is called directly, past :meth:`Mechanism.sample`'s own shape check, so that
    a wrong shape is reported by the ``output_shape`` check with its own message.
    """
    arr = mechanism.validate_input(x)
    if own_code(mechanism):
        return mechanism._sample(arr, n, rng)
    return with_seeded_globals(rng, lambda: mechanism._sample(arr, n, rng))


@dataclass
class _Draws:
    """The outputs drawn by the domain check, reused by the output checks."""

    outputs: list[tuple[np.ndarray, int, Any]]


def check_domain(mechanism: Mechanism, seed: int) -> tuple[CheckResult, _Draws]:
    """Sample ``n`` in :data:`BATCH_SIZES` outputs at each probe input; any exception fails."""
    draws = _Draws([])
    for i, x in enumerate(_probe_inputs(mechanism)):
        for n in BATCH_SIZES:
            try:
                out = _draw(mechanism, x, n, unit_rng(seed, (_SEED_TAG, 0, i, n)))
            except Exception as exc:  # the sampler refused a point of its own domain
                return failed(
                    "domain",
                    f"the claimed domain {mechanism.input_domain.describe()} contains x = "
                    f"{preview(x)}, but sampling {n} output(s) there raised {error_text(exc)}: "
                    "make the sampler accept every input of the claimed domain, or narrow "
                    "the domain in the claim",
                ), draws
            draws.outputs.append((x, n, out))
    where = ", ".join(preview(x) for x, n, _ in draws.outputs if n == BATCH_SIZES[0])
    return passed("domain", f"sampled at {where}"), draws


def check_output_shape(mechanism: Mechanism, draws: _Draws) -> CheckResult:
    """Every batch is an array of shape ``(n, *output_shape)``."""
    try:
        shape = tuple(mechanism.output_shape)
    except Exception as exc:  # an output_shape that cannot be computed
        return failed("output_shape", f"reading output_shape raised {error_text(exc)}")
    if not shape or not all(isinstance(s, int | np.integer) and s > 0 for s in shape):
        return failed("output_shape", f"output_shape {shape!r}: expected positive integers")
    for x, n, out in draws.outputs:
        got = getattr(out, "shape", None)
        if not isinstance(out, np.ndarray) or got != (n, *shape):
            return failed(
                "output_shape",
                f"{n} draw(s) on x = {preview(x)} returned "
                f"{type(out).__name__} of shape {got}: expected an array of shape "
                f"{(n, *shape)} — one row per draw, each of output_shape {shape}",
            )
    return passed("output_shape", f"(n, {', '.join(map(str, shape))}) for n in {BATCH_SIZES}")


def check_dtype(mechanism: Mechanism, draws: _Draws) -> CheckResult:
    """Numeric outputs whose values fit ``output_kind``."""
    kind = mechanism.output_kind
    if kind not in OUTPUT_KINDS:
        return failed("dtype", f"output_kind {kind!r}: expected one of {', '.join(OUTPUT_KINDS)}")
    for x, _, out in draws.outputs:
        if out.dtype.kind not in "biuf":
            return failed(
                "dtype",
                f"outputs on x = {preview(x)} have dtype {out.dtype}: expected numbers "
                "(bool, int or float); encode categories as integers",
            )
        finite = out[np.isfinite(out)] if out.dtype.kind == "f" else out
        if kind == "binary" and not np.all((finite == 0) | (finite == 1)):
            return failed(
                "dtype",
                f"output_kind 'binary' but outputs on x = {preview(x)} hold values other "
                f"than 0/1, e.g. {preview(finite[(finite != 0) & (finite != 1)][:4])}: "
                "return bits, or declare output_kind = 'real'",
            )
        if kind == "categorical" and not np.all((finite >= 0) & (finite == np.round(finite))):
            return failed(
                "dtype",
                f"output_kind 'categorical' but outputs on x = {preview(x)} are not "
                "non-negative integers: return category indices 0..k-1",
            )
    return passed("dtype", f"numeric {kind} outputs")


def check_finite(mechanism: Mechanism, draws: _Draws) -> CheckResult:
    """No ±inf; no NaN unless ``allows_nan_output``."""
    for x, _, out in draws.outputs:
        if out.dtype.kind != "f":
            continue
        if np.isinf(out).any():
            return failed(
                "finite", f"outputs on x = {preview(x)} contain ±inf: clip or fix the sampler"
            )
        if np.isnan(out).any() and not mechanism.allows_nan_output:
            return failed(
                "finite",
                f"outputs on x = {preview(x)} contain NaN: fix the sampler, or, if NaN is a "
                "real output of the published mechanism, declare allows_nan_output = True",
            )
    return passed("finite", "no inf" + ("" if mechanism.allows_nan_output else " and no NaN"))


# ------------------------------------------------------------------ seeding
def check_seeding(mechanism: Mechanism, seed: int) -> CheckResult:
    """Same seed → same outputs, different seeds → different (see the module docstring)."""
    x = domain_corners(mechanism)[0]
    try:
        found = check_randomness(mechanism, x, seed=seed)
    except MechanismError as exc:  # a fixed internal seed (or a sampler failing here)
        return failed("seeding", f"{exc}")
    return _seeding_result(found.kind, mechanism.externally_seeded, f"x = {preview(x)}")


def _seeding_result(kind: str, declared_external: bool, on: str) -> CheckResult:
    """The verdict on a randomness kind (see ``auditors.core.guard.classify_randomness``)."""
    if kind == "seeded":
        return passed("seeding", f"same seed → same outputs, different seeds → different ({on})")
    if kind == "deterministic":
        return passed("seeding", f"deterministic: constant outputs, nothing to seed ({on})")
    if declared_external:
        return passed(
            "seeding",
            "unseedable source, declared (externally_seeded = True): valid, not bit-reproducible",
        )
    return failed(
        "seeding",
        f"the same seed gave different outputs on {on}: the mechanism draws from a source "
        "dpaudit cannot seed (OS entropy, a secure generator, a clock); draw from the rng "
        "argument (or numpy's/Python's global generator), or declare externally_seeded = True "
        "if the source is required",
    )


# --------------------------------------------------------------- declarations
def check_declared_density(
    mechanism: Mechanism, draws: _Draws, seed: int, rows: int
) -> CheckResult:
    """A declared ``log_prob``: finite on the sampler's own outputs, and :func:`check_log_prob`."""
    if not mechanism.has_log_prob:
        return skipped("log_prob", "no log_prob declared")
    for x, n, out in draws.outputs:
        try:
            lp = np.asarray(mechanism.log_prob(x, out), dtype=np.float64)
        except Exception as exc:  # a declaration that cannot score its own outputs is broken
            return failed("log_prob", f"log_prob raised {error_text(exc)} on {n} own output(s)")
        if lp.shape != (n,):
            return failed(
                "log_prob",
                f"log_prob returned shape {lp.shape} for {n} output(s): expected ({n},), "
                "one log-density per output row",
            )
    try:
        finding = check_log_prob(mechanism, seed=seed, rows=rows)
    except MechanismError as exc:
        return failed("log_prob", str(exc))
    if finding is not None:
        return failed(
            "log_prob",
            f"{finding.describe()}: make log_prob the density of what _sample really draws, "
            "or remove the declaration",
        )
    return passed(
        "log_prob", f"consistent with {rows} samples per input (error ≤ {DECLARATION_ALPHA:g})"
    )


def check_declared_transform(mechanism: Mechanism, seed: int, rows: int) -> CheckResult:
    """A declared ``noise_from_uniform`` against the sampler (:func:`check_transform`)."""
    if not mechanism.is_additive:
        return skipped("noise_transform", "no noise_from_uniform declared")
    if tuple(mechanism.output_shape) != tuple(mechanism.input_shape):
        return failed(
            "noise_transform",
            f"noise_from_uniform is declared but outputs {tuple(mechanism.output_shape)} differ "
            f"from inputs {tuple(mechanism.input_shape)} in shape: an additive mechanism "
            "returns x + T(U); remove the declaration",
        )
    try:
        finding = check_transform(mechanism, seed=seed, rows=rows)
    except MechanismError as exc:
        return failed("noise_transform", str(exc))
    if finding is not None:
        return failed(
            "noise_transform",
            f"{finding.describe()}: make noise_from_uniform the transform _sample uses, "
            "or remove the declaration",
        )
    return passed(
        "noise_transform",
        f"consistent with {rows} samples per input (error ≤ {DECLARATION_ALPHA:g})",
    )


# ---------------------------------------------------------------- the suite
def _vector_checks(mechanism: Mechanism, seed: int, rows: int) -> list[CheckResult]:
    """The checks in order; a check whose inputs an earlier failure spoilt is skipped."""
    results = [check_claim(mechanism)]
    if results[-1].passed:
        domain, draws = check_domain(mechanism, seed)
        results.append(domain)
        if domain.passed:
            results.append(check_output_shape(mechanism, draws))
            if results[-1].passed:
                results += [check_dtype(mechanism, draws), check_finite(mechanism, draws)]
                if all(r.passed for r in results):
                    results += [
                        check_seeding(mechanism, seed),
                        check_declared_density(mechanism, draws, seed, rows),
                        check_declared_transform(mechanism, seed, rows),
                    ]
    return complete(results, VECTOR_CHECKS)


#: The checks of a vector mechanism, in order.
VECTOR_CHECKS = (
    "claim",
    "domain",
    "output_shape",
    "dtype",
    "finite",
    "seeding",
    "log_prob",
    "noise_transform",
)


def check_mechanism(
    mechanism: Mechanism | WordMechanism | TrainingMechanism,
    *,
    seed: int = 0,
    declaration_rows: int = DEFAULT_DECLARATION_ROWS,
    raise_on_failure: bool = True,
) -> ConformanceReport:
    """Run the conformance checks (module docstring) on ``mechanism``; raise if one fails.

    ``mechanism``: a dpaudit :class:`~dpaudit.mechanisms.base.Mechanism` or
    :class:`~dpaudit.mechanisms.word.base.WordMechanism` (a plain function
    ``f(x, n, rng)``: wrap it with :func:`dpaudit.testing.as_mechanism` and its claim).
    ``seed`` fixes every draw; ``declaration_rows`` outputs per input test a declared
    density or noise transform (more finds smaller mismatches, slower).  Returns the
    :class:`ConformanceReport`; with ``raise_on_failure`` (default) a failed check raises
    :class:`ConformanceError` (an ``AssertionError``) carrying it.  Example::

        >>> from dpaudit.mechanisms import make_mechanism
        >>> report = check_mechanism(make_mechanism("laplace", epsilon=1.0))
        >>> report.passed, [r.name for r in report.results][:3]
        (True, ['claim', 'domain', 'output_shape'])
    """
    seed = check_int("seed", seed, minimum=0)
    rows = check_int("declaration_rows", declaration_rows, minimum=64)
    if isinstance(mechanism, TrainingMechanism):
        results = training_checks(mechanism, seed)
    elif isinstance(mechanism, WordMechanism):
        results = word_checks(mechanism, seed, rows)
    elif isinstance(mechanism, Mechanism):
        results = _vector_checks(mechanism, seed, rows)
    else:
        raise InvalidTypeError(
            "mechanism",
            mechanism,
            "a dpaudit Mechanism or WordMechanism (wrap a function f(x, n, rng) with "
            "dpaudit.testing.as_mechanism(f, claim))",
        )
    report = ConformanceReport(mechanism_label(mechanism), tuple(results))
    if raise_on_failure and not report.passed:
        raise ConformanceError(report)
    return report
