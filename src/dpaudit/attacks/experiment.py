"""HoHo's linking and reconstruction experiment (Salem & Zanella-Béguelin 2021, §3.1), both attacks.

Protocol (HoHo §3.1, "Linking" and "Reconstruction"):

1. sample ``n_sentences`` (800) sentences; 10 % of them are targets;
2. fit the embedder's vocabulary on the sampled sentences, embed and encode
   them (clean bits ``c``);
3. privatise one encoding of every sentence (the "dataset" list);
4. per target ``t``: privatise ``copies`` (100) fresh encodings of ``t`` and pool
   them with the dataset list; label 1 every encoding of ``t`` — its copies and
   dataset entries whose clean encoding equals ``c_t`` (the target itself, and
   any sentence the embedding cannot tell apart from it, e.g. another sentence
   with the same words) — and 0 the rest; score every pooled encoding with
   HoHo's matching score (:mod:`dpaudit.attacks.hoho`) and with the exact
   likelihood ratio (:mod:`dpaudit.attacks.optimal`); one AUC per target and
   attack, then mean and (population) standard deviation over targets;
5. reconstruction accuracy over every privatised encoding of the experiment
   (dataset list and all copies): HoHo copies the bits at its positions; the
   optimal attack takes the per-bit MAP; both are scored on HoHo's positions
   (and the MAP on all bits too), beside the prior-only baseline.

Both attacks see the *same* privatised encodings, so their numbers are paired.
Copies are generated and scored a few targets at a time, so memory stays flat.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.attacks import hoho, optimal
from dpaudit.attacks.auc import placement_values
from dpaudit.attacks.schemes import BitScheme, build_scheme
from dpaudit.errors import InvalidArgumentError
from dpaudit.random import stable_hash, unit_rng
from dpaudit.text.corpus import Corpus
from dpaudit.text.embedders import fit_embedder
from dpaudit.validation import check_int, check_probability_open, check_seed

#: HoHo §3.1: 800 sentences, 10 % targets, 100 copies per target.
DEFAULT_SENTENCES = 800
DEFAULT_TARGET_FRACTION = 0.1
DEFAULT_COPIES = 100

#: Targets whose copies are privatised and scored together.
_TARGET_CHUNK = 16


@dataclass(frozen=True)
class AttackMetrics:
    """Linking AUCs and reconstruction accuracies of HoHo and of the optimal attack.

    ``optimal_minus_hoho_auc_se`` is the standard error of
    ``optimal_linking_auc_mean − linking_auc_mean`` (DeLong placement values,
    paired: both attacks score the same encodings; the targets' copies are
    independent, the dataset list is shared by every target, and both sources
    of variance are counted).
    """

    n_sentences: int
    n_targets: int
    copies: int
    n_bits: int
    n_hoho_positions: int
    n_distinct_encodings: int
    linking_auc_mean: float
    linking_auc_std: float
    optimal_linking_auc_mean: float
    optimal_linking_auc_std: float
    optimal_minus_hoho_auc_se: float
    reconstruction_accuracy: float
    optimal_reconstruction_accuracy: float
    optimal_reconstruction_accuracy_all_bits: float
    prior_only_reconstruction_accuracy: float
    linking_auc_per_target: tuple[float, ...] = field(repr=False)
    optimal_linking_auc_per_target: tuple[float, ...] = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (per-target AUCs left out)."""
        skip = {"linking_auc_per_target", "optimal_linking_auc_per_target"}
        return {k: v for k, v in self.__dict__.items() if k not in skip}


