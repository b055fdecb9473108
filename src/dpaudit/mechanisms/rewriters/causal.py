"""Rewriters that paraphrase with a causal LM, one token at a time (DP-Prompt, DP-Paraphrase).

DP-Prompt (Utpala, Hooker & Chen, Findings of EMNLP 2023, §3): prompt an
instruction-tuned LM to paraphrase the document and draw every generated token
from the softmax of its logits clipped into ``[b_lo, b_hi]`` at temperature
``T = 2(b_hi − b_lo)/ε``: the exponential mechanism with utility range
``b_hi − b_lo``, so each token is ε-DP and a paraphrase of ``n`` tokens is
``n·ε``-DP by sequential composition.  DP-Paraphrase (Mattern, Weggenmann &
Kerschbaum, Findings of NAACL 2022, §3, eq. 2) is the same per-token mechanism
on a language model prompted (there, fine-tuned) to paraphrase.

A :class:`CausalRewriter` samples with the model's key-value cache, a batch of
``n`` rewrites of one document at a time, and scores any given rewrites
exactly by teacher forcing (:meth:`CausalRewriter.token_log_probs`), both from
the same :class:`~dpaudit.mechanisms.rewriters.decoding.Decoding`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.claims import TextClaim, Unit
from dpaudit.errors import InvalidArgumentError, MechanismError
from dpaudit.mechanisms.rewriters.decoding import Decoding, exponential_decoding, process_logits
from dpaudit.mechanisms.rewriters.lm import (
    cache_keyword,
    causal_logits,
    model_device,
    returned_cache,
    sample_rows,
    torch_module,
)
from dpaudit.validation import check_epsilon

# DP-Prompt's zero-shot instruction (Utpala et al. 2023, §4).
DP_PROMPT_TEMPLATE = "Document : {document}\nParaphrase of the document :"
# DP-Paraphrase fine-tunes GPT-2 on "{x} >>><<< {paraphrase}" pairs (Mattern et al. 2022, §4);
# with no fine-tuned model on PyPI the same separator prompts a plain LM.
DP_PARAPHRASE_TEMPLATE = "{document} >>><<<"


@dataclass(frozen=True)
class CausalRewriter:
    """A document-to-document mechanism drawing each token from ``decoding`` of a causal LM.

    Attributes:
        name: registry-style name (``dp-prompt``, ``dp-paraphrase``, ...).
        model: an object with ``.model`` (a Hugging Face causal LM) and ``.tokenizer``.
        template: the prompt, with ``{document}`` where the input goes.
        decoding: how logits become the per-token distribution.
        claim: what the rewriter's paper claims for it.
        chat: wrap the prompt in the tokenizer's chat template (instruction-tuned models).
        batch_size: rewrites generated per forward pass.
        cap_from_input: the code caps a rewrite at as many tokens as its *prompt* has
            (``max_new_tokens=len(input_ids[0])``, as privfill and LLMDP.py do) instead
            of ``decoding.max_new_tokens``: the longest possible output then depends on
            the input, and a rewrite longer than the other input's cap has probability 0.
    """

    name: str
    model: Any
    template: str
    decoding: Decoding
    claim: TextClaim
    chat: bool = False
    batch_size: int = 32
    cap_from_input: bool = False
    eos_ids: tuple[int, ...] = field(default=())

    def __post_init__(self) -> None:
        if "{document}" not in self.template:
            raise InvalidArgumentError("template", self.template, "a string containing {document}")
        if not self.eos_ids:
            eos = self.model.tokenizer.eos_token_id
            ids = eos if isinstance(eos, list) else [eos]
            object.__setattr__(self, "eos_ids", tuple(int(i) for i in ids if i is not None))

    @property
    def tokenizer(self) -> Any:
        """The model's tokenizer."""
        return self.model.tokenizer

    def prompt_ids(self, document: str) -> np.ndarray:
        """Token ids of the prompt that asks for a rewrite of ``document``."""
        if not isinstance(document, str):
            raise InvalidArgumentError("document", type(document).__name__, "a str")
        text = self.template.format(document=document)
        tok = self.tokenizer
        if self.chat and getattr(tok, "chat_template", None):
            ids = tok.apply_chat_template(
                [{"role": "user", "content": text}], add_generation_prompt=True, tokenize=True
            )
            ids = ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids
        else:
            ids = tok(text, add_special_tokens=True)["input_ids"]
        return np.asarray(ids, dtype=np.int64)

    def sample_ids(self, document: str, n: int, rng: np.random.Generator) -> list[np.ndarray]:
        """``n`` independent rewrites of ``document`` as token ids (EOS kept when drawn)."""
        if n < 1:
            raise InvalidArgumentError("n", n, "an integer >= 1")
        prompt = self.prompt_ids(document)
        cap = self.length_cap(document)
        out: list[np.ndarray] = []
        for start in range(0, n, self.batch_size):
            out.extend(self._generate(prompt, min(self.batch_size, n - start), rng, cap))
        return out

    def length_cap(self, document: str) -> int:
        """The most tokens a rewrite of ``document`` can have."""
        if self.cap_from_input:
            return int(self.prompt_ids(document).size)
        return self.decoding.max_new_tokens

    def sample(self, document: str, n: int, rng: np.random.Generator) -> list[str]:
        """``n`` rewrites of ``document`` as text: the black-box view of the mechanism."""
        return [self.decode(ids) for ids in self.sample_ids(document, n, rng)]

    def decode(self, ids: np.ndarray) -> str:
        """The text of generated ids (special tokens dropped)."""
        return str(self.tokenizer.decode(ids.tolist(), skip_special_tokens=True)).strip()

    def encode_output(self, text: str, document: str | None = None) -> np.ndarray:
        """Token ids of an output text as the model would score it (its canonical tokenisation).

        EOS is appended unless the text already fills ``document``'s length cap.
        """
        ids = list(self.tokenizer(text, add_special_tokens=False)["input_ids"])
        cap = self.length_cap(document) if document is not None else self.decoding.max_new_tokens
        if len(ids) < cap:
            ids.append(self.eos_ids[0])
        return np.asarray(ids, dtype=np.int64)

    def declared_log_probs(
        self, document: str, outputs: list[np.ndarray]
    ) -> Iterator[tuple[int, np.ndarray]]:
        """``(i, L)`` with ``L[t]`` the declared log-distribution of token ``t`` of output ``i``.

        Teacher forcing under :attr:`decoding`: the whole distribution each token
        was drawn from, for the fidelity check and the exact loss.
        """
        prompt = self.prompt_ids(document)
        cap = self.length_cap(document)
        for i, logits in causal_logits(self.model.model, prompt, list(outputs)):
            lp = process_logits(logits, self.decoding)
            lp[cap:] = -np.inf  # beyond the cap no token can be generated
            yield i, lp

    def token_log_probs(self, document: str, outputs: list[np.ndarray]) -> list[np.ndarray]:
        """Exact ``ln p(y_t | document, y_<t)`` of every token of every output (teacher forcing)."""
        result: list[np.ndarray] = [np.zeros(0)] * len(outputs)
        for i, lp in self.declared_log_probs(document, outputs):
            result[i] = lp[np.arange(len(outputs[i])), outputs[i]]
        return result

    def _generate(
        self, prompt: np.ndarray, rows: int, rng: np.random.Generator, cap: int
    ) -> list[np.ndarray]:
        torch = torch_module()
        model = self.model.model
        key = cache_keyword(model)
        device = model_device(model)
        ids = torch.from_numpy(np.tile(prompt, (rows, 1))).to(device)
        tokens = np.zeros((rows, cap), dtype=np.int64)
        length = np.full(rows, cap)
        done = np.zeros(rows, dtype=bool)
        eos = np.asarray(self.eos_ids)
        with torch.inference_mode():
            out = model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=True)
            for t in range(cap):
                logits = out.logits[:, -1].float().cpu().numpy()
                if not np.all(np.isfinite(logits)):
                    raise MechanismError(f"{self.name}: the model returned non-finite logits")
                drawn = sample_rows(process_logits(logits, self.decoding), rng)
                tokens[:, t] = drawn
                ended = ~done & np.isin(drawn, eos)
                length[ended] = t + 1
                done |= ended
                if done.all():
                    break
                step = torch.from_numpy(drawn[:, None]).to(device)
                mask = torch.ones((rows, prompt.size + t + 1), dtype=torch.int64, device=device)
                out = model(
                    input_ids=step,
                    attention_mask=mask,
                    use_cache=True,
                    **{key: returned_cache(out)},
                )
        return [tokens[i, : length[i]].copy() for i in range(rows)]

    def tokens_released(self, output: np.ndarray) -> int:
        """How many ε-units an output paid for: its generated tokens."""
        return len(output)

    def describe(self) -> str:
        """One line for reports."""
        decoding = self.decoding.describe()
        if self.cap_from_input:
            decoding = decoding.split(" (≤ ")[0] + " (≤ as many tokens as the prompt)"
        return f"{self.name}: {decoding}; claim {self.claim.describe()}"


