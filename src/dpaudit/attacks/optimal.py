"""Optimal attacks: exact likelihood ratios over *all* bits, from the known flip probabilities.

HoHo (Salem & Zanella-Béguelin 2021, §3.1) looks at the even bits only and
weighs them equally.  The mechanism is public, so an attacker can do better:
every bit ``y_j`` of an encoding is independent given the clean bits ``c`` with
known ``Pr[y_j = 1 | c]`` (OME: Lyu et al. Thm. 1 / HoHo eqs. 1–2; SUE/OUE:
Wang et al. 2017 §4.2), hence the exact log-likelihood

    ℓ(y | c) = Σ_j y_j·ln Pr[y_j=1|c] + (1−y_j)·ln Pr[y_j=0|c]
             = y · (ln P1 − ln P0) + Σ_j ln P0_j,

a matrix product for many ``y`` and many ``c`` at once.

**Linking.**  Given the plaintext target ``t`` and an encoding ``y`` that is
either a copy of ``t`` (H1) or the encoding of a sentence drawn uniformly from
the *other* sentences of the corpus (H0), the Neyman–Pearson optimal score is
the likelihood ratio

    Λ_t(y) = ℓ(y | c_t) − ln( (1/|O_t|) Σ_{s ∈ O_t} exp ℓ(y | c_s) ),

``O_t`` = sentences whose clean encoding differs from ``c_t``.  Ranking by it
maximises the ROC curve pointwise, so its AUC is at least that of any other
score (HoHo's included) in expectation.  The attacker knows the corpus'
plaintexts, as in HoHo's linking game where the list holds "the encoding of the
complete dataset".  The log-sum-exp that leaves out one code is computed
without cancellation (see :func:`log_mean_exp_excluding`).

**Reconstruction.**  Per bit, the maximum a posteriori clean bit given ``y_j``,
the flip probabilities and a prior ``π_j = Pr[c_j = 1]`` (per-position
frequencies of clean encodings in the population, add-one smoothed): predict 1
iff ``logit π_j + ln Pr[y_j|1] − ln Pr[y_j|0] > 0`` (ties: copy ``y_j``).  Per-bit
MAP maximises the expected number of correct bits, so it is never worse than
copying in expectation.  :func:`prior_only_reconstruction` is the baseline that
ignores ``y`` altogether: what the prior alone gives away.
"""

from __future__ import annotations

import numpy as np

from dpaudit.errors import InvalidArgumentError


def log_likelihood_matrix(
    outputs: np.ndarray, log_one: np.ndarray, log_zero: np.ndarray
) -> np.ndarray:
    """``ℓ(y_m | c_s)`` for outputs ``(M, L)`` and per-code tables ``(S, L)`` → ``(M, S)``.

    ``log_one[s, j] = ln Pr[y_j = 1 | c_s]`` and ``log_zero`` likewise for 0.
    """
    l1 = np.asarray(log_one, dtype=np.float64)
    l0 = np.asarray(log_zero, dtype=np.float64)
    if not (np.all(np.isfinite(l1)) and np.all(np.isfinite(l0))):
        raise InvalidArgumentError(
            "log_one/log_zero", "<tables with -inf>", "finite log-probabilities (0 < p < 1)"
        )
    y = np.asarray(outputs, dtype=np.float64)
    return y @ (l1 - l0).T + l0.sum(axis=1)