def _checked_encodings(clean: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Clean encodings as uint8 ``(N, L)`` and target row indices (or an error naming them)."""
    c = np.asarray(clean, dtype=np.uint8)
    tgt = np.asarray(targets, dtype=np.int64)
    n, _ = c.shape
    if tgt.ndim != 1 or tgt.size == 0 or tgt.min() < 0 or tgt.max() >= n:
        raise InvalidArgumentError("targets", f"<{tgt.size} indices>", f"row indices in 0..{n - 1}")
    return c, tgt


def _distinct_encodings(c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(codes, code_of, counts)``: distinct rows, each row's code, and each code's count."""
    codes, code_of, counts = np.unique(c, axis=0, return_inverse=True, return_counts=True)
    if len(codes) < 2:
        raise InvalidArgumentError(
            "corpus", "<all sentences encode identically>", "at least two distinct encodings"
        )
    return codes, code_of.reshape(-1), counts


def run_attacks(
    scheme: BitScheme,
    clean: np.ndarray,
    targets: np.ndarray,
    copies: int,
    rng: np.random.Generator,
) -> AttackMetrics:
    """Steps 3–5 of the protocol on clean encodings ``(N, L)`` with target row indices."""
    copies = check_int("copies", copies, minimum=1)
    c, tgt = _checked_encodings(clean, targets)
    n, n_bits = c.shape
    codes, code_of, counts = _distinct_encodings(c)
    mask = scheme.hoho_positions
    log_one, log_zero = scheme.bit_log_probabilities(codes)
    tables = _map_tables(scheme, n_bits)
    prior = optimal.bit_prior(c)
    tally = _Tally(mask)

    # Step 3: one privatised encoding of every sentence.
    dataset = scheme.perturb(c, rng)
    hoho_dataset = hoho.matching_scores(dataset, c[tgt], mask)  # (N, T)
    loglik = optimal.log_likelihood_matrix(dataset, log_one, log_zero)
    target_codes = code_of[tgt]
    llr_dataset = optimal.linking_llr(loglik, counts, np.broadcast_to(target_codes, (n, tgt.size)))
    positive_dataset = code_of[:, None] == target_codes[None, :]
    tally.add(dataset, c, prior, tables)

    # Step 4: copies of a few targets at a time.
    auc_hoho = np.empty(tgt.size)
    auc_opt = np.empty(tgt.size)
    var_positive = 0.0  # Σ_t Var(V10 differences)/n1_t: copies, independent across targets
    shared_negative = np.zeros(n)  # Σ_t V01 differences of each dataset encoding
    for start in range(0, tgt.size, _TARGET_CHUNK):
        chunk = np.arange(start, min(start + _TARGET_CHUNK, tgt.size))
        clean_copies = np.repeat(c[tgt[chunk]], copies, axis=0)
        noisy = scheme.perturb(clean_copies, rng)
        hoho_own = hoho.own_matching_scores(
            noisy.reshape(len(chunk), copies, n_bits), c[tgt[chunk]], mask
        )
        loglik_own = optimal.log_likelihood_matrix(noisy, log_one, log_zero)
        llr_own = optimal.linking_llr(
            loglik_own, counts, np.repeat(target_codes[chunk], copies)[:, None]
        ).reshape(len(chunk), copies)
        for row, t in enumerate(chunk):
            negative = ~positive_dataset[:, t]
            pooled_hoho = (hoho_own[row], hoho_dataset[:, t])
            pooled_opt = (llr_own[row], llr_dataset[:, t])
            h10, h01 = _placements(pooled_hoho, positive_dataset[:, t])
            o10, o01 = _placements(pooled_opt, positive_dataset[:, t])
            auc_hoho[t], auc_opt[t] = h10.mean(), o10.mean()
            diff10 = o10 - h10
            var_positive += diff10.var(ddof=1) / diff10.size if diff10.size > 1 else 0.0
            shared_negative[negative] += o01 - h01
        tally.add(noisy, clean_copies, prior, tables)

    shared = shared_negative / tgt.size
    se_diff = math.sqrt(var_positive / tgt.size**2 + shared.var(ddof=1) / n)
    return AttackMetrics(
        n_sentences=n,
        n_targets=int(tgt.size),
        copies=copies,
        n_bits=n_bits,
        n_hoho_positions=int(mask.sum()),
        n_distinct_encodings=len(codes),
        linking_auc_mean=float(np.mean(auc_hoho)),
        linking_auc_std=float(np.std(auc_hoho)),
        optimal_linking_auc_mean=float(np.mean(auc_opt)),
        optimal_linking_auc_std=float(np.std(auc_opt)),
        optimal_minus_hoho_auc_se=se_diff,
        reconstruction_accuracy=tally.rate("hoho"),
        optimal_reconstruction_accuracy=tally.rate("map"),
        optimal_reconstruction_accuracy_all_bits=tally.rate("map_all"),
        prior_only_reconstruction_accuracy=tally.rate("prior"),
        linking_auc_per_target=tuple(float(v) for v in auc_hoho),
        optimal_linking_auc_per_target=tuple(float(v) for v in auc_opt),
    )


def _placements(
    pooled: tuple[np.ndarray, np.ndarray], dataset_positive: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Placement values of one target: its copies and positive dataset rows vs the rest."""
    copies_scores, dataset_scores = pooled
    positives = np.concatenate([copies_scores, dataset_scores[dataset_positive]])
    return placement_values(positives, dataset_scores[~dataset_positive])


def _map_tables(scheme: BitScheme, n_bits: int) -> tuple[np.ndarray, ...]:
    """``ln Pr[y|c]`` per position for c = 1 and c = 0: (1|1, 0|1, 1|0, 0|0)."""
    one_1, zero_1 = scheme.bit_log_probabilities(np.ones((1, n_bits), dtype=np.uint8))
    one_0, zero_0 = scheme.bit_log_probabilities(np.zeros((1, n_bits), dtype=np.uint8))
    return one_1[0], zero_1[0], one_0[0], zero_0[0]


class _Tally:
    """Correct-bit counters of the reconstruction attacks."""

    def __init__(self, mask: np.ndarray) -> None:
        self.mask = mask
        self.correct = {"hoho": 0, "map": 0, "map_all": 0, "prior": 0}
        self.total = {"hoho": 0, "map": 0, "map_all": 0, "prior": 0}

    def add(
        self,
        noisy: np.ndarray,
        clean: np.ndarray,
        prior: np.ndarray,
        tables: tuple[np.ndarray, ...],
    ) -> None:
        m = self.mask
        truth = clean[:, m]
        estimate = optimal.map_reconstruction(noisy, prior, *tables)
        baseline = optimal.prior_only_reconstruction(prior[m], len(noisy))
        for key, est, ref in (
            ("hoho", hoho.reconstruct(noisy, m), truth),
            ("map", estimate[:, m], truth),
            ("map_all", estimate, clean),
            ("prior", baseline, truth),
        ):
            self.correct[key] += hoho.correct_bits(est, ref)
            self.total[key] += ref.size

    def rate(self, key: str) -> float:
        return self.correct[key] / self.total[key]


# ----------------------------------------------------------------------- text level
@dataclass(frozen=True)
class AttackData:
    """Sampled sentences, their vectors and the targets; shared by every scheme of a grid."""

    indices: np.ndarray
    vectors: np.ndarray
    targets: np.ndarray
    n_oov_only: int
    embedder: str
    source: str


def prepare_attack_data(
    corpus: Corpus,
    n_sentences: int = DEFAULT_SENTENCES,
    target_fraction: float = DEFAULT_TARGET_FRACTION,
    seed: int = 0,
    embedder: str = "glove",
) -> AttackData:
    """Steps 1–2: sample sentences and targets (from ``seed``), fit the embedder, embed.

    With fewer than ``n_sentences`` sentences in the corpus all of them are used.
    ``n_oov_only`` counts sampled sentences without any word that has a vector
    (their vector is all zeros); they stay in the experiment.
    """
    n_sentences = check_int("n_sentences", n_sentences, minimum=2)
    target_fraction = check_probability_open("target_fraction", target_fraction)
    seed = check_seed(seed)
    rng = unit_rng(seed, (stable_hash("hoho-sample"),))
    n = min(n_sentences, len(corpus))
    if n < 2:
        raise InvalidArgumentError("corpus", f"<{len(corpus)} sentence>", "at least 2 sentences")
    indices = np.sort(rng.choice(len(corpus), size=n, replace=False))
    n_targets = max(1, round(target_fraction * n))
    targets = np.sort(rng.choice(n, size=n_targets, replace=False))
    sentences = [corpus.sentences[i] for i in indices]
    model = fit_embedder(embedder, sentences)
    vectors = model.embed(sentences)
    return AttackData(
        indices=indices,
        vectors=vectors,
        targets=targets,
        n_oov_only=_count_oov_only(model, sentences),
        embedder=embedder,
        source=corpus.source,
    )


def _count_oov_only(model: Any, sentences: list[str]) -> int:
    counter = getattr(model, "known_word_counts", None)
    if counter is None:
        return 0  # sub-word encoders have no out-of-vocabulary sentences
    return int(np.count_nonzero(counter(sentences) == 0))


def config_rng(
    seed: int, purpose: str, scheme: str, epsilon: float, params: dict[str, Any]
) -> np.random.Generator:
    """The generator of one configuration: depends on the seed and the configuration only."""
    canonical = sorted((k, _canonical(v)) for k, v in params.items())
    key = f"{purpose}|{scheme}|{float(epsilon)!r}|{canonical}"
    return unit_rng(check_seed(seed), (stable_hash(key),))


def _canonical(value: Any) -> str:
    """Numbers as float reprs (100, 100.0 and "100" agree), tuples element-wise."""
    if isinstance(value, (tuple, list)):
        return "(" + ",".join(_canonical(v) for v in value) + ")"
    if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
        return repr(float(value))
    return str(value)


@dataclass(frozen=True)
class TextAttackResult:
    """:class:`AttackMetrics` of one scheme on a corpus, with the configuration.

    ``true_epsilon`` is the mechanism's exact worst-case ε over its input domain
    (:meth:`Mechanism.truth`), next to the claimed ``epsilon``.
    """

    scheme: str
    epsilon: float
    params: dict[str, Any]
    metrics: AttackMetrics
    true_epsilon: float | None
    n_oov_only: int
    embedder: str
    source: str
    seed: int

    def to_dict(self) -> dict[str, Any]:
        """Flat JSON-ready record (the CLI's ``--json`` output)."""
        return {
            "scheme": self.scheme,
            "epsilon": self.epsilon,
            "params": self.params,
            "claimed_epsilon": self.epsilon,
            "true_epsilon": self.true_epsilon,
            **self.metrics.to_dict(),
            "n_oov_only": self.n_oov_only,
            "embedder": self.embedder,
            "corpus": self.source,
            "seed": self.seed,
        }


def attack_text(
    data: AttackData,
    scheme: str,
    epsilon: float,
    params: dict[str, Any] | None = None,
    seed: int = 0,
    copies: int = DEFAULT_COPIES,
) -> TextAttackResult:
    """Steps 3–5 for one scheme on prepared data (see the module docstring)."""
    params = dict(params or {})
    bit_scheme = build_scheme(scheme, epsilon, data.vectors, params)
    clean = bit_scheme.encode(data.vectors)
    # Keyed on the built mechanism's typed parameters: "-p lambda=100" and 100.0 agree.
    rng = config_rng(seed, "attack", scheme, epsilon, bit_scheme.params())
    metrics = run_attacks(bit_scheme, clean, data.targets, copies, rng)
    truth = bit_scheme.mechanism.truth()
    return TextAttackResult(
        scheme=scheme,
        epsilon=float(epsilon),
        params=bit_scheme.params(),
        metrics=metrics,
        true_epsilon=None if truth is None else float(truth.true_epsilon),
        n_oov_only=data.n_oov_only,
        embedder=data.embedder,
        source=data.source,
        seed=seed,
    )