def dp_prompt(
    model: Any,
    epsilon: float,
    *,
    clip: tuple[float, float] = (-5.0, 5.0),
    max_new_tokens: int = 32,
    template: str = DP_PROMPT_TEMPLATE,
    chat: bool = True,
) -> CausalRewriter:
    """DP-Prompt at ``epsilon`` per token (Utpala et al. 2023, §3).

    ``clip`` is ``(b_lo, b_hi)``; the temperature is ``2(b_hi − b_lo)/ε``.
    """
    return CausalRewriter(
        name="dp-prompt",
        model=model,
        template=template,
        decoding=exponential_decoding(epsilon, clip, max_new_tokens=max_new_tokens),
        claim=TextClaim(epsilon, Unit.TOKEN, source="Utpala et al. 2023, §3 (per token)"),
        chat=chat,
    )


def dp_paraphrase(
    model: Any,
    epsilon: float,
    *,
    clip: tuple[float, float] = (-5.0, 5.0),
    max_new_tokens: int = 32,
    template: str = DP_PARAPHRASE_TEMPLATE,
) -> CausalRewriter:
    """DP-Paraphrase at ``epsilon`` per token (Mattern et al. 2022, §3, eq. 2)."""
    return CausalRewriter(
        name="dp-paraphrase",
        model=model,
        template=template,
        decoding=exponential_decoding(epsilon, clip, max_new_tokens=max_new_tokens),
        claim=TextClaim(epsilon, Unit.TOKEN, source="Mattern et al. 2022, §3, eq. 2 (per token)"),
        chat=False,
    )


def dp_decoding(
    model: Any,
    epsilon: float,
    *,
    max_new_tokens: int = 32,
    template: str = DP_PROMPT_TEMPLATE,
    chat: bool = True,
) -> CausalRewriter:
    """DP-Decoding at ``epsilon`` per token (Majmudar et al. 2022, §3): each token is drawn
    from ``λ·q + (1 − λ)/V``, the model's softmax ``q`` mixed with the uniform distribution.

    The largest ratio of two such distributions is ``(1 + (V − 1)λ)/(1 − λ)``, so ``λ`` is
    chosen as ``(e^ε − 1)/(e^ε + V − 1)`` for the model's vocabulary size ``V``.  Prompted
    with DP-Prompt's instruction, it is a rewriter.
    """
    check_epsilon(epsilon)
    vocab = int(model.model.config.vocab_size)
    lam = math.expm1(epsilon) / (math.exp(epsilon) + vocab - 1.0)
    return CausalRewriter(
        name="dp-decoding",
        model=model,
        template=template,
        decoding=Decoding(mix=lam, max_new_tokens=max_new_tokens),
        claim=TextClaim(epsilon, Unit.TOKEN, source="Majmudar et al. 2022, §3 (per token)"),
        chat=chat,
    )
