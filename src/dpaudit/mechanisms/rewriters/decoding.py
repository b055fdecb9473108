"""How a rewriter turns a language model's logits into the distribution it samples from.

Every rewriter of the DP-Prompt family draws each token from a distribution
computed from the model's logits by a chain of *processors* applied in a fixed
order: clip the logits into ``[b_lo, b_hi]``, divide by a temperature, perhaps
keep the top-k or the top-p mass, then softmax.  :class:`Decoding` records that
chain as an immutable value, so that the sampler and the auditor compute the
same distribution from the same description, and so that a foreign code path
can be described as it really runs (an HF ``generate`` call with a default
``top_k=50`` is a different mechanism from the paper's).

The exponential mechanism over clipped logits (McSherry & Talwar 2007; used per
token by DP-Prompt, Utpala et al. 2023, §3, and DP-Paraphrase, Mattern et al.
2022, eq. 2) has utility range ``Δu = b_hi − b_lo`` and temperature
``T = 2·Δu/ε``, so each token is ε-DP for any two inputs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpaudit.errors import InvalidArgumentError
from dpaudit.validation import check_epsilon

PROCESSORS = ("clip", "temperature", "top_k", "top_p")


@dataclass(frozen=True)
class Decoding:
    """The per-token sampling distribution of a rewriter, as its code computes it.

    Attributes:
        temperature: logits are divided by it (after clipping when ``order`` says so).
        clip: ``(b_lo, b_hi)`` bounds the logits are clipped into, or ``None``.
        top_k: keep only the ``top_k`` largest processed logits, or ``None``.
        top_p: keep the smallest set of tokens of mass ≥ ``top_p``, or ``None``.
        greedy: take the most likely token instead of sampling (deterministic).
        max_new_tokens: at most this many tokens are generated.
        order: the order the processors run in (a subset of
            ``("clip", "temperature", "top_k", "top_p")``).
        dtype: the floating type the logits are processed in (``"float32"``, ...).
        mix: ``λ`` of a mixture with the uniform distribution after the softmax,
            ``p = λ·q + (1 − λ)/V`` (DP-Decoding, Majmudar et al. 2022, §3), or ``None``.
    """

    temperature: float = 1.0
    clip: tuple[float, float] | None = None
    top_k: int | None = None
    top_p: float | None = None
    greedy: bool = False
    max_new_tokens: int = 32
    order: tuple[str, ...] = PROCESSORS
    dtype: str = "float32"
    mix: float | None = None

    def __post_init__(self) -> None:
        if not (math.isfinite(self.temperature) and self.temperature > 0):
            raise InvalidArgumentError("temperature", self.temperature, "a finite number > 0")
        if self.clip is not None and not (
            math.isfinite(self.clip[0])
            and math.isfinite(self.clip[1])
            and self.clip[0] < self.clip[1]
        ):
            raise InvalidArgumentError("clip", self.clip, "(b_lo, b_hi) finite with b_lo < b_hi")
        if self.top_k is not None and self.top_k < 1:
            raise InvalidArgumentError("top_k", self.top_k, "an integer >= 1 or None")
        if self.top_p is not None and not 0.0 < self.top_p <= 1.0:
            raise InvalidArgumentError("top_p", self.top_p, "a number in (0, 1] or None")
        if self.max_new_tokens < 1:
            raise InvalidArgumentError("max_new_tokens", self.max_new_tokens, "an integer >= 1")
        if self.mix is not None and not (math.isfinite(self.mix) and 0.0 < self.mix <= 1.0):
            raise InvalidArgumentError("mix", self.mix, "λ in (0, 1] or None")
        if self.mix is not None and self.greedy:
            raise InvalidArgumentError("mix", self.mix, "None with greedy decoding (no sampling)")
        unknown = set(self.order) - set(PROCESSORS)
        if unknown or len(set(self.order)) != len(self.order):
            raise InvalidArgumentError("order", self.order, f"distinct names from {PROCESSORS}")

    @property
    def epsilon_per_token(self) -> float:
        """The per-token ε the clipped exponential mechanism gives: ``2·(b_hi − b_lo)/T``.

        ``inf`` when the support can depend on the input (no clipping, greedy,
        top-k or top-p): then some token has probability zero under one input
        and not under another, or the logit range is unbounded.  This is the logits
        part alone: a uniform mixture (:attr:`mix`) bounds the loss by an amount that
        depends on the vocabulary (:meth:`exact_worst_token_loss`).
        """
        if self.clip is None or self.greedy or self.truncates:
            return math.inf
        return 2.0 * (self.clip[1] - self.clip[0]) / self.temperature

    @property
    def truncates(self) -> bool:
        """True when top-k or top-p can remove tokens (an input-dependent support)."""
        return self.top_k is not None or (self.top_p is not None and self.top_p < 1.0)

    def exact_worst_token_loss(self, vocabulary: int) -> float:
        """The largest per-token privacy loss any two inputs can cause, for a vocabulary size.

        With every logit in ``[b_lo, b_hi]`` and ``a = (b_hi − b_lo)/T``, the
        worst output token has the top logit under one input and the bottom one
        under the other, every other token the reverse, giving
        ``a + ln((1 + (V−1)e^a) / (e^a + V − 1))``, which tends to ``2a = ε``
        as ``V → ∞``.
        """
        if vocabulary < 2:
            raise InvalidArgumentError("vocabulary", vocabulary, "an integer >= 2")
        if self.mixes:
            return self._mixed_worst_token_loss(float(vocabulary))
        if not math.isfinite(self.epsilon_per_token):
            return math.inf
        a = (self.clip[1] - self.clip[0]) / self.temperature  # type: ignore[index]
        v = float(vocabulary)
        return a + math.log1p((v - 1.0) * math.exp(a)) - math.log(math.exp(a) + v - 1.0)

    @property
    def mixes(self) -> bool:
        """True when a uniform share ``1 − λ > 0`` is mixed in (every token stays possible)."""
        return self.mix is not None and self.mix < 1.0

    def _mixed_worst_token_loss(self, v: float) -> float:
        """``ln((λ·q_max + c) / (λ·q_min + c))`` with ``c = (1 − λ)/V``: the mixture's ratio is
        largest where the logits part gives the token its most under one input and its least
        under the other.  Unclipped (or truncated) that is 1 and 0, so
        ``ln((1 + (V − 1)λ)/(1 − λ))``; clipped without truncation, the exponential
        mechanism's extremes ``e^a/(e^a + V − 1)`` and ``1/(1 + (V − 1)e^a)``, exact again.
        With a clip and a truncation together it is 1 and 0: an upper bound, not exact."""
        lam = float(self.mix)  # type: ignore[arg-type]
        q_max, q_min = 1.0, 0.0
        if self.clip is not None and not self.truncates:
            a = (self.clip[1] - self.clip[0]) / self.temperature
            q_max = 1.0 / (1.0 + (v - 1.0) * math.exp(-a))
            q_min = 1.0 / (1.0 + (v - 1.0) * math.exp(a))
        c = (1.0 - lam) / v
        return math.log(lam * q_max + c) - math.log(lam * q_min + c)

    def describe(self) -> str:
        """One line such as ``clip [-2, 2] → T = 0.8 → sample``."""
        steps = []
        for name in self.order:
            if name == "clip" and self.clip is not None:
                steps.append(f"clip [{self.clip[0]:g}, {self.clip[1]:g}]")
            elif name == "temperature" and self.temperature != 1.0:
                steps.append(f"T = {self.temperature:.4g}")
            elif name == "top_k" and self.top_k is not None:
                steps.append(f"top-k {self.top_k}")
            elif name == "top_p" and self.top_p is not None and self.top_p < 1.0:
                steps.append(f"top-p {self.top_p:g}")
        if self.mixes:
            steps.append(f"mix λ = {self.mix:.4g} with uniform")
        steps.append("argmax" if self.greedy else "sample")
        return " → ".join(steps) + f" (≤ {self.max_new_tokens} tokens, {self.dtype})"

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {
            "temperature": self.temperature,
            "clip": list(self.clip) if self.clip is not None else None,
            "top_k": self.top_k,
            "top_p": self.top_p,
            "greedy": self.greedy,
            "max_new_tokens": self.max_new_tokens,
            "order": list(self.order),
            "dtype": self.dtype,
            "mix": self.mix,
            "epsilon_per_token": self.epsilon_per_token,
        }


def exponential_decoding(
    epsilon_per_token: float,
    clip: tuple[float, float],
    *,
    max_new_tokens: int = 32,
    dtype: str = "float32",
) -> Decoding:
    """The clipped exponential mechanism at ``epsilon_per_token``: ``T = 2·(b_hi − b_lo)/ε``."""
    check_epsilon(epsilon_per_token)
    width = float(clip[1]) - float(clip[0])
    return Decoding(
        temperature=2.0 * width / epsilon_per_token,
        clip=(float(clip[0]), float(clip[1])),
        max_new_tokens=max_new_tokens,
        dtype=dtype,
    )


#: Entries of one block of rows :func:`process_logits` works on at a time (8 MB in float64):
#: every step is row by row, so the blocks give the same bits as the whole, and each pass
#: stays in cache (128 rows of 49,152 logits: 0.07 s in blocks against 0.3 s whole).
BLOCK_ENTRIES = 1 << 20


def process_logits(logits: np.ndarray, decoding: Decoding) -> np.ndarray:
    """Log-probabilities (float64, ``-inf`` for removed tokens) of each row of ``logits``.

    Applies the processors in ``decoding.order`` in ``decoding.dtype``, then a
    log-softmax in float64.  Greedy decoding gives log-probability 0 to the
    first arg-max token and ``-inf`` to all others.  A large 2-D array is processed in
    blocks of rows (:data:`BLOCK_ENTRIES`), with the same result.
    """
    z = np.asarray(logits)
    rows = max(1, BLOCK_ENTRIES // max(z.shape[-1], 1)) if z.ndim == 2 else 0
    if z.ndim == 2 and z.shape[0] > rows:
        out = np.empty(z.shape, dtype=np.float64)
        for start in range(0, z.shape[0], rows):
            out[start : start + rows] = _process_block(z[start : start + rows], decoding)
        return out
    return _process_block(z, decoding)


def _process_block(logits: np.ndarray, decoding: Decoding) -> np.ndarray:
    z = np.asarray(logits, dtype=np.dtype(decoding.dtype))
    for name in decoding.order:
        if name == "clip" and decoding.clip is not None:
            z = np.clip(z, decoding.clip[0], decoding.clip[1])
        elif name == "temperature":
            z = z / np.asarray(decoding.temperature, dtype=z.dtype)
        elif name == "top_k" and decoding.top_k is not None:
            z = _keep_top_k(z, decoding.top_k)
        elif name == "top_p" and decoding.top_p is not None and decoding.top_p < 1.0:
            z = _keep_top_p(z, decoding.top_p)
    z = z.astype(np.float64)
    if decoding.greedy:
        out = np.full(z.shape, -np.inf)
        np.put_along_axis(out, np.argmax(z, axis=-1)[..., None], 0.0, axis=-1)
        return out
    top = np.max(z, axis=-1, keepdims=True)
    shifted = z - top
    log_q = shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))
    if decoding.mixes:  # λ·q + (1 − λ)/V, in logs
        lam = float(decoding.mix)  # type: ignore[arg-type]
        return np.logaddexp(math.log(lam) + log_q, math.log((1.0 - lam) / z.shape[-1]))
    return log_q


def _keep_top_k(z: np.ndarray, k: int) -> np.ndarray:
    if k >= z.shape[-1]:
        return z
    kth = np.partition(z, -k, axis=-1)[..., -k][..., None]
    return np.where(z >= kth, z, -np.inf)


def _keep_top_p(z: np.ndarray, p: float) -> np.ndarray:
    # As HF's TopPLogitsWarper: keep the most likely tokens until their mass reaches p
    # (the token that crosses p is kept; at least one token always is).
    zz = z.astype(np.float64)
    probs = np.exp(zz - zz.max(axis=-1, keepdims=True))
    probs /= probs.sum(axis=-1, keepdims=True)
    order = np.argsort(-probs, axis=-1, kind="stable")
    sorted_p = np.take_along_axis(probs, order, axis=-1)
    before = np.cumsum(sorted_p, axis=-1) - sorted_p
    keep_sorted = before < p
    keep = np.zeros_like(keep_sorted)
    np.put_along_axis(keep, order, keep_sorted, axis=-1)
    return np.where(keep, z, -np.inf)
