"""Black-box ε lower bound: DP-Sniper's method, and a stronger search without its ceiling.

Given a mechanism ``M`` and its claim, find an input pair ``(x, x')`` and a set
``S`` with ``Pr[M(x) ∈ S] > e^ε·Pr[M(x') ∈ S] + δ`` and state, with confidence
``1 − α``, the lower bound

    ε_lcb = ln(p1_lower − δ) − ln(p2_upper)

from one-sided Clopper–Pearson bounds on ``p1 = Pr[M(x) ∈ S]`` and
``p2 = Pr[M(x') ∈ S]`` (:mod:`dpaudit.audit.core.statistics`).  It is valid because
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

  1. *training*: a small sample per input trains the classifiers and fixes a
     grid of candidate thresholds (every distinct score, or quantiles at tail
     masses from ``1/n`` to ``1/2``); the best ``screen_pairs`` (default 32)
     (pair, score) combinations go on — the training sample is too small to
     judge them (its margin covers every candidate of every combination), and
     each input is sampled once for all the scores that use it, so a wide
     screen costs scoring, not sampling;
  2. *ranking*: every candidate — pair × attack family × threshold ×
     tail (``>``/``<``) × tie handling (``>``/``≥``) × orientation (``x`` over
     ``x'`` or the reverse) — is counted on half of ``samples`` fresh outputs
     per input and ranked by the bound it can be counted on to reach on the
     final sample size (:func:`~dpaudit.audit.blackbox.selection.projected_bound`): its
     counts are first replaced by Clopper–Pearson bounds at an error divided by
     the number of candidates compared, so a small tail set wins only when its
     advantage exceeds what the luckiest of thousands of correlated counts
     would show, and every set pays for the width of its final interval
     (large-mass sets win at equal ratio; small-mass sets, which DP-Sniper's
     fixed ``c`` cannot reach, win when their ratio is really larger);
  3. *validation*: the :data:`~dpaudit.audit.blackbox.selection.VALIDATE_TOP` leaders
     (and half as many more, the best under the margin for the leaders alone,
     so that an effect the full margin hides at small sizes keeps a chance) are
     re-estimated on the other half and ranked again, with the margin for
     that many;
  3b. *playoff*: the best candidate of each of the
     :data:`~dpaudit.audit.blackbox.selection.PLAYOFF_GROUPS` best (pair, orientation)
     groups has its score counted on ``samples`` more fresh outputs per input,
     and the candidates of those scores are ranked again on validation +
     playoff counts: two pairs whose ratios differ by less than the validation
     noise (ReportNoisyMax1's 0.0946 and 0.0927) are told apart before the final
     stage spends its samples on one of them;
  4. *final*: only the chosen candidate(s) are re-estimated on
     ``final_samples`` fresh outputs per input — with the winner's *ladder*
     (:meth:`~dpaudit.audit.blackbox.selection.CandidateTable.ladder`): up to
     :data:`~dpaudit.audit.blackbox.selection.LADDER_RUNGS` smaller sets of its own
     kind, at masses ``m/√10, m/10, …``, kept when they look better at face
     value on the validation half.  The margin of stage 2–3 must cover the
     noise of the selection sample, which is large for small sets; the final
     sample (DP-Sniper's: 19× the selection sample) resolves them, and the
     rungs share the winner's final samples (one job per input, one count per
     set), so they cost only the wider Bonferroni correction below.

  The attack families of ``auto``: logistic regression, an MLP and ``split``
  (logistic regression on per-coordinate median indicators, the additive
  score that sums many small bounded losses; for outputs of two or more
  numeric coordinates), and ``histogram`` (the empirical log-ratio of whole
  output rows, :mod:`~dpaudit.audit.blackbox.histogram`; trained only where the
  training outputs turn out discrete).  Symbols inside numeric outputs (SVT's
  ``-1`` "aborted", ``-1000`` "below") become flag features of the classifiers
  (:mod:`~dpaudit.audit.blackbox.atoms`).  When the
  mechanism declares a log-density, the exact likelihood-ratio score
  ``ln p(y|x) − ln p(y|x')`` (Neyman–Pearson: its threshold sets are the most
  powerful tests) beside logistic regression — never alone, since a declared
  density is a claim about the code rather than the code.

**What the confidence covers.**  The final samples are independent of
everything used to choose the witness (training, ranking, validation and
playoff samples), so choosing among any number of pairs, families, thresholds,
directions (and, in ``dpsniper`` mode, pairs) costs no confidence.  If ``K``
sets are re-estimated on the final samples (the ``final_candidates`` best and
the winner's ladder; the result's ``final_candidates`` gives ``K``), the result
is the best of ``K`` bounds, each computed with both one-sided Clopper–Pearson
bounds at error ``α/(2K)`` (Bonferroni over the ``K`` sets and the two
estimates; no independence between the sets is needed, so they may share
samples), so the reported bound holds with probability at least ``1 − α``.

All sampling runs as work units through :func:`dpaudit.engine.executor.run_units`
(see :mod:`dpaudit.audit.blackbox.counting`): memory is flat in the sample size and the
result is bit-identical for any number of workers.
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.audit.blackbox.config import (
    CLASSIFIERS,
    DEFAULT_TRAIN_SAMPLES,
    DPSNIPER_CONFIDENCE,
    DPSNIPER_FINAL_SAMPLES,
    DPSNIPER_SAMPLES,
    DPSNIPER_TARGET_MASS,
    MODES,
    STAGE_FINAL,
    STAGE_PLAYOFF,
    STAGE_SELECT,
    STAGE_TRAIN,
    STAGE_VALIDATE,
    AuditConfig,
    default_train_samples,
)
from dpaudit.audit.blackbox.dpsniper import audit_dpsniper
from dpaudit.audit.blackbox.histogram import train_histogram
from dpaudit.audit.blackbox.outcome import build_result, build_witness, no_witness_result
from dpaudit.audit.blackbox.pairs import InputPair, check_pair, generate_pairs
from dpaudit.audit.blackbox.result import AuditResult
from dpaudit.audit.blackbox.sampler import Sampler, Timer
from dpaudit.audit.blackbox.scores import (
    LikelihoodRatioScore,
    Score,
    candidate_thresholds,
    train_classifier,
)
from dpaudit.audit.blackbox.selection import (
    PLAYOFF_GROUPS,
    PLAYOFF_TIE_Z,
    VALIDATE_TOP,
    Candidate,
    CandidateTable,
    SideStats,
    projected_bound,
)
from dpaudit.audit.core.declarations import check_foreign_code
from dpaudit.claims import Definition
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.base import Mechanism

__all__ = [
    "CLASSIFIERS",
    "DEFAULT_TRAIN_SAMPLES",
    "DPSNIPER_CONFIDENCE",
    "DPSNIPER_FINAL_SAMPLES",
    "DPSNIPER_SAMPLES",
    "DPSNIPER_TARGET_MASS",
    "MODES",
    "AuditConfig",
    "audit",
    "projected_bound",
]


# =========================================================================== API
def audit(
    mechanism: Mechanism,
    config: AuditConfig | None = None,
    execution: ExecutionConfig | None = None,
) -> AuditResult:
    """Run the black-box audit of ``mechanism`` against its own claim.

    Returns an :class:`~dpaudit.audit.blackbox.result.AuditResult` whose
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
    timer = Timer()
    # Foreign-code checks (trust team): a fixed seed raises; an unseedable source and
    # declarations the sampler contradicts are reported in the result.
    trust = check_foreign_code(mechanism, seed=config.seed)
    if config.mode == "dpsniper":
        result = audit_dpsniper(mechanism, config, execution, pairs, families, timer)
    else:
        result = _audit_dpaudit(mechanism, config, execution, pairs, families, timer)
    return trust.apply(result)


