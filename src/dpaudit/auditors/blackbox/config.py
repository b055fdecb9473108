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
    trade power against time.  The measurements behind each default, and the stages
    removed because they raised no row's median bound beyond its spread over seeds
    (``validate``, a re-ranking on a fresh half of ``samples``, and DP-Sniper's
    fixed-mass sets in ``rank``), are in ``docs/tuning.md``; ``benchmarks/ablation.py``
    measures what switching each optional stage off costs.
    """

    #: Train: least training outputs per input without ``AuditConfig.train_samples`` (≥ 1).
    train_floor: int = 1 << 17
    #: Train: also at least ``samples // train_fraction`` training outputs per input (≥ 1).
    train_fraction: int = 8
    #: Screen: (pair, score) combinations, best first on training, kept for ranking (≥ 1).
    screen_pairs: int = 32
    #: Screen: places for combinations that project no bound on training, at most (≥ 1).
    screen_min: int = 8
    #: Screen: extra pairs kept for a bound under their own combination's margin (≥ 0; 0 off).
    screen_spare: int = 2
    #: Rank: leaders under the margin for every candidate kept for playoff and final (≥ 1).
    rank_top: int = 16
    #: Rank: a second group of ``rank_top · rank_extra`` leaders under their own margin ([0, 1]).
    rank_extra: float = 0.5
    #: Playoff: (pair, orientation) groups recounted on fresh outputs (≥ 0; 0 or 1: none).
    playoff_groups: int = 3
    #: Playoff: outputs per input it counts (≥ 1; ``None``: ``samples``).
    playoff_samples: int | None = None
    #: Playoff: standard errors within which a group also goes to the final stage (-inf: never).
    playoff_tie_z: float = 1.0
    #: Playoff: also certify the leading group's best set under the ranking's margin (bool).
    playoff_hedge: bool = True
    #: Ladder: smaller sets of the winner's kind re-estimated on the final samples (≥ 0; 0 off).
    ladder_rungs: int = 3
    #: Ladder: denominator-mass ratio between rungs (> 1; √10: three rungs span ≈ 30×).
    ladder_step: float = math.sqrt(10.0)
    #: Ladder: what a rung must beat to be certified: ``"face"``, ``"projected"`` or ``"auto"``.
    ladder_bar: str = "auto"
    #: Ladder: final-to-selection sample ratio from which ``"auto"`` is ``"projected"`` (> 0).
    ladder_auto_ratio: float = 10.0
    #: Rare events: add a ``rare`` score where training shows a light atom or tiny region (bool).
    rare_events: bool = True
    #: Rare events, ``rare-scan``: best screened pairs without a rare set drawn again (≥ 0).
    rare_scan_pairs: int = 4
    #: Rare events, ``rare-scan``: output values held in memory at once (≥ 1; 2²³ ≈ 128 MB).
    rare_scan_values: int = 1 << 23
    #: Pair search: propose and train local moves around the best pattern pairs (bool).
    pair_search: bool = True
    #: Pair search: rounds of proposals (0–9); each round's parents are the best pairs so far.
    pair_search_rounds: int = 2
    #: Pair search: best pairs (by their best projected bound on training) moved per round (≥ 1).
    pair_search_parents: int = 2
    #: Pair search: single-entry moves tried per parent and round, drawn at random (≥ 1).
    pair_search_moves: int = 4
    #: Pair search: chance a round keeps a move no better than its parent (Bonferroni, (0, 1)).
    pair_search_false_keep: float = 0.1
    #: Pair search: a fixed ``z`` a move must beat its parent by (``None``: Bonferroni; -inf: all).
    pair_search_accept_z: float | None = None
    #: Input design: screen a space-filling design of inputs before training (bool).
    input_design: bool = True
    #: Representation: add a score on the outputs' float bits where training shows them leak (bool).
    representation: bool = True

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
        return ladder_bar_for(self.ladder_bar, self.ladder_auto_ratio, samples, final_samples)

    def pair_search_z(self, moves: int) -> float:
        """Standard errors by which a move must beat its parent, in a round of ``moves``."""
        return pair_search_z(moves, self.pair_search_false_keep, self.pair_search_accept_z)


def ladder_bar_for(bar: str, auto_ratio: float, samples: int, final_samples: int) -> str:
    """``bar`` with ``"auto"`` resolved by the final-to-selection sample ratio."""
    if bar != "auto":
        return bar
    return "projected" if final_samples >= auto_ratio * samples else "face"


def pair_search_z(moves: int, false_keep: float, accept_z: float | None) -> float:
    """Standard errors by which a move must beat its parent, in a round of ``moves``."""
    if accept_z is not None:
        return accept_z
    return NormalDist().inv_cdf(1.0 - false_keep / max(moves, 1))


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
    sizes, tuning constants and stage switches (dpaudit mode only).  ``sequential`` draws the
    final samples in doubling looks (:mod:`dpaudit.auditors.core.sequential`) and stops at
    the first look that refutes the claim, or for futility once no set could refute it at
    the last look (dpaudit mode only).
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
    #: Count the final sets in doubling looks and stop at the first that refutes the claim.
    sequential: bool = False

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
        if not isinstance(self.sequential, bool):
            raise InvalidArgumentError("sequential", self.sequential, "True or False")
        if not self.pairs and not self.use_patterns:
            raise InvalidArgumentError("pairs", "none", "given pairs when patterns are off")
