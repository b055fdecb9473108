"""The conformance checks of word mechanisms, for :func:`dpaudit.testing.check_mechanism`.

A word mechanism maps a word to an output code (:mod:`dpaudit.mechanisms.word.base`);
its checks are ``claim``, ``output_shape``, ``dtype``, ``seeding`` and ``log_prob``
(described in :mod:`dpaudit.testing.conformance`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import logsumexp

from dpaudit.auditors.core.certify import split_error
from dpaudit.auditors.core.declarations import DECLARATION_ALPHA
from dpaudit.auditors.core.guard import classify_randomness, own_code, with_seeded_globals
from dpaudit.auditors.core.statistics import clopper_pearson_lower, clopper_pearson_upper
from dpaudit.claims import MetricClaim
from dpaudit.engine.timeout import mechanism_label
from dpaudit.errors import MechanismError
from dpaudit.mechanisms.word.base import WordMechanism
from dpaudit.random import stable_hash, unit_rng
from dpaudit.testing.results import CheckResult, complete, error_text, failed, passed, skipped

#: Batch sizes of the shape checks: a single draw and a batch.
BATCH_SIZES = (1, 7)
#: An input word no vocabulary holds, for the out-of-vocabulary path.
OOV_WORD = "<dpaudit-conformance-oov>"
#: Draws per randomness probe.
PROBE_ROWS = 64
#: Largest allowed |log Σ p| of declared output log-probabilities (rounding).
NORMALISATION_TOLERANCE = 1e-6
#: The checks of a word mechanism, in order.
WORD_CHECKS = ("claim", "output_shape", "dtype", "seeding", "log_prob")

_SEED_TAG = stable_hash("dpaudit.testing.word_checks")


def _draw_codes(mechanism: WordMechanism, word: str, n: int, rng: np.random.Generator) -> Any:
    """``n`` codes (unchecked); foreign code runs with the global generators seeded."""
    if own_code(mechanism):
        return mechanism.sample_codes(word, n, rng)
    return with_seeded_globals(rng, lambda: mechanism.sample_codes(word, n, rng))


def check_word_claim(mechanism: WordMechanism) -> CheckResult:
    """A :class:`MetricClaim`: finite ε > 0, a metric that is a distance on the vocabulary."""
    try:
        claim = mechanism.claim
        problem = _check_metric_claim(mechanism, claim)
    except Exception as exc:  # a claim or vocabulary that cannot be read is a finding
        return failed("claim", f"reading the claim raised {error_text(exc)}")
    if problem is not None:
        return failed("claim", problem)
    return passed("claim", f"well-formed: {claim.describe()}")


def _check_metric_claim(mechanism: WordMechanism, claim: Any) -> str | None:
    """What is wrong with a word mechanism's metric claim, or None."""
    if not isinstance(claim, MetricClaim):
        return (
            f"claim is a {type(claim).__name__}: a word mechanism claims metric DP, "
            "expected a dpaudit.claims.MetricClaim with a metric"
        )
    eps = claim.epsilon
    if not (isinstance(eps, int | float) and math.isfinite(eps) and eps > 0):
        return f"claimed ε = {eps!r}: expected a finite number > 0"
    if not callable(getattr(claim.metric, "distances", None)):
        return "the metric claim has no metric (an object with .distances(words, words))"
    words = list(mechanism.vocabulary.words[:3])
    if len(words) < 2:
        return "the vocabulary has fewer than two words: nothing to claim privacy between"
    a = [w for w in words for _ in words]
    b = [v for _ in words for v in words]
    try:
        d = np.asarray(claim.metric.distances(a, b), dtype=np.float64).reshape(len(words), -1)
        d_t = np.asarray(claim.metric.distances(b, a), dtype=np.float64).reshape(len(words), -1)
    except Exception as exc:  # the metric must answer for vocabulary words
        return f"the metric raised {error_text(exc)} on vocabulary words {words}"
    if np.any(np.diag(d) != 0) or np.any(np.isnan(d)) or np.any(d < 0):
        return f"the metric is not a distance on {words}: d = {d.tolist()} (need d(w,w) = 0, d ≥ 0)"
    if not np.array_equal(d, d_t):
        return f"the metric is not symmetric on {words}: d = {d.tolist()}"
    return None


def _probe_words(mechanism: WordMechanism) -> list[str]:
    words = mechanism.vocabulary.words
    return [words[0], words[-1], OOV_WORD]


