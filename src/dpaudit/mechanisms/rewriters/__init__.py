"""Text rewriters built on language models, as published, with the decoding their code uses.

Their claims (ε per token, word or document) are :class:`dpaudit.claims.TextClaim`.

* :mod:`~dpaudit.mechanisms.rewriters.decoding`: logits → per-token distribution.
* :mod:`~dpaudit.mechanisms.rewriters.causal`: DP-Prompt and DP-Paraphrase.
* :mod:`~dpaudit.mechanisms.rewriters.masked`: DP-MLM (one masked-LM draw per word).
* :mod:`~dpaudit.mechanisms.rewriters.dpmlm_released`: DP-MLM as the ``dpmlm`` package runs it.
* :mod:`~dpaudit.mechanisms.rewriters.bart`: DP-BART-CLV (noisy clipped encoder states).
"""

from dpaudit.mechanisms.rewriters.bart import BartRewriter, dp_bart, dp_bart_privfill
from dpaudit.mechanisms.rewriters.causal import CausalRewriter, dp_paraphrase, dp_prompt
from dpaudit.mechanisms.rewriters.decoding import Decoding, exponential_decoding, process_logits
from dpaudit.mechanisms.rewriters.dpmlm_released import ReleasedDPMLM
from dpaudit.mechanisms.rewriters.masked import MaskedRewriter, dp_mlm

__all__ = [
    "BartRewriter",
    "CausalRewriter",
    "Decoding",
    "MaskedRewriter",
    "ReleasedDPMLM",
    "dp_bart",
    "dp_bart_privfill",
    "dp_mlm",
    "dp_paraphrase",
    "dp_prompt",
    "exponential_decoding",
    "process_logits",
]
