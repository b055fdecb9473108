"""Tiny random models written as Hugging Face checkpoint directories.

Released rewriting packages (``dpmlm``, ``privfill``) take a model *name* and
call ``from_pretrained`` on it themselves; they cannot be handed a model
object.  To run their own code offline, the audit writes a tiny random model
into a directory and passes its path.

* ``masked`` and ``causal``: the word-level models of :mod:`.tiny`, saved with
  their fast tokenizer (``AutoTokenizer`` loads it).
* ``seq2seq``: a BART whose tokenizer is a *byte-level BPE with no merges*
  (``vocab.json`` of the 256 byte symbols after the five special tokens, an
  empty ``merges.txt``), because ``privfill`` loads it with the slow
  ``BartTokenizer``, which reads exactly those two files.  Text is tokenised
  character by character, as GPT-2/BART's byte-level BPE would be before any
  merge.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from dpaudit.errors import InvalidArgumentError
from dpaudit.text.models.loading import KINDS, require_lm
from dpaudit.text.models.tiny import SPECIAL_TOKENS, _config, tiny_model


def _byte_symbols() -> list[str]:
    """GPT-2's printable stand-in for each byte, in byte order (Radford et al. 2019, code)."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1)]
    printable += list(range(ord("®"), ord("ÿ") + 1))
    symbols: dict[int, str] = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in symbols:
            symbols[b] = chr(256 + extra)
            extra += 1
    return [symbols[b] for b in range(256)]


def _save_byte_bart(path: Path, seed: int) -> None:
    transformers = require_lm("transformers", "tiny checkpoints")
    torch = require_lm("torch", "tiny checkpoints")
    vocab = {token: i for i, token in enumerate([*SPECIAL_TOKENS, *_byte_symbols()])}
    (path / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (path / "merges.txt").write_text("#version: 0.2\n", encoding="utf-8")
    tokenizer = transformers.BartTokenizer(
        str(path / "vocab.json"), str(path / "merges.txt"), model_max_length=256
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        _, model = _config("seq2seq", len(vocab))
    generation = model.generation_config
    generation.pad_token_id, generation.bos_token_id = 0, 2
    generation.eos_token_id = 3
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)


def save_tiny_checkpoint(
    kind: str, path: str | os.PathLike[str], seed: int = 0, vocab: Sequence[str] | None = None
) -> Path:
    """Write a tiny random model of ``kind`` into directory ``path`` (created); return it.

    ``kind`` is ``"causal"``, ``"masked"`` or ``"seq2seq"`` (byte-level BART, see the
    module doc).  The weights depend only on ``seed``; ``vocab`` replaces the word
    list of the word-level kinds (the seq2seq vocabulary is always the 256 bytes).
    """
    if kind not in KINDS:
        raise InvalidArgumentError("kind", kind, f"one of {', '.join(KINDS)}")
    target = Path(path)
    target.mkdir(parents=True, exist_ok=True)
    if kind == "seq2seq":
        _save_byte_bart(target, seed)
        return target
    loaded = tiny_model(kind, seed=seed, vocab=vocab)
    loaded.model.save_pretrained(target)
    loaded.tokenizer.save_pretrained(target)
    return target
