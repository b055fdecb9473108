"""Configuration of the black-box audit (:func:`~dpaudit.auditors.blackbox.auditor.audit`).

Shared by both modes (:mod:`~dpaudit.auditors.blackbox.auditor`,
:mod:`~dpaudit.auditors.blackbox.dpsniper`) and the result builder; imports nothing
above ``auditors/``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist

from dpaudit.auditors.blackbox.names import CLASSIFIERS, MODES
from dpaudit.auditors.blackbox.pairs import InputPair
from dpaudit.engine.timeout import check_timeout
from dpaudit.errors import InvalidArgumentError
from dpaudit.validation import check_int, check_probability_open, check_seed

#: DP-Sniper's defaults (Bichsel et al. 2021, §6.1): c, n = n_train = n_check, n_final, confidence.
DPSNIPER_TARGET_MASS = 0.01
DPSNIPER_SAMPLES = 10_700_000
DPSNIPER_FINAL_SAMPLES = 200_000_000
DPSNIPER_CONFIDENCE = 0.9
#: What a ladder rung must beat (``SearchConfig.ladder_bar``).
LADDER_BARS = ("auto", "face", "projected")


@dataclass(frozen=True)
class SearchConfig:
    """Every size and tuning constant of the dpaudit-mode search, and its stage switches.

    The search (:mod:`dpaudit.auditors.blackbox.stages`) chooses sets on samples the final
    certification never sees, so no value here can make a reported bound invalid: they
    trade power against time.  The defaults are the values each stage was tuned to on the
    benchmark cases named below; ``benchmarks/ablation.py`` measures what switching each
    optional stage off costs (``benchmarks/README.md``, "Search ablation"), and a stage
    that raised no row's median bound beyond its spread over seeds was removed
    (``validate``, a re-ranking on a fresh half of ``samples``, and DP-Sniper's
    fixed-mass sets in ``rank``).
    """

    #: Training outputs per input when ``AuditConfig.train_samples`` is not given: at least
    #: this many (2^17), see :func:`default_train_samples`.  With 20 coordinates of
    #: Lap(200) it leaves the logistic direction at cosine ≈ 0.79 to the true one.
    train_floor: int = 1 << 17
    #: ... and at least ``samples // train_fraction`` (8: DP-Sniper's 10.7M gives 1.3M,
    #: cosine ≈ 0.95 in the same case), at a small fraction of the later stages' cost.
    train_fraction: int = 8
    #: Screen: the (pair, score) combinations, best first by their training-sample
    #: projection, that go on to ranking (32).  The training sample is too small to
    #: judge them, and each input is sampled once for all kept scores that use it, so a
    #: wide screen costs scoring, not sampling.
    screen_pairs: int = 32
    #: Screen: combinations whose best set projects no bound on training go on only to
    #: fill the screen up to this many (8): each widens the ranking's margin, which
    #: costs small sets most (SVT4 at 1/100 of DP-Sniper's sizes: 13 of 32 places
    #: went to such pairs and a large set of 0.097 beat the X pattern's ≈ 0.13).
    screen_min: int = 8
    #: Screen: and the best combination of each of this many more pairs whose best set
    #: projects a bound under its own combination's margin only (2): the margin for
    #: every training candidate hides small sets.  Measured
    #: (``benchmarks/results/pairs25_table.md``, Session 4): SVT2 at 1/10 of
    #: DP-Sniper's sizes 0.0387 → 0.0775 (median of 3 seeds); at 1/100 five of 54
    #: seed-runs of the suite rose (SVT4 seed 2 0.0948 → 0.1235), none fell.  0: off.
    screen_spare: int = 2
    #: Rank: the leaders (under the margin for every candidate ranked, on ``samples``
    #: fresh outputs per input) kept for the playoff and the final stage (16; at least
    #: ``best_candidates``).  Enough for every DP-Sniper-suite winner to be among them
    #: at 1M samples.
    rank_top: int = 16
    #: Rank: a second group of leaders, ``rank_top · this`` many (½), the best under the
    #: margin for the ``rank_top`` leaders alone, so that an effect the full margin hides
    #: at small sizes keeps a chance.  Measured (``benchmarks/README.md``, "Search
    #: ablation"): switched off, DP-Sniper's ReportNoisyMax4 at 1/100 of its sizes fell
    #: on every seed, median 0.889 → 0.751 (spread over 3 seeds 0.065); in this search
    #: (no validation, no fixed-mass sets) 0.8725 → 0.7832 over 9 seeds, lower on 7.
    #: 0: off.
    rank_extra: float = 0.5
    #: Playoff: how many distinct (pair, orientation) groups, best first after
    #: ranking, have their scores counted on more fresh outputs (3; ReportNoisyMax1's
    #: two best pairs differ by less than the ranking noise).  0 or 1: no playoff.
    #: Measured: switched off, the truncated geometric at 1/20 of DP-Sniper's sizes fell
    #: 0.1168 → 0.1162 (spread over 3 seeds 0.0004); SVT1 at 1/20 0.0771 → 0.0605, within
    #: its spread 0.0218; at 1/100 ReportNoisyMax1, ReportNoisyMax4 and the truncated
    #: geometric lost nothing.
    playoff_groups: int = 3
    #: Playoff: outputs per input it counts (``None``: ``samples``).
    playoff_samples: int | None = None
    #: Playoff: a group whose log-ratio estimate on the playoff counts is within this many
    #: standard errors of the leader's is too close to call, and its best set goes to the
    #: final stage too (1.0; SVT1/SVT2: two pairs 0.0007 apart, noise ≈ 0.004).
    #: Measured over 13 rows (``benchmarks/README.md``, "Search ablation"): switched off,
    #: no median fell beyond the seed spread, but the worst seed did where the playoff
    #: called the wrong group (prefix_sum at 1/100 of DP-Sniper's sizes 0.5075 → 0.4745,
    #: spread 0.0279; ReportNoisyMax2 0.0943 → 0.0719), against gains of ≤ 0.0027 from
    #: certifying fewer sets.  ``-inf``: never.
    playoff_tie_z: float = 1.0
    #: Playoff: also certify the leading group's best set under the ranking's own margin
    #: (for every candidate ranked) when it is not the leader.  The group's sets are
    #: ordered on ranking + playoff counts with the margin for the few sets re-ranked, and
    #: the ranking half of those counts chose them among thousands, so a tiny set with a
    #: few lucky hits can lead (one_time_rappor at 1/100 of DP-Sniper's sizes, seed 0:
    #: a 0.006 % set certified 0.30 where its group's 2 % set certifies 0.57).  Costs
    #: one more set in the Bonferroni ``K`` when the two orders disagree, and changes no
    #: other set's final counts.  Measured (``benchmarks/results/pairs25_table.md``,
    #: Session 8): that seed 0.2997 → 0.5672; on the seven other box seed-runs of the
    #: suite at 1/100 where the orders disagreed, −0.0036 to 0 (prefix_sum seed 1
    #: 0.5545 → 0.5509); the own-mechanism tutorial's ADePT example over 12 seeds, mean
    #: 2.250 → 2.244.  With a single group no playoff runs, and the hedge is chosen on
    #: the ranking counts alone (Session 9: LaplaceParallel given DP-Sniper's pair, full
    #: sizes, seed 1, 0 → 0.0537; at 1/100 ReportNoisyMax3 ``--pair`` seed 0 0.169 →
    #: 0.229, ReportNoisyMax4 −0.010 to −0.017 where the small leader was right).
    #: False: off.
    playoff_hedge: bool = True
    #: Ladder: at most this many smaller sets of the winner's kind, at denominator masses
    #: ``m/ladder_step^j``, re-estimated beside it on the final samples (3; 20 coordinates
    #: of Laplace, where the ratio keeps growing into the tail).  Measured: switched off,
    #: ReportNoisyMax4 at 1/100 of DP-Sniper's sizes fell on every seed, median
    #: 0.912 → 0.482 (spread over 3 seeds 0.185).  0: no ladder.
    ladder_rungs: int = 3
    #: Ladder: the mass ratio between rungs (√10: three rungs span a factor ≈ 30).
    ladder_step: float = math.sqrt(10.0)
    #: Ladder: what a rung must project above, at face value on the counts it was picked
    #: from, to be re-estimated: ``"face"`` (the winner's face value on the same counts),
    #: ``"projected"`` (the winner's projection under the ranking's margin, a lower bar: the
    #: winner's face value is inflated by having won) or ``"auto"``: ``"projected"`` when
    #: ``final_samples ≥ ladder_auto_ratio · samples``, else ``"face"``
    #: (:meth:`effective_ladder_bar`).  The final Bonferroni covers whichever rungs are
    #: kept, so all are valid; the lower bar costs up to ``ladder_rungs`` more sets in ``K``
    #: and pays only where the final sample resolves sets the ranking's could not.  Seen
    #: (Session 13, ``benchmarks/results/pairs25m_trace_svt34_seed0.txt``): SVT34Parallel on
    #: the unit box at DP-Sniper's sizes, seed 0, dropped a rung at face value 0.3755
    #: against the winner's 0.3757, the size ``--pair`` certified at 0.392; the winner
    #: certified 0.362.  Measured with ``"projected"`` at DP-Sniper's sizes (final 18.7×
    #: selection; ``benchmarks/results/pairs25_table.md``, Sessions 14–19, both modes, 3
    #: seeds): SVT34Parallel's box median 0.362 → 0.385 (a tie with
    #: ``--pair``), PrefixSum ``--pair`` 0.622 → 0.633, every other row still reached or tied.
    #: At small sizes (``benchmarks/results/ladder_bar_small.txt``, 20 seeds; one run gives
    #: both bars' bounds on the same counts), 20 000 selection outputs: final 2–5×, never
    #: higher, mean −0.0006 to −0.012 (ADePT, Gaussian, Laplace); 10×, +0.003 and +0.001;
    #: 20×, +0.010 and +0.011 (ADePT, Gaussian); ADePT at 100 000 and 5×, +0.0008 (8 of 10
    #: seeds equal: at larger sizes the two bars differ less).  An uneven split favouring
    #: the winner does not pay (Sessions 16–19, ``benchmarks/split_weights.py``): the
    #: witness is a rung, hedge or runner-up in 41 of the 58 runs recorded with ``K ≥ 2``.
    ladder_bar: str = "auto"
    #: Ladder: the final-to-selection sample ratio from which ``"auto"`` takes the
    #: lower bar (10: where the gain and the cost measured above balance).
    ladder_auto_ratio: float = 10.0
    #: Rare events: after training, look for clusters of ≥ 5 training outputs of one
    #: input in a region ≪ the local spacing (a light atom — an exact value repeated —
    #: or a tiny region) that the other input barely hits, and add them as one extra
    #: ``rare`` score per pair (:mod:`dpaudit.auditors.blackbox.rare`).  It adds a score
    #: only where it finds a cluster; the ranking weighs it like any other.
    rare_events: bool = True
    #: Rare events, second look (stage ``rare-scan``): the ``rare_scan_pairs`` best
    #: screened pairs without a rare set from training are drawn again, ``min(samples,
    #: rare_scan_values / (2·pairs·output size))`` outputs per input, and searched for
    #: the same clusters.  Training's 131 072 outputs show a leak of probability q only
    #: when q ≳ 4·10⁻⁵ (≥ 5 hits); 10⁶ outputs show q ≳ 10⁻⁵.  The values are held in
    #: memory at once (float64 rows plus their counts): 2²³ values ≈ 128 MB.
    rare_scan_pairs: int = 4
    rare_scan_values: int = 1 << 23
    #: Pair search (:mod:`dpaudit.auditors.blackbox.pair_search`): after training the
    #: pattern pairs, propose local moves around the best of them for a few rounds
    #: and train those too; all go on to the screen.  Only where the audit generates
    #: the pairs (patterns on) on a box whose points are all neighbours.  Selection
    #: only: the moves are judged on training outputs of their own, and their sets
    #: count in the ranking's multiplicity margin like any other.
    pair_search: bool = True
    #: Pair search: rounds of proposals (2); each round's parents are the best pairs
    #: of all tried so far, so a good move can be moved again.
    pair_search_rounds: int = 2
    #: Pair search: how many of the best pairs (by the best bound any of their sets
    #: projects on training outputs, the screen's measure) get moves each round (2).
    pair_search_parents: int = 2
    #: Pair search: single-entry moves tried per parent and round (4), drawn at random
    #: (seeded by the audit's seed) from all moves not tried yet.  Each new pair costs
    #: a training sample of both inputs and the training of every attack family.
    pair_search_moves: int = 4
    #: Pair search: a move goes on to the screen (and may be moved again) only when the
    #: log-ratio estimate of its best set on training outputs beats its parent's by more
    #: than ``z`` standard errors, ``z = Φ⁻¹(1 − pair_search_false_keep / m)`` for the
    #: round's ``m`` moves: a Bonferroni bound, so that a round keeps a move no better
    #: than its parent with probability ≤ 0.1 (z ≈ 2.24 for 8 moves).  Each near-copy
    #: kept is one more chance for a lucky count in the ranking (the winner's curse): at
    #: 1/100 of DP-Sniper's sizes a fixed z = 1 kept about two lucky moves per round on
    #: SparseVectorTechnique4, which then won the ranking and certified 0.097 where the
    #: patterns' own winner certifies ≈ 0.13.
    pair_search_false_keep: float = 0.1
    #: Pair search: a fixed ``z`` instead of the Bonferroni one (``None``: Bonferroni;
    #: ``-inf``: keep every move).
    pair_search_accept_z: float | None = None

    def __post_init__(self) -> None:
        check_int("train_floor", self.train_floor, minimum=1)
        check_int("train_fraction", self.train_fraction, minimum=1)
        check_int("screen_pairs", self.screen_pairs, minimum=1)
        check_int("screen_min", self.screen_min, minimum=1)
        check_int("screen_spare", self.screen_spare, minimum=0)
        check_int("rank_top", self.rank_top, minimum=1)
        if not (0.0 <= self.rank_extra <= 1.0):
            raise InvalidArgumentError("rank_extra", self.rank_extra, "a number in [0, 1]")
        check_int("playoff_groups", self.playoff_groups, minimum=0)
        if self.playoff_samples is not None:
            check_int("playoff_samples", self.playoff_samples, minimum=1)
        if math.isnan(self.playoff_tie_z) or self.playoff_tie_z == math.inf:
            raise InvalidArgumentError("playoff_tie_z", self.playoff_tie_z, "a number or -inf")
        check_int("ladder_rungs", self.ladder_rungs, minimum=0)
        check_int("rare_scan_pairs", self.rare_scan_pairs, minimum=0)
        check_int("rare_scan_values", self.rare_scan_values, minimum=1)
        if not (math.isfinite(self.ladder_step) and self.ladder_step > 1.0):
            raise InvalidArgumentError("ladder_step", self.ladder_step, "a number > 1")
        if self.ladder_bar not in LADDER_BARS:
            raise InvalidArgumentError(
                "ladder_bar", self.ladder_bar, ", ".join(f"'{b}'" for b in LADDER_BARS)
            )
        if not (math.isfinite(self.ladder_auto_ratio) and self.ladder_auto_ratio > 0):
            raise InvalidArgumentError("ladder_auto_ratio", self.ladder_auto_ratio, "a number > 0")
        check_int("pair_search_rounds", self.pair_search_rounds, minimum=0, maximum=9)
        check_int("pair_search_parents", self.pair_search_parents, minimum=1)
        check_int("pair_search_moves", self.pair_search_moves, minimum=1)
        check_probability_open("pair_search_false_keep", self.pair_search_false_keep)
        z = self.pair_search_accept_z
        if z is not None and (math.isnan(z) or z == math.inf):
            raise InvalidArgumentError("pair_search_accept_z", z, "None, a number or -inf")

    def effective_ladder_bar(self, samples: int, final_samples: int) -> str:
        """The ladder bar an audit of these sizes uses: ``"face"`` or ``"projected"``.

        ``"auto"`` resolves by the ratio of ``final_samples`` to ``samples`` (per
        input; see ``ladder_bar``); the other two are returned as they are.
        """
        if self.ladder_bar != "auto":
            return self.ladder_bar
        return "projected" if final_samples >= self.ladder_auto_ratio * samples else "face"

    def pair_search_z(self, moves: int) -> float:
        """Standard errors by which a move must beat its parent, in a round of ``moves``."""
        if self.pair_search_accept_z is not None:
            return self.pair_search_accept_z
        return NormalDist().inv_cdf(1.0 - self.pair_search_false_keep / max(moves, 1))


#: The defaults of :class:`SearchConfig`.
DEFAULT_SEARCH = SearchConfig()
#: Default training floor (kept for callers of the constant; see :class:`SearchConfig`).
DEFAULT_TRAIN_SAMPLES = DEFAULT_SEARCH.train_floor


def default_train_samples(samples: int, search: SearchConfig = DEFAULT_SEARCH) -> int:
    """Training outputs per input in dpaudit mode when ``train_samples`` is not given.

    ``min(samples, max(train_floor, samples // train_fraction))``.  A
    classifier's weights are estimated from these outputs: with d coordinates
    of noise scale σ and a per-coordinate shift μ, each weight's error is about
    ``σ·sqrt(2/n)/μ`` of its size — for 20 coordinates of Lap(200) (σ ≈ 283,
    μ = 1) n = 131,072 leaves the logistic direction at cosine ≈ 0.79 to the
    true one, n = 1.3M (DP-Sniper's sizes / 8) at ≈ 0.95.  Sampling them costs
    a small fraction of the selection and final samples.
    """
    return min(samples, max(search.train_floor, samples // search.train_fraction))


# Stage codes at the head of every work-unit key: the streams never overlap.
#: (4 was a validation stage's, removed; the codes of the others stay, and so do their samples.)
STAGE_TRAIN, STAGE_SELECT, STAGE_FINAL, STAGE_PLAYOFF = 1, 2, 3, 5
STAGE_RARE_SCAN = 6
STAGE_SNIPER_TRAIN, STAGE_SNIPER_CHECK, STAGE_SNIPER_FINAL = 11, 12, 13
#: The pair search's training outputs of round r use stage code STAGE_PAIR_SEARCH + r (r ≤ 9).
STAGE_PAIR_SEARCH = 20


@dataclass(frozen=True)
class AuditConfig:
    """Knobs of :func:`audit`; defaults are for a quick audit (DP-Sniper's are constants above).

    ``samples`` is the number of outputs per input for each selection estimate,
    ``final_samples`` per input for the final estimate, ``train_samples`` per
    input for classifier training and the threshold grid (dpaudit default
    :func:`default_train_samples`; dpsniper default ``samples`` as in DP-Sniper).

    ``best_candidates`` is the *request*: how many of the best-ranked sets the
    final stage certifies (besides runners-up too close to call, the playoff's
    hedge and the winner's ladder).  The number actually certified, ``K`` of the Bonferroni
    split, is the result's ``detail.certified_proposals``.  ``search`` holds the search's
    sizes, tuning constants and stage switches (dpaudit mode only).
    """

    samples: int = 1_000_000
    final_samples: int = 10_000_000
    train_samples: int | None = None
    confidence: float = 0.95
    mode: str = "dpaudit"
    classifier: str = "auto"
    target_mass: float = DPSNIPER_TARGET_MASS
    best_candidates: int = 1
    pairs: tuple[InputPair, ...] = ()
    use_patterns: bool = True
    seed: int = 0
    unit_timeout: float | None = None
    search: SearchConfig = field(default_factory=SearchConfig)

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
        check_int("best_candidates", self.best_candidates, minimum=1, maximum=1000)
        if not isinstance(self.search, SearchConfig):
            raise InvalidArgumentError("search", self.search, "a SearchConfig")
        check_seed(self.seed)
        check_timeout(self.unit_timeout, "unit_timeout")
        if not self.pairs and not self.use_patterns:
            raise InvalidArgumentError("pairs", "none", "given pairs when patterns are off")
