"""DP-Fusion (``dp-fusion-lib`` 0.1.0) as released: token-level DP inference, audited.

Paper: Thareja, Nakov, Vepakomma & Lukas, "DP-Fusion: Token-Level Differentially
Private Inference for Large Language Models", arXiv:2507.04531 (2025).  At each step
(package ``dp_fusion_groups_incremental``):

* the model is run on the private context and on a public (redacted) context;
* ``find_lambda`` bisects ``λ ∈ [0, 1]`` so that the symmetric Rényi divergence
  ``max(D_α(p_λ ‖ p_pub), D_α(p_pub ‖ p_λ)) ≤ α·β`` for ``p_λ = λ p_priv + (1 − λ) p_pub``
  (the package computes it in float32, probabilities clamped below at ``1e-10``);
* the token is ``torch.multinomial(p_λ, 1)`` from torch's global generator (never seeded
  by the package).

Claim (package ``compute_epsilon_single_group``, one private group): each step costs
``4β`` of Rényi DP at order ``α``; ``T`` steps give ``ε = 4βT + ln(1/δ)/(α − 1)`` per
document, the neighbours being documents that share the public context (README
"Theoretical ε").  The package's own ``divergences`` list skips the first step, so its
``T`` is one less than the tokens drawn.

Running it: :class:`DPFusionRewriter` hands the caller's model and tokenizer to the
package's own ``DPFusion`` (its API takes them) and marks the whole document private
(``add_message(..., is_private=True)``), so the public context is the package's own
redaction of it to ``"_"``; the tagger (an external web API) is not used.  No shim.

What the audit sees: black box, the released text; against a per-document ``ε`` that
``ln(1/δ)/(α − 1)`` alone makes ≈ 11.5 at ``δ = 1e-5, α = 2``, a few hundred rewrites
are *inconclusive*.  The instrumented call (:meth:`DPFusionRewriter.exact_step_laws`)
reads the vector each ``torch.multinomial`` is handed, on ``x`` and (its tokens forced)
on ``x'``: the exact per-step ``D_α`` between the two documents' laws, against ``4β``.
The package pads the shorter context on the right with the pad token and passes no
attention mask, so the public law is computed after as many pad tokens as the private
document is longer: it depends on the private document's token count.
"""

from __future__ import annotations

import contextlib
import io
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from dpaudit.adapters._sequence_laws import StepLaws
from dpaudit.adapters._support import require
from dpaudit.claims import TextClaim
from dpaudit.errors import InvalidArgumentError, MechanismError
from dpaudit.validation import check_delta

PURPOSE = "the DP-Fusion adapter"
SOURCE = "Thareja et al., DP-Fusion, arXiv:2507.04531; dp-fusion-lib 0.1.0 epsilon.py"
#: The README's quick-start context around the private document.
SYSTEM = (
    "You're job is to re-write documents for privacy. You will be provided a document out a "
    "paraphrase that preserves privacy and doesn't leak personally identifiable information. "
    "Just output the paraphrase only, nothing else."
)
INSTRUCTION = "I just passed the document to you, you can paraphrase it for privacy."
ASSISTANT = "Here is the paraphrased document:"


def import_dp_fusion() -> ModuleType:
    """``dp_fusion_lib`` (raises OptionalDependencyError naming the extra when missing)."""
    return require("dp_fusion_lib", "text-packages", PURPOSE)


def theoretical_epsilon(alpha: float, beta: float, delta: float, tokens: int) -> float:
    """The package's worst-case ``ε`` for ``tokens`` steps (``compute_epsilon_single_group``)."""
    library = import_dp_fusion()
    result = library.compute_epsilon_single_group([0.0] * tokens, alpha, delta, beta=beta)
    return float(result["theoretical"])


class _FusionTorch:
    """``torch`` for ``dp_fusion_lib.utils``: torch itself, but ``multinomial`` records/forces."""

    def __init__(self, torch: Any, rng: np.random.Generator, forced: Sequence[int] | None):
        self._torch = torch
        self.rng = rng
        self.forced = forced
        self.laws: list[np.ndarray] = []
        self.tokens: list[int] = []

    def multinomial(self, probs: Any, num_samples: int, *args: Any, **kwargs: Any) -> Any:
        law = probs.detach().double().cpu().numpy()
        if num_samples != 1 or law.ndim != 1 or args or kwargs:
            raise MechanismError("dp-fusion-lib drew in a way this recorder does not read")
        step = len(self.laws)
        self.laws.append(law)
        if self.forced is not None:
            token = int(self.forced[step])
        else:  # the package's own draw from the law just recorded (torch seeded by ``rng``)
            token = int(self._torch.multinomial(probs, 1).reshape(-1)[0])
        self.tokens.append(token)
        return self._torch.tensor([token])

    def __getattr__(self, name: str) -> Any:
        return getattr(self._torch, name)