def log_mean_exp_excluding(
    log_terms: np.ndarray, counts: np.ndarray, excluded: np.ndarray
) -> np.ndarray:
    """``ln( Σ_{u ≠ e} n_u·exp(a_u) / Σ_{u ≠ e} n_u )`` row by row, for many excluded ``e``.

    ``log_terms (M, U)`` are ``a_u`` for ``U`` distinct codes with multiplicities
    ``counts (U,)``; ``excluded (M, E)`` holds code indices; the result is
    ``(M, E)``.  Exact without cancellation: with ``w_u = a_u + ln n_u``, row
    maximum ``m1`` at ``u*`` and second maximum ``m2``, the sum leaving out
    ``e ≠ u*`` is ``exp(m1)·(S1 − exp(w_e − m1))`` with ``S1 = Σ exp(w − m1) ≥ 1 +
    exp(w_e − m1)``, and leaving out ``u*`` it is ``exp(m2)·R2`` with ``R2`` the sum
    over ``u ≠ u*`` (``≥ 1``); neither subtracts nearly equal numbers.
    """
    a = np.asarray(log_terms, dtype=np.float64)
    n = np.asarray(counts, dtype=np.float64)
    ex = np.asarray(excluded, dtype=np.int64)
    if a.ndim != 2 or a.shape[1] < 2 or n.shape != (a.shape[1],) or ex.ndim != 2:
        raise InvalidArgumentError(
            "log_terms", f"<array of shape {a.shape}>", "(M, U) with U >= 2 codes and (U,) counts"
        )
    rows = np.arange(a.shape[0])
    w = a + np.log(n)
    top = w.argmax(axis=1)
    m1 = w[rows, top]
    rest = w.copy()
    rest[rows, top] = -np.inf
    m2 = rest.max(axis=1)
    s1 = np.exp(w - m1[:, None]).sum(axis=1)
    r2 = np.exp(rest - m2[:, None]).sum(axis=1)
    w_ex = np.take_along_axis(w, ex, axis=1)
    is_top = ex == top[:, None]
    # np.where evaluates both branches; the unused one may take log(0).
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        without = np.where(
            is_top,
            m2[:, None] + np.log(r2)[:, None],
            m1[:, None] + np.log(s1[:, None] - np.exp(w_ex - m1[:, None])),
        )
    total = n.sum()
    return without - np.log(total - n[ex])


def linking_llr(loglik: np.ndarray, counts: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Exact ``Λ_t(y)`` for every row and every target code.

    ``loglik (M, U)``: ``ℓ(y_m | code u)`` over the distinct clean codes;
    ``counts (U,)``: how many sentences have each code; ``targets (M, E)``: the
    target code index per row and column.  Returns ``(M, E)``.
    """
    ex = np.asarray(targets, dtype=np.int64)
    own = np.take_along_axis(np.asarray(loglik, dtype=np.float64), ex, axis=1)
    return own - log_mean_exp_excluding(loglik, counts, ex)


def bit_prior(clean: np.ndarray) -> np.ndarray:
    """Add-one smoothed per-position frequency of 1s among clean encodings ``(N, L)``."""
    c = np.asarray(clean)
    return (c.sum(axis=0, dtype=np.float64) + 1.0) / (c.shape[0] + 2.0)


def map_reconstruction(
    outputs: np.ndarray,
    prior_one: np.ndarray,
    log_one_given_one: np.ndarray,
    log_zero_given_one: np.ndarray,
    log_one_given_zero: np.ndarray,
    log_zero_given_zero: np.ndarray,
) -> np.ndarray:
    """Per-bit MAP estimate of the clean bits of ``outputs (M, L)`` (uint8, same shape).

    The four tables are ``ln Pr[y_j | c_j]`` per position, shape ``(L,)``.
    """
    y = np.asarray(outputs)
    prior = np.asarray(prior_one, dtype=np.float64)
    log_prior_odds = np.log(prior) - np.log1p(-prior)
    evidence_one = log_one_given_one - log_one_given_zero  # output 1 seen
    evidence_zero = log_zero_given_one - log_zero_given_zero  # output 0 seen
    log_odds = log_prior_odds + np.where(y == 1, evidence_one, evidence_zero)
    return np.where(log_odds == 0, y, log_odds > 0).astype(np.uint8)


def prior_only_reconstruction(prior_one: np.ndarray, n_rows: int) -> np.ndarray:
    """The baseline that ignores the encoding: the more likely bit under the prior."""
    guess = (np.asarray(prior_one) > 0.5).astype(np.uint8)
    return np.broadcast_to(guess, (n_rows, guess.shape[0]))