def check_word_outputs(mechanism: WordMechanism, seed: int) -> tuple[CheckResult, CheckResult]:
    """``output_shape`` (``(n,)`` arrays) and ``dtype`` (integer codes in range) together."""
    n_codes = mechanism.n_codes
    outputs = []
    for i, word in enumerate(_probe_words(mechanism)):
        for n in BATCH_SIZES:
            try:
                out = _draw_codes(mechanism, word, n, unit_rng(seed, (_SEED_TAG, 0, i, n)))
            except Exception as exc:  # sample_codes must return codes, not raise
                return failed(
                    "output_shape",
                    f"sampling {n} code(s) for word {word!r} raised {error_text(exc)}: "
                    "sample_codes must return codes (out-of-vocabulary input: V + UNCHANGED)",
                ), skipped("dtype", "not run: check 'output_shape' failed")
            if not isinstance(out, np.ndarray) or out.shape != (n,):
                got = getattr(out, "shape", type(out).__name__)
                return failed(
                    "output_shape",
                    f"{n} draw(s) for word {word!r} returned {got}: expected an array of "
                    f"shape ({n},), one code per draw",
                ), skipped("dtype", "not run: check 'output_shape' failed")
            outputs.append((word, out))
    shape = passed("output_shape", f"(n,) codes for n in {BATCH_SIZES}")
    for word, out in outputs:
        if out.dtype.kind not in "iu" or np.any(out < 0) or np.any(out >= n_codes):
            return shape, failed(
                "dtype",
                f"codes for word {word!r} ({out.dtype}: {out[:4].tolist()}) are not integers "
                f"in [0, {n_codes}): return vocabulary indices 0..V-1 or V + a special outcome",
            )
    return shape, passed("dtype", f"integer codes in [0, {n_codes})")


def check_word_seeding(mechanism: WordMechanism, seed: int) -> CheckResult:
    """Same seed → same codes, different seeds → different (a fixed seed fails)."""
    word = mechanism.vocabulary.words[0]
    try:
        found = classify_randomness(
            lambda tag: np.asarray(
                _draw_codes(mechanism, word, PROBE_ROWS, unit_rng(seed, (_SEED_TAG, 1, tag)))
            ),
            mechanism_label(mechanism),
            f"word {word!r}",
            kind="word mechanism",
        )
    except MechanismError as exc:
        return failed("seeding", str(exc))
    if found.kind == "unseedable":
        return failed(
            "seeding",
            f"the same seed gave different codes for word {word!r}: the mechanism draws from "
            "a source dpaudit cannot seed; draw from the rng argument",
        )
    return passed("seeding", f"{found.kind} (word {word!r})")


def check_word_density(mechanism: WordMechanism, seed: int, rows: int) -> CheckResult:
    """Declared ``output_log_probs``: normalised, and each code's frequency within its bounds."""
    word = mechanism.vocabulary.words[0]
    try:
        declared = mechanism.output_log_probs(word)
    except Exception as exc:  # a declaration that raises is broken
        return failed("log_prob", f"output_log_probs({word!r}) raised {error_text(exc)}")
    if declared is None:
        return skipped("log_prob", "no output_log_probs declared")
    lp = np.asarray(declared, dtype=np.float64)
    if lp.shape != (mechanism.n_codes,) or np.isnan(lp).any():
        return failed(
            "log_prob",
            f"output_log_probs({word!r}) has shape {lp.shape}"
            f"{' and NaN' if np.isnan(lp).any() else ''}: expected ({mechanism.n_codes},) "
            "log-probabilities, one per code (-inf for impossible codes)",
        )
    total = float(logsumexp(lp))
    if not abs(total) <= NORMALISATION_TOLERANCE:
        return failed(
            "log_prob",
            f"output_log_probs({word!r}) sum to e^{total:.3g}, not 1: normalise them",
        )
    codes = np.asarray(_draw_codes(mechanism, word, rows, unit_rng(seed, (_SEED_TAG, 2))))
    counts = np.bincount(codes, minlength=mechanism.n_codes)
    a_side = split_error(DECLARATION_ALPHA, mechanism.n_codes)
    p = np.exp(lp)
    low = clopper_pearson_lower(counts, rows, a_side)
    high = clopper_pearson_upper(counts, rows, a_side)
    bad = np.flatnonzero((p < low) | (p > high) | ((p == 0) & (counts > 0)))
    if bad.size:
        k = int(bad[np.argmax(np.abs(counts[bad] / rows - p[bad]))])
        return failed(
            "log_prob",
            f"declared density does not match the samples: code {k} has declared probability "
            f"{p[k]:.4g} but {counts[k]} of {rows} draws for word {word!r} (bounds "
            f"[{float(low[k]):.4g}, {float(high[k]):.4g}], error ≤ {DECLARATION_ALPHA:g} "
            "Bonferroni over the codes): make output_log_probs the law sample_codes draws from",
        )
    return passed("log_prob", f"consistent with {rows} draws (error ≤ {DECLARATION_ALPHA:g})")


def word_checks(mechanism: WordMechanism, seed: int, rows: int) -> list[CheckResult]:
    """The checks of a word mechanism in order (later ones skipped after a failure)."""
    results = [check_word_claim(mechanism)]
    if results[-1].passed:
        results += check_word_outputs(mechanism, seed)
        if all(r.passed for r in results):
            results += [
                check_word_seeding(mechanism, seed),
                check_word_density(mechanism, seed, rows),
            ]
    return complete(results, WORD_CHECKS)
