"""DP-BART-CLV: noisy clipped encoder states, decoded (Igamberdiev & Habernal 2023).

DP-BART (Igamberdiev & Habernal, Findings of ACL 2023, §3) privatises the
encoder output of a BART autoencoder: the document is padded (or truncated)
to ``n`` tokens, its ``n × d`` encoder states are clipped by value into
``[−C, C]`` (the "CLV" variant; the authors' code uses ``C = 0.1``), noise is
added to every coordinate, and the decoder turns the noisy states into text,
a post-processing.  Changing the document can change every state, so the
sensitivity of the clipped states is

* L1: ``2C · n·d`` (each of the ``n·d`` coordinates moves by at most ``2C``),
  calibrating Laplace noise ``b = Δ₁/ε`` (ε-DP);
* L2: ``2C · sqrt(n·d)``, calibrating Gaussian noise, classic
  ``σ = Δ₂·sqrt(2 ln(1.25/δ))/ε`` (the authors' default, proven only for ε < 1)
  or analytic (Balle & Wang 2018).

The authors' code uses these sensitivities with ``n·d`` the whole padded
document (facts F4.2 of the audit's notes); a release may calibrate with a
different value, so :func:`dp_bart` takes ``claimed_sensitivity`` and the
audit compares it with the true one.

Padding: documents are padded to ``max_length`` tokens and truncated beyond,
as in the authors' code, so every release has the same shape ``(n, d)``
(the states at padding positions still depend on the document and are noised
too).  With ``pad=False`` the states of documents of different token lengths
have different shapes: the shape alone tells them apart and the privacy loss
is infinite, which :meth:`BartRewriter.analytic_loss` reports.

The decoder attends to all ``n`` noisy states (no attention mask, as the
authors' ``generate(encoder_outputs=...)``): passing the document's mask
would release its length without noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.analysis.gaussian import (
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    gaussian_epsilon_for_delta,
)
from dpaudit.errors import InvalidArgumentError, MechanismError
from dpaudit.mechanisms.rewriters.claim import TextClaim, Unit
from dpaudit.mechanisms.rewriters.lm import torch_module
from dpaudit.validation import check_epsilon, check_positive

NOISES = ("laplace", "gaussian", "analytic_gaussian")


@dataclass(frozen=True)
class BartRewriter:
    """Clip encoder states by value, add noise, decode: a document-level mechanism.

    Attributes:
        name: registry-style name (``dp-bart``).
        model: an object with ``.model`` (a Hugging Face BART-style encoder-decoder)
            and ``.tokenizer``.
        claim: what the paper claims ((ε, δ) per document).
        clip: ``C``; states are clipped into ``[−C, C]``.
        noise: ``laplace``, ``gaussian`` (classic formula) or ``analytic_gaussian``.
        max_length: ``n``, the token length documents are padded and truncated to.
        claimed_sensitivity: the sensitivity the noise is calibrated with (``None``:
            the true one for ``n`` positions).
        pad: pad to ``max_length`` (the authors' choice); otherwise shapes differ.
        num_beams: beams of the decoder (1: greedy; the authors use 3).
        batch_size: noisy releases decoded per ``generate`` call.
    """

    name: str
    model: Any
    claim: TextClaim
    clip: float = 0.1
    noise: str = "laplace"
    max_length: int = 20
    claimed_sensitivity: float | None = None
    pad: bool = True
    num_beams: int = 1
    batch_size: int = 64

    def __post_init__(self) -> None:
        check_positive("clip", self.clip)
        if self.noise not in NOISES:
            raise InvalidArgumentError("noise", self.noise, f"one of {NOISES}")
        if self.noise != "laplace" and self.claim.delta == 0.0:
            raise InvalidArgumentError("delta", 0.0, "a number in (0, 1) for Gaussian noise")
        if self.max_length < 1:
            raise InvalidArgumentError("max_length", self.max_length, "an integer >= 1")
        if self.claimed_sensitivity is not None:
            check_positive("claimed_sensitivity", self.claimed_sensitivity)

    @property
    def tokenizer(self) -> Any:
        """The model's tokenizer."""
        return self.model.tokenizer

    @property
    def hidden(self) -> int:
        """``d``, the width of one encoder state."""
        config = self.model.model.config
        return int(getattr(config, "d_model", None) or config.hidden_size)

    @property
    def coordinates(self) -> int:
        """``n·d``, the coordinates of one release (at the longest, without padding)."""
        return self.max_length * self.hidden

    @property
    def true_sensitivity(self) -> float:
        """True sensitivity of the clipped states: L1 ``2C·n·d`` or L2 ``2C·√(n·d)``."""
        k = self.coordinates
        return 2.0 * self.clip * (k if self.noise == "laplace" else math.sqrt(k))

    @property
    def sensitivity(self) -> float:
        """The sensitivity the noise is calibrated with."""
        if self.claimed_sensitivity is None:
            return self.true_sensitivity
        return self.claimed_sensitivity

    @property
    def noise_scale(self) -> float:
        """Laplace ``b = Δ/ε``, or the Gaussian ``σ`` of the calibration named by :attr:`noise`."""
        eps, delta = self.claim.epsilon, self.claim.delta
        if self.noise == "laplace":
            return self.sensitivity / eps
        if self.noise == "gaussian":
            return classic_gaussian_sigma(eps, delta, self.sensitivity)
        return analytic_gaussian_sigma(eps, delta, self.sensitivity)

    @property
    def calibration_covers(self) -> bool:
        """True when the noise is calibrated with at least the true sensitivity."""
        return self.sensitivity >= self.true_sensitivity * (1.0 - 1e-12)

    def worst_case_epsilon(self) -> float:
        """The true ε of the state release over all pairs (at the claim's δ for Gaussian noise).

        ``inf`` without padding: documents of different lengths give different shapes.
        """
        if not self.pad:
            return math.inf
        return self._loss_at(self.true_sensitivity)

    def encode(self, document: str) -> tuple[np.ndarray, np.ndarray]:
        """Token ids and attention mask of ``document``, padded/truncated to ``max_length``."""
        if not isinstance(document, str):
            raise InvalidArgumentError("document", type(document).__name__, "a str")
        kwargs: dict[str, Any] = {"truncation": True, "max_length": self.max_length}
        if self.pad:
            kwargs["padding"] = "max_length"
        enc = self.tokenizer(document, **kwargs)
        return (
            np.asarray(enc["input_ids"], dtype=np.int64),
            np.asarray(enc["attention_mask"], dtype=np.int64),
        )

    def clipped_states(self, document: str) -> np.ndarray:
        """``(n, d)`` encoder states of ``document`` clipped into ``[−C, C]`` (float64)."""
        torch = torch_module()
        ids, mask = self.encode(document)
        encoder = self.model.model.get_encoder()
        with torch.inference_mode():
            out = encoder(
                input_ids=torch.from_numpy(ids[None]), attention_mask=torch.from_numpy(mask[None])
            )
        states = out.last_hidden_state[0].float().numpy().astype(np.float64)
        if not np.all(np.isfinite(states)):
            raise MechanismError(f"{self.name}: the encoder returned non-finite states")
        return np.clip(states, -self.clip, self.clip)

    def release(self, document: str, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` noisy state releases ``(n, L, d)``: the part the DP claim is about."""
        if n < 1:
            raise InvalidArgumentError("n", n, "an integer >= 1")
        center = self.clipped_states(document)
        shape = (n, *center.shape)
        if self.noise == "laplace":
            noise = rng.laplace(0.0, self.noise_scale, size=shape)
        else:
            noise = rng.normal(0.0, self.noise_scale, size=shape)
        return center[None] + noise

    def sample(self, document: str, n: int, rng: np.random.Generator) -> list[str]:
        """``n`` rewrites of ``document`` as text: noisy states decoded (the black-box view)."""
        released = self.release(document, n, rng)
        texts: list[str] = []
        for start in range(0, n, self.batch_size):
            texts.extend(self.decode_states(released[start : start + self.batch_size]))
        return texts

    def decode_states(self, states: np.ndarray) -> list[str]:
        """Text decoded from a batch of (noisy) states ``(b, L, d)``: post-processing."""
        torch = torch_module()
        from transformers.modeling_outputs import BaseModelOutput

        hidden = torch.from_numpy(np.ascontiguousarray(states, dtype=np.float32))
        with torch.inference_mode():
            ids = self.model.model.generate(
                encoder_outputs=BaseModelOutput(last_hidden_state=hidden),
                max_length=self.max_length,
                num_beams=self.num_beams,
                do_sample=False,
            )
        return [str(t).strip() for t in self.tokenizer.batch_decode(ids, skip_special_tokens=True)]

    def analytic_loss(self, x: str, x_prime: str) -> float:
        """The true privacy loss of the state release between ``x`` and ``x_prime``.

        Laplace: the worst-case loss ``‖c(x) − c(x')‖₁ / b`` (``c`` the clipped states).
        Gaussian: the exact ε at the claim's δ for ``‖c(x) − c(x')‖₂`` (its pure loss is
        unbounded).  ``inf`` when the two releases have different shapes.
        """
        a, b = self.clipped_states(x), self.clipped_states(x_prime)
        if a.shape != b.shape:
            return math.inf
        ord_ = 1 if self.noise == "laplace" else 2
        return self._loss_at(float(np.linalg.norm((a - b).ravel(), ord=ord_)))

    def privacy_loss(self, x: str, x_prime: str, released: np.ndarray) -> np.ndarray:
        """``ln p(y | x) − ln p(y | x')`` of each release ``y`` in ``released`` ``(m, L, d)``."""
        a, b = self.clipped_states(x), self.clipped_states(x_prime)
        if a.shape != b.shape:
            raise InvalidArgumentError("x_prime", x_prime, f"a document whose states are {a.shape}")
        s = self.noise_scale
        if self.noise == "laplace":
            return np.sum(np.abs(released - b) - np.abs(released - a), axis=(1, 2)) / s
        dist = np.sum((released - b) ** 2, axis=(1, 2)) - np.sum((released - a) ** 2, axis=(1, 2))
        return dist / (2.0 * s * s)

    def describe(self) -> str:
        """One line for reports."""
        return (
            f"{self.name}: clip states to [-{self.clip:g}, {self.clip:g}] on {self.max_length}"
            f"×{self.hidden} coordinates + {self.noise} noise (scale {self.noise_scale:.4g},"
            f" sensitivity {self.sensitivity:.4g}, true {self.true_sensitivity:.4g}) → "
            f"{'greedy' if self.num_beams == 1 else f'{self.num_beams}-beam'} decoding;"
            f" claim {self.claim.describe()}"
        )

    def _loss_at(self, distance: float) -> float:
        if distance == 0.0:
            return 0.0
        if self.noise == "laplace":
            return distance / self.noise_scale
        return gaussian_epsilon_for_delta(self.claim.delta, self.noise_scale, distance)


def dp_bart(
    model: Any,
    epsilon: float,
    *,
    delta: float = 0.0,
    clip: float = 0.1,
    noise: str = "laplace",
    max_length: int = 20,
    claimed_sensitivity: float | None = None,
    pad: bool = True,
    num_beams: int = 1,
) -> BartRewriter:
    """DP-BART-CLV at ``(epsilon, delta)`` per document (Igamberdiev & Habernal 2023, §3).

    Encoder states clipped by value into ``[−C, C]`` plus noise calibrated by the
    sensitivity of ``n = max_length`` padded positions: ``2C·n·d`` (L1, Laplace,
    ``b = Δ₁/ε``) or ``2C·√(n·d)`` (L2, Gaussian).  The authors' released
    scripts use ``C = 0.1``, classic Gaussian noise and ``max_length = 20``.
    """
    check_epsilon(epsilon)
    return BartRewriter(
        name="dp-bart",
        model=model,
        claim=TextClaim(
            epsilon, Unit.DOCUMENT, delta, source="Igamberdiev & Habernal 2023, §3 (per document)"
        ),
        clip=clip,
        noise=noise,
        max_length=max_length,
        claimed_sensitivity=claimed_sensitivity,
        pad=pad,
        num_beams=num_beams,
    )
