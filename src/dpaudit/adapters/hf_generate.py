"""Released DP-Prompt-style code paths, run as their authors call Hugging Face ``generate``.

The papers describe a clipped exponential mechanism; the released code calls
``model.generate(...)`` with its own keyword arguments, a clipping
``logits_processor`` (or none) and a length cap, and HF fills in whatever the
call leaves out (``top_k = 50`` when sampling, greedy decoding when
``do_sample`` is not set).  A :class:`GenerateCall` records one such call as
written in the authors' code (facts from the repositories, with file and
line, in each constant's comment); :class:`ReleasedRewriter` runs it through
the real ``generate`` (the code under audit) and derives, by HF's own rules,
the decoding that code path actually uses (:func:`effective_decoding`), which
the white-box audit then checks against the real samples.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from dpaudit.claims import TextClaim, Unit
from dpaudit.mechanisms.rewriters.causal import CausalRewriter
from dpaudit.mechanisms.rewriters.decoding import Decoding
from dpaudit.mechanisms.rewriters.lm import model_device, torch_module

#: HF's defaults for what a ``generate`` call leaves unset (transformers
#: ``GenerationConfig._get_default_generation_params``; 4.x sets the same in ``__init__``).
HF_DEFAULTS = {"do_sample": False, "top_k": 50, "top_p": 1.0, "temperature": 1.0}


@dataclass(frozen=True)
class GenerateCall:
    """One released ``generate`` call: prompt, clip bounds, keyword arguments, length cap.

    Attributes:
        name: short name (``llmdp-dp-prompt``, ...).
        source: repository, file and line the call was read from.
        template: the prompt, ``{document}`` where the input goes.
        clip: bounds of the clipping ``logits_processor`` (``None``: the code has none).
        sensitivity_from_clip: the code sets ``T = 2·(b_hi − b_lo)/ε``; else ``temperature``
            is taken as given (DP-Prompt's released script passes temperatures directly).
        kwargs: the keyword arguments the code passes (``do_sample``, ``top_k``, ...).
        cap_from_input: ``max_new_tokens`` is the prompt's own token count.
        max_new_tokens: the fixed cap otherwise.
        claim_source: where the ε claim is stated.
    """

    name: str
    source: str
    template: str
    clip: tuple[float, float] | None
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    sensitivity_from_clip: bool = True
    cap_from_input: bool = False
    max_new_tokens: int = 32
    claim_source: str = ""


#: sjmeis/DPMLM LLMDP.py l.39-70: DPPrompt on flan-t5 (here: any causal LM), clip
#: [-19.227, 7.483], T = 2Δ/ε, do_sample, top_k=0, top_p=1, max_new_tokens = prompt length.
LLMDP_DP_PROMPT = GenerateCall(
    name="llmdp-dp-prompt",
    source="github.com/sjmeis/DPMLM LLMDP.py l.39-70 (HEAD 3ce9390)",
    template="Document : {document}\nParaphrase of the document :",
    clip=(-19.22705113016047, 7.48324937989716),
    kwargs={"do_sample": True, "top_k": 0, "top_p": 1.0},
    cap_from_input=True,
    claim_source="Utpala et al. 2023 (DP-Prompt), ε per token",
)
#: LLMDP.py l.86-112: DPParaphrase through pipeline("text-generation") with the clip
#: processor and a temperature, but neither do_sample nor top_k: HF's defaults decide.
LLMDP_DP_PARAPHRASE = GenerateCall(
    name="llmdp-dp-paraphrase",
    source="github.com/sjmeis/DPMLM LLMDP.py l.86-112 (HEAD 3ce9390)",
    template="{document} >>>>> ",
    clip=(-96.85249956065758, -8.747697966442914),
    kwargs={"do_sample": True},  # a GPT-2 checkpoint's task_specific_params turn sampling on
    cap_from_input=True,
    claim_source="Mattern et al. 2022 (DP-Paraphrase), ε per token",
)
#: privfill 0.1.0 mechanisms.py l.43-77: DPPrompt.privatize, clip [-95, 8], T = 206/ε.
PRIVFILL_DP_PROMPT = GenerateCall(
    name="privfill-dp-prompt",
    source="PyPI privfill 0.1.0, privfill/mechanisms.py l.43-77",
    template="Document : {document}\nParaphrase of the document :",
    clip=(-95.0, 8.0),
    kwargs={"do_sample": True, "top_k": 0, "top_p": 1.0},
    cap_from_input=True,
    claim_source="privfill documentation: DP-Prompt, ε per token",
)
#: SaitejaUtpala/dp_prompt opensource_paraphrase_generation.py l.26-55: no clipping at all;
#: temperatures passed directly; top_k=0, top_p=1, 150 new tokens.
DP_PROMPT_RELEASED = GenerateCall(
    name="dp-prompt-released",
    source="github.com/SaitejaUtpala/dp_prompt opensource_paraphrase_generation.py l.26-55",
    template="Review: {document}\nParaphrase of the review:",
    clip=None,
    kwargs={"do_sample": True, "top_k": 0, "top_p": 1.0},
    sensitivity_from_clip=False,
    max_new_tokens=150,
    claim_source="Utpala et al. 2023, §3: ε per token with clipped logits",
)
RELEASED_CALLS = {
    c.name: c
    for c in (LLMDP_DP_PROMPT, LLMDP_DP_PARAPHRASE, PRIVFILL_DP_PROMPT, DP_PROMPT_RELEASED)
}


def effective_decoding(call: GenerateCall, model: Any, temperature: float) -> Decoding:
    """The decoding ``call`` really uses on ``model``, by HF's rules for unset arguments.

    Order: the user's clip processor, then temperature, top-k, top-p (transformers'
    processor list in every version from 4.30 to 5.24).
    """
    config = getattr(model, "generation_config", None)
    merged = dict(HF_DEFAULTS)
    for key in HF_DEFAULTS:
        value = getattr(config, key, None) if config is not None else None
        if value is not None:
            merged[key] = value
    merged.update(call.kwargs)
    top_k = merged["top_k"]
    top_p = merged["top_p"]
    return Decoding(
        temperature=temperature,
        clip=call.clip,
        top_k=int(top_k) if top_k else None,  # 0 or None turns HF's TopK warper off
        top_p=float(top_p) if top_p is not None and top_p < 1.0 else None,
        greedy=not merged["do_sample"],
        max_new_tokens=call.max_new_tokens,
    )


def temperature_for(call: GenerateCall, epsilon: float) -> float:
    """The temperature the released code sets for ``epsilon`` (or takes as given)."""
    if call.sensitivity_from_clip and call.clip is not None:
        return 2.0 * (call.clip[1] - call.clip[0]) / epsilon
    return epsilon  # DP-Prompt's script: the "epsilon" axis is a temperature


@dataclass(frozen=True)
class ReleasedRewriter:
    """A released ``generate`` call on a model: ``sample`` runs HF's real sampler.

    ``declared`` is the :class:`CausalRewriter` of the *effective* decoding
    (what the white-box audit scores); ``claimed`` the one the paper describes
    (clipped exponential mechanism over the full vocabulary).
    """

    call: GenerateCall
    model: Any
    epsilon: float
    declared: CausalRewriter = field(init=False)
    claimed: CausalRewriter = field(init=False)

    def __post_init__(self) -> None:
        temperature = temperature_for(self.call, self.epsilon)
        decoding = effective_decoding(self.call, self.model.model, temperature)
        claim = TextClaim(self.epsilon, Unit.TOKEN, source=self.call.claim_source)
        declared = CausalRewriter(
            self.call.name, self.model, self.call.template, decoding, claim,
            cap_from_input=self.call.cap_from_input,
        )  # fmt: skip
        clip = self.call.clip or (-1.0, 1.0)
        paper = Decoding(temperature=temperature, clip=clip, max_new_tokens=decoding.max_new_tokens)
        object.__setattr__(self, "declared", declared)
        object.__setattr__(self, "claimed", replace(declared, decoding=paper))

    def sample(self, document: str, n: int, rng: np.random.Generator) -> list[str]:
        """``n`` rewrites by the released call (HF ``generate``, seeded from ``rng``)."""
        return [self.declared.decode(ids) for ids in self.sample_ids(document, n, rng)]

    def sample_ids(self, document: str, n: int, rng: np.random.Generator) -> list[np.ndarray]:
        """The token ids ``generate`` drew (through the first EOS), ``n`` rewrites."""
        torch = torch_module()
        from transformers import LogitsProcessorList

        prompt = self.declared.prompt_ids(document)
        cap = self.declared.length_cap(document)
        processors = LogitsProcessorList([_Clip(*self.call.clip)] if self.call.clip else [])
        kwargs = {**self.call.kwargs, "temperature": self.declared.decoding.temperature}
        eos = self.declared.eos_ids[0]
        out: list[np.ndarray] = []
        for start in range(0, n, 32):
            rows = min(32, n - start)
            torch.manual_seed(int(rng.integers(2**62)))
            ids = torch.from_numpy(np.tile(prompt, (rows, 1))).to(model_device(self.model.model))
            with torch.inference_mode():
                gen = self.model.model.generate(
                    input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=cap,
                    logits_processor=processors, pad_token_id=eos, **kwargs,
                )  # fmt: skip
            out.extend(_through_eos(g, prompt.size, eos) for g in gen.cpu().numpy())
        return out


def _through_eos(row: np.ndarray, start: int, eos: int) -> np.ndarray:
    new = row[start:]
    stop = np.flatnonzero(new == eos)
    return new[: stop[0] + 1].copy() if stop.size else new.copy()


class _Clip:
    """``torch.clamp(scores, lo, hi)``: the clip processor of LLMDP.py and privfill."""

    def __init__(self, lo: float, hi: float) -> None:
        self.lo, self.hi = lo, hi

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        return scores.clamp(self.lo, self.hi)
