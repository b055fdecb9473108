"""Tiny random language models with a word-level tokenizer, built offline in code.

For tests and smoke runs of the LM-based rewriters: each kind (causal, masked,
seq2seq) has 2 layers of width 32 over a fixed ~200-word English vocabulary,
so a model builds in well under a second and never needs a download.  The
weights are random (deterministic for a seed): outputs are gibberish, but the
shapes, special tokens, ``generate``, masking and padding all behave as for
a real model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dpaudit.errors import InvalidArgumentError
from dpaudit.text.models.loading import KINDS, LoadedModel, require_lm

PAD, UNK, BOS, EOS, MASK = "<pad>", "<unk>", "<s>", "</s>", "<mask>"
#: Special tokens, ids 0-4 in this order.
SPECIAL_TOKENS = (PAD, UNK, BOS, EOS, MASK)

# Kept as one block of text (split below) so the list reads like prose.
_WORD_TEXT = """
    the a an and or but if then so because of to in on at by for with from about
    as into over under after before between through during without again
    i you he she it we they me him her us them my your his its our their this that
    these those who what which where when why how all any some no not only very
    is are was were be been being have has had do does did will would can could
    should may might must shall go went gone come came make made take took see saw
    know knew think thought say said get got give gave find found tell told ask
    work call try feel leave put mean keep let begin seem help show hear play run
    move live believe bring write sit stand lose pay meet
    man woman child people friend family doctor patient teacher student city
    country home house room school hospital office street car day night year week
    time morning evening world life hand eye head name place thing way part
    good bad new old great small big long little young right high different
    large next early important few public same able last sick happy sad
    one two three four five many much more most other such own
    here there now today tomorrow yesterday always never often also just well
    . , ? ! '
"""
#: The default vocabulary: common English words and punctuation (lower case).
WORDS: tuple[str, ...] = tuple(_WORD_TEXT.split())


def _check_words(words: Sequence[str]) -> list[str]:
    words = list(words)
    if not words or len(set(words)) != len(words) or set(words) & set(SPECIAL_TOKENS):
        raise InvalidArgumentError(
            "vocab", words[:5], "a non-empty sequence of distinct words, none a special token"
        )
    if any(not w or any(c.isspace() for c in w) or w != w.lower() for w in words):
        raise InvalidArgumentError("vocab", words[:5], "lower-case words without whitespace")
    return words


def word_tokenizer(vocab: Sequence[str] | None = None) -> Any:
    """A ``PreTrainedTokenizerFast`` over ``vocab`` (default :data:`WORDS`), built offline.

    Word-level: lower-cases, splits on whitespace and punctuation, maps unknown
    words to ``<unk>``; special tokens ``<pad> <unk> <s> </s> <mask>`` have ids 0-4.
    No template adds special tokens, so ``decode(encode(text))`` gives back
    lower-cased, space-separated text.
    """
    tokenizers = require_lm("tokenizers", "the tiny test models")
    transformers = require_lm("transformers", "the tiny test models")
    words = _check_words(WORDS if vocab is None else vocab)
    ids = {token: i for i, token in enumerate([*SPECIAL_TOKENS, *words])}
    backend = tokenizers.Tokenizer(tokenizers.models.WordLevel(ids, unk_token=UNK))
    backend.normalizer = tokenizers.normalizers.Lowercase()
    backend.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=backend,
        pad_token=PAD,
        unk_token=UNK,
        bos_token=BOS,
        eos_token=EOS,
        mask_token=MASK,
        model_max_length=256,
        # token_type_ids would be passed to models (Llama, BART) that take none.
        model_input_names=["input_ids", "attention_mask"],
    )


def _config(kind: str, vocab_size: int) -> tuple[str, Any]:
    """(architecture name, model class instance builder) for a 2-layer width-32 model."""
    transformers = require_lm("transformers", "the tiny test models")
    ids = {"pad_token_id": 0, "bos_token_id": 2, "eos_token_id": 3}
    width = {"num_attention_heads": 4, "max_position_embeddings": 256}
    if kind == "causal":
        config = transformers.LlamaConfig(
            vocab_size=vocab_size,
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_key_value_heads=2,
            tie_word_embeddings=True,
            **ids,
            **width,
        )
        return "llama", transformers.LlamaForCausalLM(config)
    if kind == "masked":
        config = transformers.BertConfig(
            vocab_size=vocab_size,
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            **ids,
            **width,
        )
        return "bert", transformers.BertForMaskedLM(config)
    config = transformers.BartConfig(
        vocab_size=vocab_size,
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=256,
        decoder_start_token_id=ids["bos_token_id"],
        forced_eos_token_id=None,
        **ids,
    )
    return "bart", transformers.BartForConditionalGeneration(config)


def tiny_model(kind: str, seed: int = 0, vocab: Sequence[str] | None = None) -> LoadedModel:
    """A tiny random model of ``kind`` (``"causal"``, ``"masked"``, ``"seq2seq"``).

    Causal: Llama (the SmolLM2 architecture); masked: BERT; seq2seq: BART; each
    2 layers, hidden size 32, 4 heads, float32, in eval mode, with the word-level
    tokenizer of :func:`word_tokenizer`.  The weights depend only on ``seed``:
    they are drawn inside a fork of torch's RNG state, so the caller's global
    torch RNG is left as it was.
    """
    if kind not in KINDS:
        raise InvalidArgumentError("kind", kind, f"one of {', '.join(KINDS)}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InvalidArgumentError("seed", seed, "a non-negative integer")
    torch = require_lm("torch", "the tiny test models")
    tokenizer = word_tokenizer(vocab)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        arch, model = _config(kind, len(tokenizer))
    if model.can_generate():
        generation = model.generation_config
        generation.pad_token_id = tokenizer.pad_token_id
        generation.eos_token_id = tokenizer.eos_token_id
        generation.bos_token_id = tokenizer.bos_token_id
    model.eval()
    return LoadedModel(model, tokenizer, kind, f"tiny random {arch} (seed {seed})")