def _families(mechanism: Mechanism, config: AuditConfig) -> tuple[str, ...]:
    choice = config.classifier
    if choice == "likelihood-ratio" and not mechanism.has_log_prob:
        raise InvalidArgumentError(
            "classifier",
            choice,
            f"logistic, mlp, split or auto ({mechanism.name} exposes no log-density/pmf)",
        )
    if config.mode == "dpsniper":
        if choice in ("likelihood-ratio", "split", "histogram"):
            raise InvalidArgumentError("classifier", choice, "logistic or mlp in dpsniper mode")
        return ("logistic",) if choice == "auto" else (choice,)
    if choice == "auto":
        # A declared density is a hint about the code, not the code: a black-box family
        # always runs beside it, ranked with it under the same multiplicity margin.
        if mechanism.has_log_prob:
            return ("likelihood-ratio", "logistic")
        # ``split`` (additive indicators) catches many small per-coordinate losses that a
        # linear score drowns in noise.  On one coordinate its sets are threshold sets of
        # the output itself (logistic regression has them all), on one-hot categorical
        # outputs it adds nothing: there it would only add candidates.
        # ``histogram`` (the empirical ratio of whole output rows) is trained only where
        # the training outputs turn out discrete (few distinct rows, each seen often).
        if mechanism.output_kind == "categorical" or math.prod(mechanism.output_shape) < 2:
            return ("logistic", "mlp", "histogram")
        return ("logistic", "mlp", "split", "histogram")
    return (choice,)


