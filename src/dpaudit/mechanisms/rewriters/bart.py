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

:func:`dp_bart_privfill` is the re-implementation in PyPI ``privfill`` and
``sjmeis/DPMLM``: an asymmetric box ``[−0.2, 0.1]``, a sensitivity for one
position, and ONE noise vector shared by all positions, so the differences
between positions are released without noise (an infinite loss for two or
more tokens).

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
from dpaudit.claims import TextClaim, Unit
from dpaudit.errors import InvalidArgumentError, MechanismError
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
        clip: ``C`` (states clipped into ``[−C, C]``) or a box ``(lo, hi)``.
        noise: ``laplace``, ``gaussian`` (classic formula) or ``analytic_gaussian``.
        max_length: ``n``, the token length documents are padded and truncated to.
        claimed_sensitivity: the sensitivity the noise is calibrated with (``None``:
            the true one for ``n`` positions).
        pad: pad to ``max_length`` (the authors' choice); otherwise shapes differ.
        num_beams: beams of the decoder (1: greedy; the authors use 3).
        batch_size: noisy releases decoded per ``generate`` call.
        shared_noise: add ONE noise vector of width ``d`` to every position (privfill's and
            LLMDP's ``DPBart``) instead of independent noise on all ``n·d`` coordinates.
    """

    name: str
    model: Any
    claim: TextClaim
    clip: float | tuple[float, float] = 0.1
    noise: str = "laplace"
    max_length: int = 20
    claimed_sensitivity: float | None = None
    pad: bool = True
    num_beams: int = 1
    batch_size: int = 64
    shared_noise: bool = False

    def __post_init__(self) -> None:
        lo, hi = self.box
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise InvalidArgumentError("clip", self.clip, "C > 0 or a box (lo, hi) with lo < hi")
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
    def box(self) -> tuple[float, float]:
        """The clip box ``(lo, hi)``."""
        if isinstance(self.clip, tuple | list):
            return float(self.clip[0]), float(self.clip[1])
        return -float(self.clip), float(self.clip)

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
        """True sensitivity of the clipped states: L1 ``w·n·d`` or L2 ``w·√(n·d)``, ``w = hi − lo``.

        ``w = 2C`` for the symmetric box.  Each of the ``n·d`` coordinates can move by ``w``.
        """
        k = self.coordinates
        width = self.box[1] - self.box[0]
        return width * (k if self.noise == "laplace" else math.sqrt(k))

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

        ``inf`` without padding (documents of different lengths give different shapes) and
        with shared noise on two or more positions (the differences between positions are
        released without noise).  With shared noise on one position the release is ``d``
        coordinates, whose sensitivity :attr:`true_sensitivity` gives for ``n = 1``.
        """
        if not self.pad or (self.shared_noise and self.max_length > 1):
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
        ids = np.asarray(enc["input_ids"], dtype=np.int64)
        if ids.size > self.max_length:  # a tokenizer cannot truncate below its special tokens
            raise InvalidArgumentError("max_length", self.max_length, f">= {ids.size} here")
        return ids, np.asarray(enc["attention_mask"], dtype=np.int64)

    def clipped_states(self, document: str) -> np.ndarray:
        """``(n, d)`` encoder states of ``document`` clipped into the box (float64)."""
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
        return np.clip(states, *self.box)

    def release(self, document: str, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` noisy state releases ``(n, L, d)``: the part the DP claim is about."""
        if n < 1:
            raise InvalidArgumentError("n", n, "an integer >= 1")
        center = self.clipped_states(document)
        # Shared noise: one d-vector per release, broadcast over the positions.
        shape = (n, 1, center.shape[1]) if self.shared_noise else (n, *center.shape)
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
        unbounded).  ``inf`` when the two releases have different shapes, and with shared
        noise when ``c(x) − c(x')`` is not the same at every position (the release's
        differences between positions then tell the two apart with certainty).
        """
        a, b = self.clipped_states(x), self.clipped_states(x_prime)
        if a.shape != b.shape:
            return math.inf
        diff = a - b
        if self.shared_noise:
            if np.any(diff != diff[:1]):
                return math.inf
            diff = diff[:1]
        ord_ = 1 if self.noise == "laplace" else 2
        return self._loss_at(float(np.linalg.norm(diff.ravel(), ord=ord_)))

    def privacy_loss(self, x: str, x_prime: str, released: np.ndarray) -> np.ndarray:
        """``ln p(y | x) − ln p(y | x')`` of each release ``y`` in ``released`` ``(m, L, d)``.

        With shared noise a release is possible under a document only if ``y − c`` is the
        same at every position (to 1e-9 relative, the float64 rounding of ``c + z``);
        otherwise its log-density is ``-inf``.
        """
        a, b = self.clipped_states(x), self.clipped_states(x_prime)
        if a.shape != b.shape:
            raise InvalidArgumentError("x_prime", x_prime, f"a document whose states are {a.shape}")
        with np.errstate(invalid="ignore"):
            loss = self._log_density(released - a) - self._log_density(released - b)
        return np.where(np.isnan(loss), 0.0, loss)  # impossible under both: no evidence

    def _log_density(self, noise: np.ndarray) -> np.ndarray:
        """Log-density (up to a constant) of each release's noise ``(m, L, d)``."""
        if self.shared_noise:
            tol = 1e-9 * max(1.0, float(np.max(np.abs(noise), initial=0.0)))
            consistent = np.all(np.abs(noise - noise[:, :1]) <= tol, axis=(1, 2))
            noise = noise[:, :1]
        else:
            consistent = np.ones(noise.shape[0], dtype=bool)
        s = self.noise_scale
        if self.noise == "laplace":
            value = -np.sum(np.abs(noise), axis=(1, 2)) / s
        else:
            value = -np.sum(noise**2, axis=(1, 2)) / (2.0 * s * s)
        return np.where(consistent, value, -np.inf)

    def describe(self) -> str:
        """One line for reports."""
        lo, hi = self.box
        noise = f"{'one shared ' if self.shared_noise else ''}{self.noise} noise"
        return (
            f"{self.name}: clip states to [{lo:g}, {hi:g}] on {self.max_length}×{self.hidden}"
            f" coordinates + {noise} (scale {self.noise_scale:.4g}, sensitivity"
            f" {self.sensitivity:.4g}, true {self.true_sensitivity:.4g}) → "
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
    clip: float | tuple[float, float] = 0.1,
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


def dp_bart_privfill(
    model: Any,
    epsilon: float,
    *,
    delta: float = 1e-5,
    noise: str = "analytic_gaussian",
    max_length: int = 512,
    num_beams: int = 1,
) -> BartRewriter:
    """The ``DPBart`` of PyPI ``privfill`` 0.1.0 and GitHub ``sjmeis/DPMLM`` ``LLMDP.py``.

    As released (facts F2.12-F2.16, F3.22 of the audit's notes): states clipped into the
    asymmetric box ``[−0.2, 0.1]`` (width 0.3), noise calibrated with sensitivity
    ``0.2·d`` (Laplace) or ``0.2·√d`` (Gaussian) for ONE position of width ``d``, one
    noise vector shared by all positions, no padding (a single document keeps its own
    token length).  Default noise: analytic Gaussian at δ = 1e-5.
    """
    check_epsilon(epsilon)
    hidden = int(getattr(model.model.config, "d_model", None) or model.model.config.hidden_size)
    per_position = hidden if noise == "laplace" else math.sqrt(hidden)
    return BartRewriter(
        name="dp-bart (privfill)",
        model=model,
        claim=TextClaim(
            epsilon, Unit.DOCUMENT, delta, source="privfill 0.1.0 DPBart (per document)"
        ),
        clip=(-0.2, 0.1),
        noise=noise,
        max_length=max_length,
        claimed_sensitivity=0.2 * per_position,
        pad=False,
        num_beams=num_beams,
        shared_noise=True,
    )
