"""Training algorithms audited as mechanisms: the contract, the built-in DP-SGD, Opacus.

See :mod:`dpaudit.mechanisms.training.contract`.
"""

from dpaudit.mechanisms.training.contract import (
    ACCESS,
    CallableTraining,
    GradientCanary,
    TextRecord,
    TrainingMechanism,
    checked_scores,
)

__all__ = [
    "ACCESS",
    "CallableTraining",
    "GradientCanary",
    "TextRecord",
    "TrainingMechanism",
    "checked_scores",
]
