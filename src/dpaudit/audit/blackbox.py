"""Black-box ε lower bound: DP-Sniper's method, and a stronger search without its ceiling.

Given a mechanism ``M`` and its claim, find an input pair ``(x, x')`` and a set
``S`` with ``Pr[M(x) ∈ S] > e^ε·Pr[M(x') ∈ S] + δ`` and state, with confidence
``1 − α``, the lower bound

    ε_lcb = ln(p1_lower − δ) − ln(p2_upper)

from one-sided Clopper–Pearson bounds on ``p1 = Pr[M(x) ∈ S]`` and
``p2 = Pr[M(x') ∈ S]`` (:mod:`dpaudit.audit.statistics`).  It is valid because
(ε, δ)-DP implies ``p1 ≤ e^ε p2 + δ`` for every ``S`` (Dwork & Roth 2014,
Def. 2.4); for δ = 0 it is DP-Sniper's bound (Bichsel et al., S&P 2021, eq. 9).

Two modes:

``dpsniper`` — DP-Sniper as published (Bichsel et al. 2021, Alg. 1–2, §6):
  StatDP input patterns (ordered, swapped too); a classifier (logistic
  regression, or an MLP with hidden layers 10 and 5) trained on ``M(x)`` (label
  0) against ``M(x')`` (label 1); its probability ``P(x | y)`` rounded to 3
  decimals; threshold at target mass ``c`` on samples of ``M(x')`` with
  randomised ties so ``Pr[M(x') ∈ S] = c``; ``p1, p2`` estimated on fresh
  samples; best pair re-estimated on ``final_samples``.  Because
  ``p2 ≈ c``, its estimate cannot exceed about ``ln(1/c)`` (4.6 at c = 0.01).

``dpaudit`` — four stages on disjoint samples:

  1. *calibration*: a small sample per input trains the classifiers and fixes
     a grid of candidate thresholds (every distinct score, or quantiles at tail
     masses from ``1/n`` to ``1/2``); the best ``screen_pairs`` (pair, score)
     combinations go on;
  2. *ranking*: every candidate — pair × attack family × threshold ×
     tail (``>``/``<``) × tie handling (``>``/``≥``) × orientation (``x`` over
     ``x'`` or the reverse) — is counted on half of ``samples`` fresh outputs
     per input and ranked by the bound it can be counted on to reach on the
     final sample size (:func:`projected_bound`): its counts are first replaced
     by Clopper–Pearson bounds at an error divided by the number of candidates
     compared, so a small tail set wins only when its advantage exceeds what
     the luckiest of thousands of correlated counts would show, and every set
     pays for the width of its final interval (large-mass sets win at equal
     ratio; small-mass sets, which DP-Sniper's fixed ``c`` cannot reach, win
     when their ratio is really larger);
  3. *validation*: the :data:`VALIDATE_TOP` leaders are re-estimated on the
     other half and ranked again, with the margin for that many;
  4. *final*: only the chosen candidate(s) are re-estimated on
     ``final_samples`` fresh outputs per input.

  The attack families of ``auto``: logistic regression and an MLP; when the
  mechanism declares a log-density also the exact likelihood-ratio score
  ``ln p(y|x) − ln p(y|x')`` (Neyman–Pearson: its threshold sets are the most
  powerful tests) — beside logistic regression, never alone, since a declared
  density is a claim about the code rather than the code.

**What the confidence covers.**  The final samples are independent of
everything used to choose the witness (calibration, ranking and validation
samples), so choosing among any number of pairs, families, thresholds,
directions (and, in ``dpsniper`` mode, pairs) costs no confidence.  If ``K``
candidates are re-estimated on the final samples, the result is the best of
``K`` bounds, each computed with both one-sided Clopper–Pearson bounds at
error ``α/(2K)`` (Bonferroni over the ``K`` candidates and the two estimates),
so the reported bound holds with probability at least ``1 − α``.

All sampling runs as work units through :func:`dpaudit.audit.executor.run_units`
(see :mod:`dpaudit.audit.counting`): memory is flat in the sample size and the
result is bit-identical for any number of workers.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from dpaudit.audit.attacks import (
    DPSNIPER_LEVELS,
    LikelihoodRatioScore,
    Score,
    TrainingData,
    candidate_thresholds,
    count_at_thresholds,
    dpsniper_threshold,
    train_classifier,
    weighted_sums_at_thresholds,
)
from dpaudit.audit.checkpoint import run_units  # the executor's, checkpointed in a session
from dpaudit.audit.counting import (
    CountUnit,
    OutputUnit,
    UnitCounts,
    run_count_unit,
    run_output_unit,
    split_samples,
)
from dpaudit.audit.declarations import check_foreign_code
from dpaudit.audit.executor import ExecutionConfig
from dpaudit.audit.guard import check_timeout, with_timeout
from dpaudit.audit.pairs import InputPair, check_pair, generate_pairs
from dpaudit.audit.statistics import clopper_pearson_lower, clopper_pearson_upper
from dpaudit.audit.verdict import (
    AuditResult,
    ProbabilityEstimate,
    ThresholdAttack,
    Witness,
    verdict_text,
)
from dpaudit.claims import Definition
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.base import Mechanism
from dpaudit.validation import check_int, check_probability_open, check_seed

MODES = ("dpaudit", "dpsniper")
CLASSIFIERS = ("auto", "likelihood-ratio", "logistic", "mlp")

#: DP-Sniper's defaults (Bichsel et al. 2021, §6.1): c, n = n_train = n_check, n_final, confidence.
DPSNIPER_TARGET_MASS = 0.01
DPSNIPER_SAMPLES = 10_700_000
DPSNIPER_FINAL_SAMPLES = 200_000_000
DPSNIPER_CONFIDENCE = 0.9

#: Default calibration/training sample per input in dpaudit mode.
DEFAULT_CALIBRATION = 1 << 17
#: Ranking error: every candidate's selection counts are replaced by one-sided
#: Clopper–Pearson bounds (hits in ``x`` down, hits in ``x'`` up) at error
#: ``SELECTION_ERROR / (2·M)`` for ``M`` candidates compared, so that with
#: probability ≥ 1 − SELECTION_ERROR no candidate's ranking value exceeds its true
#: ratio — a set wins on a lucky count only if the count beats that
#: multiplicity-adjusted margin, which is what keeps small tail sets from winning
#: by chance among thousands of correlated candidates.
SELECTION_ERROR = 0.2
#: Leaders of the ranking half re-estimated on the (independent) validation half.
VALIDATE_TOP = 16
#: Candidates per ranking kept for the exact projection after a cheap pre-ranking.
PRERANK = 256

# Stage codes at the head of every work-unit key: the streams never overlap.
_CALIBRATE, _SELECT, _FINAL, _VALIDATE = 1, 2, 3, 4
_SNIPER_TRAIN, _SNIPER_CHECK, _SNIPER_FINAL = 11, 12, 13


@dataclass(frozen=True)
class AuditConfig:
    """Knobs of :func:`audit`; defaults are for a quick audit (DP-Sniper's are constants above).

    ``samples`` is the number of outputs per input for each selection estimate,
    ``final_samples`` per input for the final estimate, ``train_samples`` per
    input for classifier training / threshold calibration (dpaudit default
    ``min(samples, 131072)``; dpsniper default ``samples`` as in DP-Sniper).
    """

    samples: int = 1_000_000
    final_samples: int = 10_000_000
    train_samples: int | None = None
    confidence: float = 0.95
    mode: str = "dpaudit"
    classifier: str = "auto"
    target_mass: float = DPSNIPER_TARGET_MASS
    final_candidates: int = 1
    screen_pairs: int = 4
    pairs: tuple[InputPair, ...] = ()
    use_patterns: bool = True
    seed: int = 0
    unit_timeout: float | None = None

    def __post_init__(self) -> None:
        check_int("samples", self.samples, minimum=1)
        check_int("final_samples", self.final_samples, minimum=1)
        if self.train_samples is not None:
            check_int("train_samples", self.train_samples, minimum=1)
        check_probability_open("confidence", self.confidence)
        if self.mode not in MODES:
            raise InvalidArgumentError("mode", self.mode, f"one of {', '.join(MODES)}")
        if self.classifier not in CLASSIFIERS:
            raise InvalidArgumentError(
                "classifier", self.classifier, f"one of {', '.join(CLASSIFIERS)}"
            )
        check_probability_open("target_mass", self.target_mass)
        check_int("final_candidates", self.final_candidates, minimum=1, maximum=1000)
        check_int("screen_pairs", self.screen_pairs, minimum=1)
        check_seed(self.seed)
        check_timeout(self.unit_timeout, "unit_timeout")
        if not self.pairs and not self.use_patterns:
            raise InvalidArgumentError("pairs", "none", "given pairs when patterns are off")


@dataclass
class _Timer:
    start: float = field(default_factory=time.perf_counter)
    marks: dict[str, float] = field(default_factory=dict)
    last: float = 0.0

    def __post_init__(self) -> None:
        self.last = self.start

    def mark(self, name: str) -> None:
        now = time.perf_counter()
        self.marks[name] = round(now - self.last, 4)
        self.last = now

    def total(self) -> dict[str, float]:
        return {**self.marks, "total": round(time.perf_counter() - self.start, 4)}


@dataclass(frozen=True)
class _Candidate:
    """A fully specified threshold attack on one pair, as ranked by the selection."""

    pair_index: int
    score: Score
    threshold: float
    tail: str  # "upper" or "lower"
    tie_probability: float
    numerator_is_x: bool
    projected: float
    selection_estimate: float
    target_mass: float | None = None


# =========================================================================== API
def audit(
    mechanism: Mechanism,
    config: AuditConfig | None = None,
    execution: ExecutionConfig | None = None,
) -> AuditResult:
    """Run the black-box audit of ``mechanism`` against its own claim.

    Returns an :class:`~dpaudit.audit.verdict.AuditResult` whose
    ``epsilon_lower_bound`` holds with probability ≥ ``config.confidence``
    (see the module docstring for exactly what that covers).
    """
    config = config or AuditConfig()
    execution = execution or ExecutionConfig()
    claim = mechanism.claim
    if claim.definition is Definition.METRIC:
        raise InvalidArgumentError(
            "mechanism", mechanism.name, "a pure or (ε, δ) claim (metric claims are not audited)"
        )
    for p in config.pairs:
        check_pair(mechanism, p)
    pairs = generate_pairs(
        mechanism, mode=config.mode, user_pairs=config.pairs, use_patterns=config.use_patterns
    )
    families = _families(mechanism, config)
    timer = _Timer()
    # Foreign-code checks (trust team): a fixed seed raises; an unseedable source and
    # declarations the sampler contradicts are reported in the result.
    trust = check_foreign_code(mechanism, seed=config.seed)
    if config.mode == "dpsniper":
        result = _audit_dpsniper(mechanism, config, execution, pairs, families, timer)
    else:
        result = _audit_dpaudit(mechanism, config, execution, pairs, families, timer)
    return trust.apply(result)


def _families(mechanism: Mechanism, config: AuditConfig) -> tuple[str, ...]:
    choice = config.classifier
    if choice == "likelihood-ratio" and not mechanism.has_log_prob:
        raise InvalidArgumentError(
            "classifier",
            choice,
            f"logistic, mlp or auto ({mechanism.name} exposes no log-density/pmf)",
        )
    if config.mode == "dpsniper":
        if choice == "likelihood-ratio":
            raise InvalidArgumentError("classifier", choice, "logistic or mlp in dpsniper mode")
        return ("logistic",) if choice == "auto" else (choice,)
    if choice == "auto":
        # A declared density is a hint about the code, not the code: a black-box family
        # always runs beside it, ranked with it under the same multiplicity margin.
        return ("likelihood-ratio", "logistic") if mechanism.has_log_prob else ("logistic", "mlp")
    return (choice,)


# ==================================================================== sampling
@dataclass(frozen=True)
class _Sampler:
    """Runs the audit's work units for one mechanism, root seed and executor."""

    mechanism: Mechanism
    seed: int
    execution: ExecutionConfig
    timeout: float | None

    def outputs(
        self, inputs: list[tuple[float, ...]], n: int, stage: int, desc: str
    ) -> list[TrainingData]:
        """``n`` outputs of every input (compressed when discrete)."""
        mech = self.mechanism
        compress = mech.output_kind in ("binary", "categorical")
        units, owner = [], []
        for i, x in enumerate(inputs):
            for c, size in enumerate(split_samples(n, mech)):
                units.append(OutputUnit(mech, x, size, self.seed, (stage, i, c), compress))
                owner.append(i)
        fn = with_timeout(run_output_unit, self.timeout)
        results = run_units(fn, units, self.execution, desc=desc)
        grouped: list[list[TrainingData]] = [[] for _ in inputs]
        for i, r in zip(owner, results, strict=True):
            grouped[i].append(r)
        return [TrainingData.merge(g, compress) for g in grouped]

    def counts(
        self,
        jobs: list[tuple[tuple[float, ...], tuple[Score, ...], tuple[np.ndarray, ...]]],
        n: int,
        stage: int,
        desc: str,
        tie_probabilities: list[tuple[float, ...]] | None = None,
        importance_signs: list[tuple[int, ...]] | None = None,
    ) -> list[UnitCounts]:
        """Stream ``n`` samples per job (input, scores, thresholds); merged counts per job."""
        mech = self.mechanism
        units, owner = [], []
        for j, (x, scores, thresholds) in enumerate(jobs):
            ties = None if tie_probabilities is None else tie_probabilities[j]
            signs = None if importance_signs is None else importance_signs[j]
            for c, size in enumerate(split_samples(n, mech)):
                key = (stage, j, c)
                units.append(
                    CountUnit(mech, x, scores, thresholds, size, self.seed, key, ties, signs)
                )
                owner.append(j)
        fn = with_timeout(run_count_unit, self.timeout)
        results = run_units(fn, units, self.execution, desc=desc)
        grouped: list[list[UnitCounts]] = [[] for _ in jobs]
        for j, r in zip(owner, results, strict=True):
            grouped[j].append(r)
        return [UnitCounts.merge(g) for g in grouped]


# ============================================================= dpaudit mode
def _audit_dpaudit(
    mech: Mechanism,
    cfg: AuditConfig,
    execution: ExecutionConfig,
    pairs: list[InputPair],
    families: tuple[str, ...],
    timer: _Timer,
) -> AuditResult:
    delta = mech.claim.delta
    K = cfg.final_candidates
    alpha_side = (1.0 - cfg.confidence) / (2 * K)
    n_cal = cfg.train_samples or min(cfg.samples, DEFAULT_CALIBRATION)

    # ---- 1. calibration: train classifiers, fix threshold grids, screen pairs
    inputs = [p.x for p in pairs] + [p.x_prime for p in pairs]
    sampler = _Sampler(mech, cfg.seed, execution, cfg.unit_timeout)
    data = sampler.outputs(inputs, n_cal, _CALIBRATE, "calibrating")
    combos: list[tuple[int, Score, np.ndarray, _CandidateTable]] = []
    for i, pair in enumerate(pairs):
        dx, dxp = data[i], data[len(pairs) + i]
        for family in families:
            if family == "likelihood-ratio":
                score: Score = LikelihoodRatioScore(mech, pair.x, pair.x_prime)
            else:
                score = train_classifier(family, mech, dx, dxp, seed=cfg.seed)
            sx, sxp = score(dx.rows), score(dxp.rows)
            thr = candidate_thresholds([sx, sxp])
            is_lr = isinstance(score, LikelihoodRatioScore)
            table = _CandidateTable.of(
                thr,
                _SideStats.of(sx, thr, dx.counts, +1 if is_lr else 0),
                _SideStats.of(sxp, thr, dxp.counts, -1 if is_lr else 0),
            )
            combos.append((i, score, thr, table))
    # Every candidate of every (pair, score) is compared on the calibration sample.
    n_compared = sum(t.size for *_, t in combos)
    screened = [
        float(np.max(t.project(cfg.final_samples, alpha_side, delta, n_compared), initial=-np.inf))
        for *_, t in combos
    ]
    timer.mark("calibration")
    order = sorted(range(len(combos)), key=lambda k: -screened[k])
    kept = [combos[k][:3] for k in order[: cfg.screen_pairs]]

    # ---- 2. selection: rank on one half, re-estimate the leaders on the other
    jobs, signs = [], []
    for i, score, thr in kept:
        # Likelihood-ratio scores also return importance-weighted sums (see _SideStats).
        is_lr = isinstance(score, LikelihoodRatioScore)
        jobs += [(pairs[i].x, (score,), (thr,)), (pairs[i].x_prime, (score,), (thr,))]
        signs += [(1 if is_lr else 0,), (-1 if is_lr else 0,)]
    n_rank = max(1, cfg.samples // 2)
    n_check = max(1, cfg.samples - n_rank)
    ranking = sampler.counts(jobs, n_rank, _SELECT, "ranking", importance_signs=signs)
    checking = sampler.counts(jobs, n_check, _VALIDATE, "validating", importance_signs=signs)

    def tables(counts: list[UnitCounts]) -> list[_CandidateTable]:
        return [
            _CandidateTable.of(
                thr,
                _SideStats.from_counts(counts[2 * k]),
                _SideStats.from_counts(counts[2 * k + 1]),
            )
            for k, (_, _, thr) in enumerate(kept)
        ]

    rank_tables, check_tables = tables(ranking), tables(checking)
    n_ranked = sum(t.size for t in rank_tables)
    leaders: list[tuple[float, int, int]] = []  # (ranking value, kept index, set index)
    for k, t in enumerate(rank_tables):
        proj = t.project(cfg.final_samples, alpha_side, delta, n_ranked)
        leaders += [(float(proj[j]), k, j) for j in t.leaders(proj, VALIDATE_TOP)]
    leaders.sort(key=lambda v: -v[0])
    leaders = leaders[: max(VALIDATE_TOP, K)]
    candidates: list[_Candidate] = []
    for k in sorted({k for _, k, _ in leaders}):
        mine = np.array([j for _, kk, j in leaders if kk == k], dtype=np.int64)
        t = check_tables[k]
        proj = t.project(cfg.final_samples, alpha_side, delta, len(leaders), only=mine)
        i, score, thr = kept[k]
        for j in mine:
            if np.isfinite(proj[j]):
                candidates.append(t.candidate(i, score, thr, int(j), float(proj[j]), delta))
    candidates.sort(key=lambda c: -c.projected)
    chosen = candidates[:K]
    timer.mark("selection")
    if not chosen:
        return _no_witness(mech, cfg, pairs, families, n_compared, timer)

    # ---- 3. final: fresh samples for the chosen candidate(s) only
    jobs, ties = [], []
    for c in chosen:
        pair = pairs[c.pair_index]
        num, den = (pair.x, pair.x_prime) if c.numerator_is_x else (pair.x_prime, pair.x)
        thr = np.array([c.threshold], dtype=np.float32)
        jobs += [(num, (c.score,), (thr,)), (den, (c.score,), (thr,))]
        ties += [(c.tie_probability,), (c.tie_probability,)]
    final = sampler.counts(jobs, cfg.final_samples, _FINAL, "final", ties)
    timer.mark("final")
    witnesses = [
        _witness(
            mech,
            pairs[c.pair_index],
            c,
            final[2 * k],
            final[2 * k + 1],
            alpha_side,
            cfg.seed,
            (_FINAL, 2 * k),
            (_FINAL, 2 * k + 1),
        )
        for k, c in enumerate(chosen)
    ]
    best = max(witnesses, key=lambda w: w.epsilon_lower_bound)
    statement = (
        f"ε ≥ epsilon_lower_bound holds with probability ≥ {cfg.confidence:g} over the final "
        f"samples. {len(pairs)} pair(s), {len(families)} attack famil(ies) and "
        f"{n_compared} threshold/direction candidates were compared on separate calibration, "
        f"ranking and validation samples, so choosing among them costs no confidence; "
        f"{K} candidate(s) were re-estimated on fresh final samples, Bonferroni-corrected: "
        f"p1_lower and p2_upper are each one-sided Clopper–Pearson bounds at error α/(2·{K}) = "
        f"{alpha_side:.4g} (α = {1 - cfg.confidence:.4g})."
    )
    return _result(
        mech,
        cfg,
        best,
        families,
        pairs,
        n_compared,
        statement,
        timer,
        samples={"calibration": n_cal, "selection": cfg.samples, "final": cfg.final_samples},
    )


@dataclass(frozen=True)
class _SideStats:
    """Selection statistics of one input's outputs against a threshold grid.

    ``greater``/``equal``: counts of ``s > T_j`` / ``s = T_j`` among ``n`` outputs.
    For likelihood-ratio scores also the sums of the importance weights
    ``e^{∓s}`` over the same sets and in total, which estimate the *other*
    input's probability of those sets (:func:`weighted_sums_at_thresholds`).
    """

    greater: np.ndarray
    equal: np.ndarray
    n: int
    w_greater: np.ndarray | None = None
    w_equal: np.ndarray | None = None
    w_total: float = 0.0

    @staticmethod
    def of(scores: np.ndarray, thr: np.ndarray, counts: np.ndarray, sign: int) -> _SideStats:
        """From in-memory scores of (possibly compressed) rows."""
        weights = None if np.all(counts == 1) else counts
        g, e = count_at_thresholds(scores, thr, weights)
        n = int(counts.sum())
        if not sign:
            return _SideStats(g, e, n)
        wg, we, wt = weighted_sums_at_thresholds(scores, thr, sign, counts.astype(np.float64))
        return _SideStats(g, e, n, wg, we, wt)

    @staticmethod
    def from_counts(u: UnitCounts) -> _SideStats:
        """From the merged counts of a selection job (one score)."""
        w = u.weighted[0] if u.weighted is not None else None
        if w is None:
            return _SideStats(u.greater[0], u.equal[0], u.n)
        return _SideStats(u.greater[0], u.equal[0], u.n, w[0], w[1], w[2])


#: The 8 candidate sets of every threshold, in table order: (tail, tie kept, x on top).
_SETS = tuple(
    (tail, q, num_is_x)
    for tail in ("upper", "lower")
    for q in (0.0, 1.0)
    for num_is_x in (True, False)
)


@dataclass(frozen=True)
class _CandidateTable:
    """Counts of all ``8·m`` threshold candidates of one (pair, score) on one sample.

    Candidate sets: ``score > t``, ``score ≥ t``, ``score < t``, ``score ≤ t``,
    each with ``x`` or ``x'`` as the numerator input; entry ``r·m + j`` is set
    :data:`_SETS` ``[r]`` at threshold ``j``.  For the two natural orientations
    of a likelihood-ratio score (upper sets over ``x``, lower sets over ``x'``)
    ``den_rate`` holds an importance-sampling estimate of the denominator
    probability from the numerator's own outputs — bounded weights, low noise
    (NaN elsewhere).
    """

    m: int
    num: np.ndarray
    n_num: np.ndarray
    den: np.ndarray
    n_den: np.ndarray
    den_rate: np.ndarray

    @property
    def size(self) -> int:
        """Number of candidate sets."""
        return len(self.num)

    @staticmethod
    def of(thr: np.ndarray, sx: _SideStats, sxp: _SideStats) -> _CandidateTable:
        """The table of one (pair, score) from both inputs' statistics on one sample."""
        m = len(thr)
        nan = np.full(m, np.nan)
        num, n_num, den, n_den, rate = [], [], [], [], []
        for tail, q, num_is_x in _SETS:
            if tail == "upper":
                hx, hxp = sx.greater + q * sx.equal, sxp.greater + q * sxp.equal
            else:
                hx = sx.n - sx.greater - sx.equal + q * sx.equal
                hxp = sxp.n - sxp.greater - sxp.equal + q * sxp.equal
            est = nan
            if num_is_x and tail == "upper" and sx.w_greater is not None:
                assert sx.w_equal is not None
                est = (sx.w_greater + q * sx.w_equal) / sx.n  # ≈ Pr[M(x') ∈ S]
            if not num_is_x and tail == "lower" and sxp.w_greater is not None:
                assert sxp.w_equal is not None
                low = sxp.w_total - sxp.w_greater - sxp.w_equal + q * sxp.w_equal
                est = np.maximum(low, 0.0) / sxp.n  # ≈ Pr[M(x) ∈ S]
            top, bottom = (sx, sxp) if num_is_x else (sxp, sx)
            num.append(hx if num_is_x else hxp)
            den.append(hxp if num_is_x else hx)
            n_num.append(np.full(m, top.n))
            n_den.append(np.full(m, bottom.n))
            rate.append(est)
        return _CandidateTable(
            m,
            np.rint(np.concatenate(num)).astype(np.int64),
            np.concatenate(n_num),
            np.rint(np.concatenate(den)).astype(np.int64),
            np.concatenate(n_den),
            np.concatenate(rate),
        )

    def project(
        self,
        n_final: int,
        alpha_side: float,
        delta: float,
        compared: int,
        only: np.ndarray | None = None,
    ) -> np.ndarray:
        """:func:`projected_bound` of every candidate (or of ``only``; −inf elsewhere)."""
        idx = np.arange(self.size) if only is None else np.asarray(only, dtype=np.int64)
        out = np.full(self.size, -np.inf)
        out[idx] = projected_bound(
            self.num[idx],
            self.n_num[idx],
            self.den[idx],
            self.n_den[idx],
            n_final,
            alpha_side,
            delta,
            self.den_rate[idx],
            compared=compared,
        )
        return out

    def leaders(self, values: np.ndarray, top: int) -> list[int]:
        """Indices of the ``top`` best distinct sets by ``values`` (finite values only).

        Two entries with the same tail, orientation and counts are the same set
        on this sample (e.g. ``>`` and ``≥`` at a threshold no output hits).
        """
        out: list[int] = []
        seen: set[tuple[int, int, int, int]] = set()
        for idx in np.argsort(-values, kind="stable"):
            if len(out) >= top or not np.isfinite(values[idx]):
                break
            r = int(idx) // self.m  # tail = r // 4, orientation = r % 2 (see _SETS)
            key = (r // 4, r % 2, int(self.num[idx]), int(self.den[idx]))
            if key in seen:
                continue
            seen.add(key)
            out.append(int(idx))
        return out

    def candidate(
        self, pair_index: int, score: Score, thr: np.ndarray, idx: int, value: float, delta: float
    ) -> _Candidate:
        """Entry ``idx`` as a candidate ranked by ``value``."""
        r, j = divmod(idx, self.m)
        tail, q, num_is_x = _SETS[r]
        est = _log_ratio(
            int(self.num[idx]),
            int(self.n_num[idx]),
            int(self.den[idx]),
            int(self.n_den[idx]),
            delta,
        )
        return _Candidate(pair_index, score, float(thr[j]), tail, q, num_is_x, value, est)


def projected_bound(
    k_num: np.ndarray,
    n_num: np.ndarray,
    k_den: np.ndarray,
    n_den: np.ndarray,
    n_final: int,
    alpha_side: float,
    delta: float = 0.0,
    den_rate: np.ndarray | None = None,
    *,
    compared: int = 1,
) -> np.ndarray:
    """The bound each candidate can be counted on to reach on ``n_final`` fresh samples per input.

    Used only for *ranking*; it carries no confidence statement.  The selection
    counts are replaced by one-sided Clopper–Pearson bounds — numerator down,
    denominator up — at error ``SELECTION_ERROR / (2·compared)``
    (:data:`SELECTION_ERROR`): with ``compared`` candidates ranked together, the
    margin grows with ``ln(compared)`` the way the largest of that many lucky
    counts does, so a small set beats a large one only when its advantage is
    real.  Where ``den_rate`` is finite it replaces the denominator's bound: an
    importance-sampling estimate whose noise is already small.  The
    conservative rates are then scaled to ``n_final`` and turned into the
    Clopper–Pearson bound the final stage would compute at ``alpha_side`` — so
    a set also pays for the width of its own final interval, which is what
    makes large-mass sets win when the ratio is the same.
    """
    k_num = np.asarray(k_num, dtype=np.int64)
    k_den = np.asarray(k_den, dtype=np.int64)
    n_num = np.asarray(n_num, dtype=np.float64)
    n_den = np.asarray(n_den, dtype=np.float64)
    rate = np.full(k_num.shape, np.nan) if den_rate is None else np.asarray(den_rate, float)
    use_is = np.isfinite(rate)
    level = SELECTION_ERROR / (2.0 * max(int(compared), 1))
    out = np.full(k_num.shape, -np.inf)
    # Cheap pre-ranking by normal approximations of the same bounds; exact for the best PRERANK.
    z, zf = float(stats.norm.isf(level)), float(stats.norm.isf(alpha_side))
    k1, k2 = k_num.astype(np.float64), k_den.astype(np.float64)
    f1 = np.maximum(k1 - z * np.sqrt(k1), 0.0) / n_num * n_final
    f2 = np.where(use_is, rate, (k2 + z * np.sqrt(k2) + z * z) / n_den) * n_final
    with np.errstate(divide="ignore", invalid="ignore"):
        rough = np.log(np.maximum((f1 - zf * np.sqrt(f1)) / n_final - delta, 0.0)) - np.log(
            (f2 + zf * np.sqrt(f2) + zf * zf) / n_final
        )
    rough[np.isnan(rough)] = -np.inf
    idx = np.argsort(-rough, kind="stable")[:PRERANK]
    idx = idx[np.isfinite(rough[idx])]
    if len(idx) == 0:
        return out
    p1 = np.asarray(clopper_pearson_lower(k_num[idx], n_num[idx], level))
    p2 = np.asarray(clopper_pearson_upper(k_den[idx], n_den[idx], level))
    p2 = np.where(use_is[idx], rate[idx], p2)
    K1 = np.floor(p1 * n_final)
    K2 = np.clip(np.ceil(p2 * n_final), 0, n_final)
    lo = np.asarray(clopper_pearson_lower(K1, n_final, alpha_side))
    hi = np.asarray(clopper_pearson_upper(K2, n_final, alpha_side))
    with np.errstate(divide="ignore", invalid="ignore"):
        out[idx] = np.log(np.maximum(lo - delta, 0.0)) - np.log(hi)
    return out


def _log_ratio(k1: int, n1: int, k2: int, n2: int, delta: float) -> float:
    p1, p2 = k1 / n1, k2 / n2
    if p1 - delta <= 0:
        return -math.inf
    if p2 == 0:
        return math.inf
    return math.log(p1 - delta) - math.log(p2)


def _witness(
    mech: Mechanism,
    pair: InputPair,
    c: _Candidate,
    num_counts: UnitCounts,
    den_counts: UnitCounts,
    alpha_side: float,
    seed: int,
    num_key: tuple[int, ...],
    den_key: tuple[int, ...],
) -> Witness:
    def hits(u: UnitCounts) -> int:
        kept = int(u.ties_kept[0][0]) if u.ties_kept is not None else 0
        g, e = int(u.greater[0][0]), int(u.equal[0][0])
        return g + kept if c.tail == "upper" else u.n - g - e + kept

    h1, h2 = hits(num_counts), hits(den_counts)
    n1, n2 = num_counts.n, den_counts.n
    p1_low = float(clopper_pearson_lower(h1, n1, alpha_side))
    p2_up = float(clopper_pearson_upper(h2, n2, alpha_side))
    delta = mech.claim.delta
    with np.errstate(divide="ignore"):
        lcb = float(np.log(max(p1_low - delta, 0.0)) - np.log(p2_up))
    x, xp = (pair.x, pair.x_prime) if c.numerator_is_x else (pair.x_prime, pair.x)
    score = c.score
    attack = ThresholdAttack(
        family=score.family,
        score=score.describe(),
        score_inputs=(pair.x, pair.x_prime),
        tail=c.tail,
        threshold=c.threshold,
        tie_probability=c.tie_probability,
        target_mass=c.target_mass,
        classifier=score.parameters(),
    )
    return Witness(
        x=x,
        x_prime=xp,
        pair_origin=pair.origin,
        attack=attack,
        p1=ProbabilityEstimate(h1, n1, p1_low, "lower", alpha_side),
        p2=ProbabilityEstimate(h2, n2, p2_up, "upper", alpha_side),
        epsilon_estimate=_log_ratio(h1, n1, h2, n2, delta),
        epsilon_lower_bound=lcb,
        seeds={
            "root_seed": seed,
            "p1_unit_key_prefix": list(num_key),
            "p2_unit_key_prefix": list(den_key),
        },
    )


# ============================================================ dpsniper mode
def _audit_dpsniper(
    mech: Mechanism,
    cfg: AuditConfig,
    execution: ExecutionConfig,
    pairs: list[InputPair],
    families: tuple[str, ...],
    timer: _Timer,
) -> AuditResult:
    family = families[0]
    c = cfg.target_mass
    n = cfg.samples
    n_train = cfg.train_samples or n
    alpha_side = (1.0 - cfg.confidence) / 2.0
    levels = np.arange(DPSNIPER_LEVELS + 1, dtype=np.float32)

    inputs = [p.x for p in pairs] + [p.x_prime for p in pairs]
    sampler = _Sampler(mech, cfg.seed, execution, cfg.unit_timeout)
    data = sampler.outputs(inputs, n_train, _SNIPER_TRAIN, "training")
    scores = [
        train_classifier(
            family, mech, data[i], data[len(pairs) + i], seed=cfg.seed, dpsniper_rounding=True
        )
        for i in range(len(pairs))
    ]
    timer.mark("training")
    # Threshold sample of M(x'), then fresh check samples of M(x) and M(x'), per pair.
    jobs = []
    for i, pair in enumerate(pairs):
        jobs += [
            (pair.x_prime, (scores[i],), (levels,)),
            (pair.x, (scores[i],), (levels,)),
            (pair.x_prime, (scores[i],), (levels,)),
        ]
    counts = sampler.counts(jobs, n, _SNIPER_CHECK, "thresholds and checks")
    best: tuple[float, int, int, float] | None = None
    for i in range(len(pairs)):
        thr_c, chk_x, chk_xp = counts[3 * i], counts[3 * i + 1], counts[3 * i + 2]
        j, q = dpsniper_threshold(thr_c.greater[0], thr_c.equal[0], thr_c.n, c)
        p1 = (chk_x.greater[0][j] + q * chk_x.equal[0][j]) / chk_x.n
        p2 = (chk_xp.greater[0][j] + q * chk_xp.equal[0][j]) / chk_xp.n
        est = math.log(p1 / p2) if p1 > 0 and p2 > 0 else (-math.inf if p1 == 0 else math.inf)
        if best is None or est > best[0]:
            best = (est, i, j, q)
    timer.mark("selection")
    assert best is not None
    est, i, j, q = best
    pair = pairs[i]
    cand = _Candidate(i, scores[i], float(levels[j]), "upper", q, True, est, est, target_mass=c)
    thr = np.array([levels[j]], dtype=np.float32)
    jobs = [(pair.x, (scores[i],), (thr,)), (pair.x_prime, (scores[i],), (thr,))]
    final = sampler.counts(jobs, cfg.final_samples, _SNIPER_FINAL, "final", [(q,), (q,)])
    timer.mark("final")
    w = _witness(
        mech,
        pair,
        cand,
        final[0],
        final[1],
        alpha_side,
        cfg.seed,
        (_SNIPER_FINAL, 0),
        (_SNIPER_FINAL, 1),
    )
    statement = (
        f"DP-Sniper (Bichsel et al. 2021): ε ≥ epsilon_lower_bound holds with probability ≥ "
        f"{cfg.confidence:g} over the final samples; the pair was chosen on separate samples; "
        f"p1_lower and p2_upper are one-sided Clopper–Pearson bounds at error "
        f"{alpha_side:.4g} each. The target mass c = {c:g} caps the estimate near "
        f"ln(1/c) = {math.log(1 / c):.3g}."
    )
    return _result(
        mech,
        cfg,
        w,
        families,
        pairs,
        len(pairs),
        statement,
        timer,
        samples={"train": n_train, "threshold": n, "check": n, "final": cfg.final_samples},
    )


# ================================================================== results
def _result(
    mech: Mechanism,
    cfg: AuditConfig,
    witness: Witness,
    families: tuple[str, ...],
    pairs: list[InputPair],
    n_compared: int,
    statement: str,
    timer: _Timer,
    samples: dict[str, int],
) -> AuditResult:
    claim = mech.claim
    lcb = max(0.0, witness.epsilon_lower_bound)  # ε ≥ 0 always; report no negative bound
    notes = []
    if witness.p2.hits == 0:
        notes.append(
            f"no output of M(x') fell in S: the bound is limited only by the sample size "
            f"(p2_upper = 1 − (error)^(1/n) = {witness.p2.bound:.3g} with n = "
            f"{witness.p2.samples})"
        )
    return AuditResult(
        mechanism=mech.spec(),
        claim=claim.describe(),
        claimed_epsilon=claim.epsilon,
        claimed_delta=claim.delta,
        epsilon_lower_bound=lcb,
        confidence=cfg.confidence,
        violation=lcb > claim.epsilon,
        verdict=verdict_text(lcb, claim.epsilon, cfg.confidence, claim.delta),
        witness=witness,
        mode=cfg.mode,
        attack_families=families,
        samples=samples,
        pairs_tried=len(pairs),
        candidates_compared=n_compared,
        final_candidates=cfg.final_candidates if cfg.mode == "dpaudit" else 1,
        confidence_statement=statement,
        seed=cfg.seed,
        timing=timer.total(),
        notes=tuple(notes),
    )


def _no_witness(
    mech: Mechanism,
    cfg: AuditConfig,
    pairs: list[InputPair],
    families: tuple[str, ...],
    n_compared: int,
    timer: _Timer,
) -> AuditResult:
    claim = mech.claim
    return AuditResult(
        mechanism=mech.spec(),
        claim=claim.describe(),
        claimed_epsilon=claim.epsilon,
        claimed_delta=claim.delta,
        epsilon_lower_bound=0.0,
        confidence=cfg.confidence,
        violation=False,
        verdict=verdict_text(0.0, claim.epsilon, cfg.confidence, claim.delta),
        witness=None,
        mode=cfg.mode,
        attack_families=families,
        samples={"selection": cfg.samples, "final": 0},
        pairs_tried=len(pairs),
        candidates_compared=n_compared,
        final_candidates=0,
        confidence_statement="no candidate set separated the outputs; nothing was re-estimated",
        seed=cfg.seed,
        timing=timer.total(),
        notes=("no candidate had a positive projected bound",),
    )
