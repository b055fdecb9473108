"""TEMPORARY alias of :mod:`dpaudit.analysis.word_metrics` (moved); removed before the merge."""

from dpaudit.analysis.word_metrics import *  # noqa: F403
from dpaudit.analysis.word_metrics import (  # noqa: F401
    CallableMetric,
    EuclideanMetric,
    MahalanobisMetric,
    PartitionMetric,
    WordMetric,
    plain_dp_metric,
    regularised_covariance_root,
)
