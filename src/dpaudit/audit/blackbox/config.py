"""Configuration of the black-box audit (:func:`~dpaudit.audit.blackbox.auditor.audit`).

Shared by both modes (:mod:`dpaudit.audit.blackbox.auditor`, :mod:`dpaudit.audit.blackbox.dpsniper`)
and the result builder; imports nothing above ``audit/``.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpaudit.audit.blackbox.pairs import InputPair
from dpaudit.engine.timeout import check_timeout
from dpaudit.errors import InvalidArgumentError
from dpaudit.validation import check_int, check_probability_open, check_seed

MODES = ("dpaudit", "dpsniper")
CLASSIFIERS = ("auto", "likelihood-ratio", "logistic", "mlp", "split", "histogram")

#: DP-Sniper's defaults (Bichsel et al. 2021, §6.1): c, n = n_train = n_check, n_final, confidence.
DPSNIPER_TARGET_MASS = 0.01
DPSNIPER_SAMPLES = 10_700_000
DPSNIPER_FINAL_SAMPLES = 200_000_000
DPSNIPER_CONFIDENCE = 0.9

#: Default training sample per input in dpaudit mode (classifiers and threshold grid),
#: raised to ``samples // TRAIN_FRACTION`` for large selection samples (see
#: :func:`default_train_samples`).
DEFAULT_TRAIN_SAMPLES = 1 << 17
TRAIN_FRACTION = 8


def default_train_samples(samples: int) -> int:
    """Training outputs per input in dpaudit mode when ``train_samples`` is not given.

    ``min(samples, max(DEFAULT_TRAIN_SAMPLES, samples // TRAIN_FRACTION))``.  A
    classifier's weights are estimated from these outputs: with d coordinates
    of noise scale σ and a per-coordinate shift μ, each weight's error is about
    ``σ·sqrt(2/n)/μ`` of its size — for 20 coordinates of Lap(200) (σ ≈ 283,
    μ = 1) n = 131,072 leaves the logistic direction at cosine ≈ 0.79 to the
    true one, n = 1.3M (DP-Sniper's sizes / 8) at ≈ 0.95.  Sampling them costs
    a small fraction of the selection and final samples.
    """
    return min(samples, max(DEFAULT_TRAIN_SAMPLES, samples // TRAIN_FRACTION))


# Stage codes at the head of every work-unit key: the streams never overlap.
STAGE_TRAIN, STAGE_SELECT, STAGE_FINAL, STAGE_VALIDATE, STAGE_PLAYOFF = 1, 2, 3, 4, 5
STAGE_SNIPER_TRAIN, STAGE_SNIPER_CHECK, STAGE_SNIPER_FINAL = 11, 12, 13


@dataclass(frozen=True)
class AuditConfig:
    """Knobs of :func:`audit`; defaults are for a quick audit (DP-Sniper's are constants above).

    ``samples`` is the number of outputs per input for each selection estimate,
    ``final_samples`` per input for the final estimate, ``train_samples`` per
    input for classifier training and the threshold grid (dpaudit default
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
    screen_pairs: int = 32
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
