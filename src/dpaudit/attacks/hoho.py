"""The Hop-on Hop-off (HoHo) attacks on OME (Salem & Zanella-Béguelin 2021, §3.1, Alg. 1).

OME keeps the bits at even positions with high probability when λ is large
(``p1 = λ/(1+λ)``, ``q ≈ 1/(1+λ)``), so an attacker "hops on" the even bits and
"hops off" the odd ones:

* **matching score** (Alg. 1) of an encoding ``s`` against a plaintext ``t``:
  the fraction of HoHo positions where ``s`` equals the clean encoding of ``t``.
  Alg. 1 divides the count by ``floor(len/2)``; we divide by the number of
  positions used, which is the same for even ``len`` (OME with even ``r``,
  e.g. 275 of 550 bits) and never changes a ranking or an AUC;
* **reconstruction**: the bits at HoHo positions are copied as they are; the
  accuracy is measured against the clean bits at those positions.

The positions come from the scheme (:attr:`BitScheme.hoho_positions`): even
global indices for OME, every bit for SUE/OUE, whose bits are all perturbed
alike (the analogue used for HoHo's SUE/OUE baselines, Fig. 1).
"""

from __future__ import annotations

import numpy as np

from dpaudit.errors import InvalidArgumentError


def _mask(positions: np.ndarray, n_bits: int) -> np.ndarray:
    mask = np.asarray(positions, dtype=bool)
    if mask.shape != (n_bits,) or not mask.any():
        raise InvalidArgumentError(
            "positions", f"<mask of shape {mask.shape}>", f"a non-empty boolean mask of ({n_bits},)"
        )
    return mask


def matching_scores(outputs: np.ndarray, clean: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Alg. 1 for every (encoding, plaintext) pair: ``(M, L)`` × ``(T, L)`` → ``(M, T)``.

    Entry ``[m, t]`` is the fraction of masked positions where ``outputs[m]``
    equals ``clean[t]``.  Computed as ``y·c + (1−y)·(1−c)`` with a matrix product
    (float32 holds the integer counts exactly).
    """
    mask = _mask(positions, np.shape(outputs)[-1])
    y = np.asarray(outputs)[:, mask].astype(np.float32)
    c = np.asarray(clean)[:, mask].astype(np.float32)
    agree = y @ c.T + (1.0 - y) @ (1.0 - c).T
    return agree.astype(np.float64) / mask.sum()


def own_matching_scores(
    outputs: np.ndarray, clean: np.ndarray, positions: np.ndarray
) -> np.ndarray:
    """Alg. 1 of each group of encodings against its own plaintext.

    ``outputs (T, K, L)`` are K encodings of each of T plaintexts with clean bits
    ``clean (T, L)``; returns ``(T, K)``.
    """
    mask = _mask(positions, np.shape(outputs)[-1])
    y = np.asarray(outputs)[..., mask]
    c = np.asarray(clean)[:, None, mask]
    return (y == c).mean(axis=-1)


def reconstruct(outputs: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """HoHo's reconstruction: the bits at the HoHo positions, copied as they are."""
    mask = _mask(positions, np.shape(outputs)[-1])
    return np.asarray(outputs)[..., mask]


def correct_bits(estimate: np.ndarray, truth: np.ndarray) -> int:
    """Number of positions where ``estimate`` equals ``truth`` (same shapes)."""
    return int(np.count_nonzero(np.asarray(estimate) == np.asarray(truth)))