# ============================================================= dpaudit mode
def _audit_dpaudit(
    mech: Mechanism,
    cfg: AuditConfig,
    execution: ExecutionConfig,
    pairs: list[InputPair],
    families: tuple[str, ...],
    timer: Timer,
) -> AuditResult:
    delta = mech.claim.delta
    K = cfg.final_candidates
    alpha_side = (1.0 - cfg.confidence) / (2 * K)
    n_train = cfg.train_samples or default_train_samples(cfg.samples)

    # ---- 1. training: train classifiers, fix threshold grids, screen pairs
    inputs = [p.x for p in pairs] + [p.x_prime for p in pairs]
    sampler = Sampler(mech, cfg.seed, execution, cfg.unit_timeout)
    data = sampler.outputs(inputs, n_train, STAGE_TRAIN, "training")
    combos: list[tuple[int, Score, np.ndarray, CandidateTable]] = []
    for i, pair in enumerate(pairs):
        dx, dxp = data[i], data[len(pairs) + i]
        for family in families:
            if family == "likelihood-ratio":
                score: Score = LikelihoodRatioScore(mech, pair.x, pair.x_prime)
            elif family == "histogram":
                # Chosen by ``auto`` for every mechanism; trained only where outputs are discrete.
                table = train_histogram(dx, dxp, only_if_discrete=cfg.classifier == "auto")
                if table is None:
                    continue
                score = table
            else:
                score = train_classifier(family, mech, dx, dxp, seed=cfg.seed)
            sx, sxp = score(dx.rows), score(dxp.rows)
            thr = candidate_thresholds([sx, sxp])
            is_lr = isinstance(score, LikelihoodRatioScore)
            table = CandidateTable.of(
                thr,
                SideStats.of(sx, thr, dx.counts, +1 if is_lr else 0),
                SideStats.of(sxp, thr, dxp.counts, -1 if is_lr else 0),
            )
            combos.append((i, score, thr, table))
    # The families actually trained (``histogram`` only where the outputs were discrete).
    families = tuple(f for f in families if any(c[1].family == f for c in combos)) or families
    # Every candidate of every (pair, score) is compared on the training sample.
    n_compared = sum(t.size for *_, t in combos)
    screened = [
        float(np.max(t.project(cfg.final_samples, alpha_side, delta, n_compared), initial=-np.inf))
        for *_, t in combos
    ]
    timer.mark("training")
    order = sorted(range(len(combos)), key=lambda k: -screened[k])
    kept = [combos[k][:3] for k in order[: cfg.screen_pairs]]

    # ---- 2. selection: rank on one half, re-estimate the leaders on the other.
    # Each input is sampled once per stage for every kept score that uses it, so keeping
    # more (pair, score) combinations costs scoring, not sampling.
    n_rank = max(1, cfg.samples // 2)
    n_check = max(1, cfg.samples - n_rank)
    everything = list(range(len(kept)))
    ranking = _count_kept(sampler, pairs, kept, everything, n_rank, STAGE_SELECT, "ranking")
    check_tables = _count_kept(
        sampler, pairs, kept, everything, n_check, STAGE_VALIDATE, "validating"
    )
    rank_tables = [ranking[k] for k in everything]
    n_ranked = sum(t.size for t in rank_tables)
    # Leaders: the best under the margin for every candidate ranked and, so that an effect
    # that margin hides at small sample sizes still gets its chance, the best under the
    # margin for the leaders alone.  The validation half decides between them: a lucky
    # count on the ranking half does not repeat on the other.
    top = max(VALIDATE_TOP, K)
    chosen_sets: set[tuple[int, int]] = set()  # (kept index, set index)
    for compared, count in ((n_ranked, top), (top, top // 2)):
        ranked: list[tuple[float, int, int]] = []
        for k, t in enumerate(rank_tables):
            proj = t.project(cfg.final_samples, alpha_side, delta, compared)
            ranked += [(float(proj[j]), k, j) for j in t.leaders(proj, count)]
        ranked.sort(key=lambda v: -v[0])
        chosen_sets.update((k, j) for _, k, j in ranked[:count])
    # And DP-Sniper's fixed-mass sets (mass target_mass under the denominator input):
    # chosen without the numerator's counts, they need no margin to get through.
    for k, t in enumerate(rank_tables):
        chosen_sets.update((k, j) for j in t.at_mass(cfg.target_mass))
    candidates = _ranked(check_tables, kept, sorted(chosen_sets), cfg, alpha_side, delta)
    if not candidates:
        timer.mark("selection")
        return no_witness_result(mech, cfg, pairs, families, n_compared, timer)
    candidates, check_tables, n_playoff, too_close = _playoff(
        sampler, pairs, kept, candidates, check_tables, cfg.samples, cfg, alpha_side, delta
    )
    chosen = [c for c, _, _ in candidates[:K]]
    taken = {(k, j) for _, k, j in candidates[:K]}
    # Groups the playoff could not tell from the leader: the final sample decides.
    runners_up = [(c, k, j) for c, k, j in too_close if (k, j) not in taken]
    chosen += [c for c, _, _ in runners_up]
    taken.update((k, j) for _, k, j in runners_up)
    # The winner's ladder: smaller sets of its kind that the selection margin could not
    # certify, decided between on the (much larger) final sample.
    _, k0, j0 = candidates[0]
    t0, (i0, score0, thr0) = check_tables[k0], kept[k0]
    rungs = 0
    for j in t0.ladder(j0, cfg.final_samples, alpha_side, delta):
        if (k0, j) not in taken:
            chosen.append(t0.candidate(i0, score0, thr0, j, -math.inf, delta))
            rungs += 1
    n_final_sets = len(chosen)
    alpha_final = (1.0 - cfg.confidence) / (2 * n_final_sets)
    timer.mark("selection")

    # ---- 3. final: fresh samples for the chosen candidate(s) only.  Sets on one pair
    # share their samples, whatever their score and orientation (one job per input,
    # one slot per set); the Bonferroni correction needs no independence between them.
    groups: dict[int, list[int]] = {}
    for n_c, c in enumerate(chosen):
        groups.setdefault(c.pair_index, []).append(n_c)
    jobs, ties = [], []
    slot_of: dict[int, tuple[int, int]] = {}  # chosen index -> (group, slot)
    for g, (i, members) in enumerate(groups.items()):
        scores = tuple(chosen[m].score for m in members)
        thrs = tuple(np.array([chosen[m].threshold], dtype=np.float32) for m in members)
        q = tuple(chosen[m].tie_probability for m in members)
        jobs += [(pairs[i].x, scores, thrs), (pairs[i].x_prime, scores, thrs)]
        ties += [q, q]
        slot_of.update({m: (g, s) for s, m in enumerate(members)})
    final = sampler.counts(jobs, cfg.final_samples, STAGE_FINAL, "final", ties)
    timer.mark("final")
    witnesses = []
    for n_c, c in enumerate(chosen):
        g, slot = slot_of[n_c]
        num, den = (2 * g, 2 * g + 1) if c.numerator_is_x else (2 * g + 1, 2 * g)
        witnesses.append(
            build_witness(
                mech,
                pairs[c.pair_index],
                c,
                final[num],
                final[den],
                alpha_final,
                cfg.seed,
                (STAGE_FINAL, num),
                (STAGE_FINAL, den),
                cfg.confidence,
                slot=slot,
            )
        )
    best = max(witnesses, key=lambda w: w.epsilon_lower_bound)
    K, alpha_side = n_final_sets, alpha_final
    statement = (
        f"ε ≥ epsilon_lower_bound holds with probability ≥ {cfg.confidence:g} over the final "
        f"samples. {len(pairs)} pair(s), {len(families)} attack famil(ies) and "
        f"{n_compared} threshold/direction candidates were compared on separate training, "
        f"ranking, validation{' and playoff' if n_playoff else ''} samples, so choosing among "
        f"them costs no confidence; "
        f"{K} set(s) ({len(chosen) - rungs - len(runners_up)} best candidate(s), "
        f"{len(runners_up)} runner(s)-up too close to call, {rungs} smaller set(s) of the "
        f"winner's kind) were re-estimated on fresh final samples, Bonferroni-corrected: "
        f"p1_lower and p2_upper are each one-sided Clopper–Pearson bounds at error α/(2·{K}) = "
        f"{alpha_side:.4g} (α = {1 - cfg.confidence:.4g})."
    )
    return build_result(
        mech,
        cfg,
        best,
        families,
        pairs,
        n_compared,
        statement,
        timer,
        samples={
            "training": n_train,
            "selection": cfg.samples,
            "playoff": n_playoff,
            "final": cfg.final_samples,
        },
        final_candidates=n_final_sets,
    )


# ================================================================ helpers
def _ranked(
    tables: dict[int, CandidateTable],
    kept: list[tuple[int, Score, np.ndarray]],
    entries: list[tuple[int, int]],
    cfg: AuditConfig,
    alpha_side: float,
    delta: float,
) -> list[tuple[Candidate, int, int]]:
    """The sets ``entries`` ((kept index, set index)) as candidates, best projection first.

    Each is projected on ``tables`` with the margin for ``len(entries)`` compared;
    sets with no finite projection are dropped.
    """
    out: list[tuple[Candidate, int, int]] = []  # (candidate, kept index, set index)
    for k in sorted({k for k, _ in entries}):
        mine = np.array([j for kk, j in entries if kk == k], dtype=np.int64)
        t = tables[k]
        proj = t.project(cfg.final_samples, alpha_side, delta, len(entries), only=mine)
        i, score, thr = kept[k]
        for j in mine:
            if np.isfinite(proj[j]):
                out.append((t.candidate(i, score, thr, int(j), float(proj[j]), delta), k, int(j)))
    out.sort(key=lambda v: -v[0].projected)
    return out


def _count_kept(
    sampler: Sampler,
    pairs: list[InputPair],
    kept: list[tuple[int, Score, np.ndarray]],
    ks: list[int],
    n: int,
    stage: int,
    label: str,
) -> dict[int, CandidateTable]:
    """Candidate tables of the kept (pair, score) combinations ``ks`` on ``n`` fresh outputs.

    One job per input: its outputs are drawn once and counted under every score in
    ``ks`` that uses it.
    """
    slots: dict[tuple[float, ...], list[tuple[int, int]]] = {}  # input → [(kept, side)]
    for k in ks:
        i = kept[k][0]
        slots.setdefault(pairs[i].x, []).append((k, 0))
        slots.setdefault(pairs[i].x_prime, []).append((k, 1))
    jobs, signs, where = [], [], {}
    for j, (x, uses) in enumerate(slots.items()):
        jobs.append((x, tuple(kept[k][1] for k, _ in uses), tuple(kept[k][2] for k, _ in uses)))
        # Likelihood-ratio scores also return importance-weighted sums (see SideStats).
        signs.append(
            tuple(
                (1 - 2 * side) if isinstance(kept[k][1], LikelihoodRatioScore) else 0
                for k, side in uses
            )
        )
        where.update({use: (j, m) for m, use in enumerate(uses)})
    counts = sampler.counts(jobs, n, stage, label, importance_signs=signs)

    def side(k: int, s: int) -> SideStats:
        j, m = where[(k, s)]
        return SideStats.from_counts(counts[j], m)

    return {k: CandidateTable.of(kept[k][2], side(k, 0), side(k, 1)) for k in ks}


def _playoff(
    sampler: Sampler,
    pairs: list[InputPair],
    kept: list[tuple[int, Score, np.ndarray]],
    candidates: list[tuple[Candidate, int, int]],
    check_tables: dict[int, CandidateTable],
    n: int,
    cfg: AuditConfig,
    alpha_side: float,
    delta: float,
) -> tuple[
    list[tuple[Candidate, int, int]],
    dict[int, CandidateTable],
    int,
    list[tuple[Candidate, int, int]],
]:
    """Decide between near-equal pairs on more data before the final stage spends its samples.

    Returns the re-ranked candidates, the tables to read the ladder from, the
    playoff's sample size per input (0 when it did not run) and the best set of
    every other playoff group too close to call (see below).

    The validation half ranks the leaders with the noise of ``samples/2`` outputs
    per input, which can exceed the true difference between two pairs (DP-Sniper's
    ReportNoisyMax1: ratios 0.0946 and 0.0927 at mass 0.2, noise ≈ 0.0012 each, the
    worse pair won 3 seeds of 5).  The best candidate of each of the
    :data:`PLAYOFF_GROUPS` best (pair, orientation) groups has its score's
    candidates counted on ``n`` more fresh outputs per input.  The groups are ordered
    by their best candidate on the playoff counts alone: the validation counts chose
    these groups, so the leader's are biased upward (winner's curse; ReportNoisyMax1
    seed 2: the worse pair's validation estimate was +3σ and stayed ahead when the
    two samples were pooled).  Within a group, where the candidates share one score
    and their errors move together, the sets are ranked on validation + playoff
    counts, and the winner's ladder is read off the same pooled counts.  Selection
    only: the final samples stay untouched, so this costs no confidence.  With a
    single group there is nothing to decide.

    Two groups whose playoff estimates differ by less than :data:`PLAYOFF_TIE_Z`
    standard errors are a coin flip for the playoff (SVT1 and SVT2 of DP-Sniper's
    suite: two pairs 0.0007 apart in log-ratio, noise ≈ 0.004 at 10.7M outputs);
    such a group's best set goes to the final stage too, where 20× more samples
    tell them apart.  It costs one more set in the final Bonferroni correction and,
    on another pair, that pair's final samples.
    """
    groups: dict[tuple[int, bool], int] = {}
    for c, k, _ in candidates:
        groups.setdefault((c.pair_index, c.numerator_is_x), k)
        if len(groups) == PLAYOFF_GROUPS:
            break
    if len(groups) < 2:
        return candidates, check_tables, 0, []
    ks = sorted(set(groups.values()))
    extra = _count_kept(sampler, pairs, kept, ks, n, STAGE_PLAYOFF, "playoff")
    merged = dict(check_tables)
    merged.update({k: check_tables[k].merged(extra[k]) for k in ks})
    entries = [(k, j) for _, k, j in candidates if k in extra]
    out = _ranked(merged, kept, entries, cfg, alpha_side, delta)
    if not out:
        return candidates, check_tables, n, []

    def group(c: Candidate) -> tuple[int, bool]:
        return (c.pair_index, c.numerator_is_x)

    # Each group's standing: its best projection on the fresh playoff counts only,
    # with that set's log-ratio estimate and standard error there.
    standing: dict[tuple[int, bool], tuple[float, float, float]] = {}
    for c, k, j in _ranked(extra, kept, entries, cfg, alpha_side, delta):
        if group(c) not in standing:
            standing[group(c)] = (c.projected, c.selection_estimate, extra[k].log_ratio_se(j))
    # ``sorted`` is stable: within a group the pooled order stays.
    out.sort(key=lambda v: -standing.get(group(v[0]), (-math.inf,))[0])
    leader = standing.get(group(out[0][0]))
    too_close: list[tuple[Candidate, int, int]] = []
    if leader is not None:
        seen = {group(out[0][0])}
        for c, k, j in out:
            g = group(c)
            if g in seen or g not in groups or g not in standing:
                continue
            seen.add(g)
            _, est, se = standing[g]
            if leader[1] - est <= PLAYOFF_TIE_Z * math.hypot(leader[2], se):
                too_close.append((c, k, j))
    return out, merged, n, too_close