@contextlib.contextmanager
def _recording(torch: Any, recorder: _FusionTorch) -> Iterator[None]:
    utils = require("dp_fusion_lib.utils", "text-packages", PURPOSE)
    saved = utils.torch
    utils.torch = recorder
    try:
        yield
    finally:
        utils.torch = saved


@dataclass
class DPFusionRewriter:
    """``DPFusion.generate`` on the README's context as ``f(text, n, rng) -> n texts``.

    Attributes:
        model, tokenizer: a causal LM with a chat template and its tokenizer.
        alpha, beta: the package's Rényi order and per-step β (internal bound ``α·β``).
        max_new_tokens: the package's ``max_new_tokens`` (the claim's ``T``).
        delta: the ``δ`` of the claimed ``(ε, δ)``.
        temperature: the package's ``temperature``.
    """

    model: Any
    tokenizer: Any
    alpha: float = 2.0
    beta: float = 0.01
    max_new_tokens: int = 8
    delta: float = 1e-5
    temperature: float = 1.0

    def __post_init__(self) -> None:
        check_delta(self.delta)
        if not (self.alpha > 1.0 and math.isfinite(self.alpha)):
            raise InvalidArgumentError("alpha", self.alpha, "a finite Rényi order > 1")
        if not (self.beta >= 0.0 and math.isfinite(self.beta)):
            raise InvalidArgumentError("beta", self.beta, "a finite β >= 0")

    @property
    def epsilon(self) -> float:
        """The package's theoretical ``ε`` for ``max_new_tokens`` steps."""
        return theoretical_epsilon(self.alpha, self.beta, self.delta, self.max_new_tokens)

    @property
    def claim(self) -> TextClaim:
        """``(ε, δ)`` per document, ``ε`` the package's theoretical bound."""
        return TextClaim(self.epsilon, unit="document", delta=self.delta, source=SOURCE)

    def describe(self) -> str:
        """A one-line description for reports."""
        return (
            f"dp-fusion-lib 0.1.0 DPFusion.generate(α={self.alpha:g}, β={self.beta:g}, "
            f"max_new_tokens={self.max_new_tokens}, τ={self.temperature:g}), document private"
        )

    def generate_once(self, text: str) -> dict[str, Any]:
        """One call of the package's ``generate`` (its own output dict)."""
        library = import_dp_fusion()
        fusion = library.DPFusion(model=self.model, tokenizer=self.tokenizer)
        fusion.add_message("system", SYSTEM, is_private=False)
        fusion.add_message("user", text, is_private=True)
        fusion.add_message("user", INSTRUCTION, is_private=False)
        fusion.add_message("assistant", ASSISTANT, is_private=False)
        with contextlib.redirect_stdout(io.StringIO()):
            return dict(
                fusion.generate(
                    alpha=self.alpha,
                    beta=self.beta,
                    temperature=self.temperature,
                    max_new_tokens=self.max_new_tokens,
                )
            )

    def __call__(self, text: str, n: int, rng: np.random.Generator) -> list[str]:
        """``n`` generations, torch's global generator seeded from ``rng`` and restored."""
        if not isinstance(text, str):
            raise InvalidArgumentError("text", type(text).__name__, "a str")
        torch = require("torch", "text-packages", PURPOSE)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(rng.integers(2**62)))
            return [str(self.generate_once(text)["text"]) for _ in range(n)]

    def recorded(
        self, text: str, rng: np.random.Generator, forced: Sequence[int] | None = None
    ) -> tuple[_FusionTorch, dict[str, Any]]:
        """One generation with every law recorded: the package's own draws, or ``forced``."""
        torch = require("torch", "text-packages", PURPOSE)
        recorder = _FusionTorch(torch, rng, forced)
        with _recording(torch, recorder), torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(rng.integers(2**62)))
            out = self.generate_once(text)
        return recorder, out

    def exact_step_laws(self, x: str, x_prime: str, rng: np.random.Generator) -> StepLaws:
        """The laws ``torch.multinomial`` gets on ``x`` (drawn) and ``x'`` (``x``'s tokens)."""
        on_x, _ = self.recorded(x, rng)
        on_x_prime, _ = self.recorded(x_prime, rng, on_x.tokens)
        if len(on_x_prime.laws) != len(on_x.laws):
            raise MechanismError("dp-fusion-lib stopped at a different step with the same tokens")
        return StepLaws(on_x.tokens, on_x.laws, on_x_prime.laws)
