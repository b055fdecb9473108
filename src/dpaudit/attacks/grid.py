"""The privacy–utility grid: every scheme's claim, exact ε, attack success and utility in one table.

HoHo's grid (Salem & Zanella-Béguelin 2021, §3.1, Fig. 1): OME at
ε ∈ {0.001, 1} × λ ∈ {1, 10, 100}, plus SUE and OUE at both ε.  For every
configuration one row holds

* the claimed ε and the exact worst-case ε of the mechanism over its input
  domain (:meth:`Mechanism.truth`: :mod:`dpaudit.analysis.ome` for OME, the
  unary-encoding closed form for SUE/OUE);
* linking AUC (mean ± std over targets) of HoHo and of the optimal attack, and
  whether the optimal attack is *not worse* than HoHo: its mean AUC is at least
  HoHo's minus 3 standard errors of the paired difference
  (:attr:`AttackMetrics.optimal_minus_hoho_auc_se`; both attacks score the same
  encodings, and near chance the two differ only by noise);
* reconstruction accuracy of HoHo, of the per-bit MAP, and of the prior alone,
  on HoHo's positions;
* test accuracy of the sentiment classifier on privatised encodings beside the
  accuracy on clean encodings (:mod:`dpaudit.attacks.utility`).

The attack sample (800 sentences) and the utility split (800/200) are drawn
once and shared by every row; each row's randomness depends on the seed and its
own configuration only.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dpaudit.attacks.experiment import (
    DEFAULT_COPIES,
    DEFAULT_SENTENCES,
    DEFAULT_TARGET_FRACTION,
    AttackMetrics,
    TextAttackResult,
    attack_text,
    prepare_attack_data,
)
from dpaudit.attacks.schemes import SCHEME_NAMES
from dpaudit.attacks.utility import prepare_utility_data, utility_experiment
from dpaudit.errors import InvalidArgumentError
from dpaudit.progress import progress
from dpaudit.text.corpus import Corpus
from dpaudit.validation import check_epsilon, check_positive

#: HoHo's grid.
DEFAULT_EPSILONS = (0.001, 1.0)
DEFAULT_LAMBDAS = (1.0, 10.0, 100.0)

#: Paired standard errors allowed before "optimal worse than HoHo" is reported.
NOT_WORSE_TOLERANCE_SE = 3.0


@dataclass(frozen=True)
class GridConfig:
    """One configuration: a scheme, its claimed ε and (OME only) λ."""

    scheme: str
    epsilon: float
    lam: float | None = None

    def __post_init__(self) -> None:
        if self.scheme not in SCHEME_NAMES:
            raise InvalidArgumentError("scheme", self.scheme, f"one of {', '.join(SCHEME_NAMES)}")
        check_epsilon(self.epsilon)
        if (self.scheme == "ome") != (self.lam is not None):
            raise InvalidArgumentError("lambda", self.lam, "a value for OME and none otherwise")
        if self.lam is not None:
            check_positive("lambda", self.lam)

    @property
    def params(self) -> dict[str, Any]:
        """Mechanism parameters named as on the CLI."""
        return {} if self.lam is None else {"lambda": self.lam}


def default_grid(
    epsilons: Iterable[float] = DEFAULT_EPSILONS,
    lambdas: Iterable[float] = DEFAULT_LAMBDAS,
    schemes: Sequence[str] = SCHEME_NAMES,
) -> list[GridConfig]:
    """OME at every (ε, λ), then each unary scheme at every ε."""
    eps = list(epsilons)
    lams = list(lambdas)
    configs: list[GridConfig] = []
    for scheme in schemes:
        if scheme == "ome":
            configs += [GridConfig("ome", e, lam) for e in eps for lam in lams]
        else:
            configs += [GridConfig(scheme, e) for e in eps]
    if not configs:
        raise InvalidArgumentError("schemes", list(schemes), "at least one scheme")
    return configs


@dataclass(frozen=True)
class GridRow:
    """One line of the privacy–utility table."""

    scheme: str
    epsilon: float
    lam: float | None
    claimed_epsilon: float
    true_epsilon: float | None
    linking_auc_hoho: float
    linking_auc_hoho_std: float
    linking_auc_optimal: float
    linking_auc_optimal_std: float
    optimal_not_worse: bool
    reconstruction_hoho: float
    reconstruction_optimal: float
    reconstruction_prior_only: float
    utility_accuracy: float | None
    clean_accuracy: float | None
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class GridResult:
    """The whole table with the settings that produced it."""

    rows: tuple[GridRow, ...]
    corpus: str
    embedder: str
    seed: int
    n_sentences: int
    n_targets: int
    copies: int
    n_oov_only_attack: int
    n_oov_only_utility: int | None
    classifier: str | None
    seconds: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (rows as a list of objects)."""
        out = {k: v for k, v in self.__dict__.items() if k != "rows"}
        out["rows"] = [dict(row.__dict__) for row in self.rows]
        return out


def optimal_not_worse(metrics: AttackMetrics, tolerance_se: float = NOT_WORSE_TOLERANCE_SE) -> bool:
    """Optimal mean AUC ≥ HoHo's − ``tolerance_se`` standard errors of their paired difference."""
    diff = metrics.optimal_linking_auc_mean - metrics.linking_auc_mean
    return bool(diff >= -tolerance_se * metrics.optimal_minus_hoho_auc_se - 1e-12)


def _grid_row(
    config: GridConfig, attack: TextAttackResult, accuracy: float | None, clean: float | None
) -> GridRow:
    """One row of the grid from a configuration's attack result and utility accuracies."""
    m = attack.metrics
    return GridRow(
        scheme=config.scheme,
        epsilon=config.epsilon,
        lam=config.lam,
        claimed_epsilon=attack.epsilon,
        true_epsilon=attack.true_epsilon,
        linking_auc_hoho=m.linking_auc_mean,
        linking_auc_hoho_std=m.linking_auc_std,
        linking_auc_optimal=m.optimal_linking_auc_mean,
        linking_auc_optimal_std=m.optimal_linking_auc_std,
        optimal_not_worse=optimal_not_worse(m),
        reconstruction_hoho=m.reconstruction_accuracy,
        reconstruction_optimal=m.optimal_reconstruction_accuracy,
        reconstruction_prior_only=m.prior_only_reconstruction_accuracy,
        utility_accuracy=accuracy,
        clean_accuracy=clean,
        params=attack.params,
    )


def run_grid(
    corpus: Corpus,
    configs: Sequence[GridConfig] | None = None,
    seed: int = 0,
    n_sentences: int = DEFAULT_SENTENCES,
    target_fraction: float = DEFAULT_TARGET_FRACTION,
    copies: int = DEFAULT_COPIES,
    embedder: str = "glove",
    utility: bool = True,
    classifier: str = "mlp",
) -> GridResult:
    """Run the attacks (and, for a labelled corpus with ``utility``, the classifier) per row."""
    configs = list(configs) if configs is not None else default_grid()
    seconds: dict[str, float] = {}
    start = time.perf_counter()
    attack_data = prepare_attack_data(corpus, n_sentences, target_fraction, seed, embedder)
    seconds["attack_embedding"] = time.perf_counter() - start
    utility_data = None
    if utility:
        start = time.perf_counter()
        utility_data = prepare_utility_data(corpus, embedder)
        seconds["utility_embedding"] = time.perf_counter() - start
    seconds["attacks"] = 0.0
    seconds["utility"] = 0.0
    clean_cache: dict[str, float] = {}
    rows = []
    with progress(len(configs), "privacy-utility grid", unit="config") as bar:
        for config in configs:
            start = time.perf_counter()
            attack = attack_text(
                attack_data, config.scheme, config.epsilon, config.params, seed, copies
            )
            seconds["attacks"] += time.perf_counter() - start
            accuracy = clean = None
            if utility_data is not None:
                start = time.perf_counter()
                family = "ome" if config.scheme == "ome" else "unary"
                result = utility_experiment(
                    utility_data,
                    config.scheme,
                    config.epsilon,
                    config.params,
                    seed,
                    classifier,
                    clean_accuracy=clean_cache.get(family),
                )
                clean_cache[family] = result.clean_accuracy
                accuracy, clean = result.accuracy, result.clean_accuracy
                seconds["utility"] += time.perf_counter() - start
            rows.append(_grid_row(config, attack, accuracy, clean))
            bar.update(1)
    return GridResult(
        rows=tuple(rows),
        corpus=corpus.source,
        embedder=embedder,
        seed=seed,
        n_sentences=len(attack_data.indices),
        n_targets=len(attack_data.targets),
        copies=copies,
        n_oov_only_attack=attack_data.n_oov_only,
        n_oov_only_utility=None if utility_data is None else utility_data.n_oov_only,
        classifier=classifier if utility_data is not None else None,
        seconds=seconds,
    )


#: Columns of :func:`render_table`: header and how to format a row's value.
_COLUMNS: tuple[tuple[str, str], ...] = (
    ("scheme", "scheme"),
    ("ε", "epsilon"),
    ("λ", "lam"),
    ("claimed ε", "claimed_epsilon"),
    ("exact ε", "true_epsilon"),
    ("link AUC HoHo", "linking_auc_hoho"),
    ("link AUC opt", "linking_auc_optimal"),
    ("opt≥HoHo", "optimal_not_worse"),
    ("rec HoHo", "reconstruction_hoho"),
    ("rec opt", "reconstruction_optimal"),
    ("rec prior", "reconstruction_prior_only"),
    ("util acc", "utility_accuracy"),
    ("clean acc", "clean_accuracy"),
)


def _cell(key: str, value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "NO"
    if isinstance(value, str):
        return value
    if key in ("epsilon", "lam", "claimed_epsilon", "true_epsilon"):
        return f"{value:.4g}"
    return f"{value:.3f}"


def render_table(result: GridResult) -> str:
    """The grid as a Markdown table (plain text; no corpus text appears in it)."""
    lines = [
        "| " + " | ".join(h for h, _ in _COLUMNS) + " |",
        "|" + "|".join("---" for _ in _COLUMNS) + "|",
    ]
    for row in result.rows:
        cells = [_cell(key, getattr(row, key)) for _, key in _COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(
        f"corpus {result.corpus}; embedder {result.embedder}; {result.n_sentences} sentences, "
        f"{result.n_targets} targets × {result.copies} copies; seed {result.seed}; "
        f"sentences without any known word: {result.n_oov_only_attack} (attack sample)"
        + (
            ""
            if result.n_oov_only_utility is None
            else f", {result.n_oov_only_utility} (utility split)"
        )
    )
    lines.append(
        "link AUC: mean over targets; rec: bit accuracy on HoHo's positions (OME: even bits, "
        "SUE/OUE: all); opt≥HoHo: optimal mean AUC ≥ HoHo's − 3 paired SE"
    )
    return "\n".join(lines)
