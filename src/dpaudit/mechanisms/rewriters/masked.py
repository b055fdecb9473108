"""DP-MLM: replace every word by one token drawn from a masked LM (Meisenbacher et al. 2024).

DP-MLM (Meisenbacher, Chevli, Vladika & Matthes, Findings of ACL 2024, §3)
rewrites a document word by word.  For word ``i`` the masked LM reads the
original document followed by the document with word ``i`` replaced by one
mask token (the authors' ``CONCAT`` input, so the model sees the word it
replaces), and one token is drawn from the logits at the mask position with
the exponential mechanism over clipped logits: logits clipped into
``[b_lo, b_hi]``, temperature ``T = 2(b_hi − b_lo)/ε``, full vocabulary.  Each
word is ε-DP; a document of ``n`` words costs ``n·ε``.

Every word's distribution depends on the input document only, never on the
other replacements, so a rewrite is a tuple of ``n`` independent draws and its
exact log-probability is a sum of ``n`` look-ups in one ``(n, V)`` matrix per
document.  All ``n`` masked inputs go through the model in batches.

The released code returns *text*: token ``v`` becomes ``decode(v).strip()``, so
tokens whose text is the same (RoBERTa's ``Ġword`` and ``word``) are the same
output.  With ``merge_equal_text`` (the default) each such class is one
outcome whose probability is the class's total mass, represented by its
smallest id: the exact law of the text the code releases, and a
post-processing of the token draw, so the per-word bound ε still holds.

Not modelled (facts of the released ``dpmlm`` package, see the audit's notes):
stopwords and punctuation copied verbatim, capitalisation copied from the
input, ``nltk`` word splitting and the sliding window for long documents.
Words here are whitespace-separated and a document must fit the model.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.claims import Neighbours, TextClaim, Unit
from dpaudit.errors import InvalidArgumentError, MechanismError
from dpaudit.mechanisms.rewriters.decoding import Decoding, exponential_decoding, process_logits
from dpaudit.mechanisms.rewriters.lm import torch_module

# The clip bounds the released DP-MLM code uses for roberta-base (``dpmlm`` 1.3.0, core.py).
ROBERTA_BASE_CLIP = (-3.2093127, 16.304797887802124)


@dataclass(frozen=True)
class MaskedRewriter:
    """A word-by-word mechanism drawing each replacement from ``decoding`` of a masked LM.

    Attributes:
        name: registry-style name (``dp-mlm``).
        model: an object with ``.model`` (a Hugging Face masked LM) and ``.tokenizer``
            (with a mask token).
        decoding: how the mask position's logits become the replacement's distribution;
            ``max_new_tokens`` is the most words a document may have.
        claim: what the paper claims (ε per word).
        concat: feed the original document before the masked one (the authors' default).
        batch_size: masked inputs per forward pass.
        merge_equal_text: treat tokens with the same stripped text as one output.
        cached_documents: declared matrices kept for the most recent documents (an audit
            samples and scores the same two documents many times; the model must not change).
    """

    name: str
    model: Any
    decoding: Decoding
    claim: TextClaim
    concat: bool = True
    batch_size: int = 32
    merge_equal_text: bool = True
    cached_documents: int = 4
    _cache: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        # The memo travels empty: a copy (a Ray worker's, a checkpoint's fingerprint) is the
        # same rewriter whatever it has computed so far.
        return {**self.__dict__, "_cache": {}}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def __post_init__(self) -> None:
        if getattr(self.model.tokenizer, "mask_token_id", None) is None:
            raise InvalidArgumentError("model", "tokenizer without a mask token", "a masked LM")
        if self.batch_size < 1:
            raise InvalidArgumentError("batch_size", self.batch_size, "an integer >= 1")
        if self.cached_documents < 0:
            raise InvalidArgumentError("cached_documents", self.cached_documents, "an integer >= 0")

    @property
    def tokenizer(self) -> Any:
        """The model's tokenizer."""
        return self.model.tokenizer

    @property
    def vocabulary(self) -> int:
        """Size of the distribution sampled from: the LM head, not the tokenizer."""
        return int(self.model.model.config.vocab_size)

    @property
    def token_texts(self) -> list[str]:
        """The text each token id is released as: ``decode([v]).strip()``."""
        return self._classes()[1]

    def words(self, document: str) -> list[str]:
        """The words of ``document`` that are replaced, in order."""
        if not isinstance(document, str):
            raise InvalidArgumentError("document", type(document).__name__, "a str")
        words = document.split()
        if not words or len(words) > self.decoding.max_new_tokens:
            raise InvalidArgumentError(
                "document", document, f"1 to {self.decoding.max_new_tokens} words"
            )
        if self.tokenizer.mask_token in words:
            raise InvalidArgumentError("document", document, "text without the mask token")
        return words

    def masked_inputs(self, document: str) -> tuple[list[list[int]], list[int]]:
        """Token ids of the ``n`` masked inputs and the mask's position in each."""
        words = self.words(document)
        mask_id = int(self.tokenizer.mask_token_id)
        inputs, positions = [], []
        for i in range(len(words)):
            masked = " ".join([*words[:i], self.tokenizer.mask_token, *words[i + 1 :]])
            pair = (document, masked) if self.concat else (masked,)
            ids = [int(t) for t in self.tokenizer(*pair, add_special_tokens=True)["input_ids"]]
            where = [j for j, t in enumerate(ids) if t == mask_id]
            if len(where) != 1:
                raise MechanismError(f"{self.name}: word {i} gave {len(where)} mask tokens")
            inputs.append(ids)
            positions.append(where[0])
        return inputs, positions

    def mask_logits(self, document: str) -> np.ndarray:
        """``(n_words, V)`` float32 logits at the mask position of each masked input."""
        torch = torch_module()
        inputs, positions = self.masked_inputs(document)
        model = self.model.model
        pad = self.tokenizer.pad_token_id
        pad = 0 if pad is None else int(pad)
        out = np.zeros((len(inputs), self.vocabulary), dtype=np.float32)
        for start in range(0, len(inputs), self.batch_size):
            rows = range(start, min(len(inputs), start + self.batch_size))
            width = max(len(inputs[r]) for r in rows)
            ids = np.full((len(rows), width), pad, dtype=np.int64)
            mask = np.zeros_like(ids)
            for k, r in enumerate(rows):
                ids[k, : len(inputs[r])] = inputs[r]
                mask[k, : len(inputs[r])] = 1
            at = torch.as_tensor([positions[r] for r in rows])
            with torch.inference_mode():
                logits = _logits_at(model, torch.from_numpy(ids), torch.from_numpy(mask), at)
            out[start : start + len(rows)] = logits.float().numpy()
        if not np.all(np.isfinite(out)):
            raise MechanismError(f"{self.name}: the model returned non-finite logits")
        return out

    def declared_matrix(self, document: str) -> np.ndarray:
        """``(n_words, V)`` log-distribution of each word's replacement under :attr:`decoding`.

        Read-only; the last :attr:`cached_documents` documents' matrices are kept.
        """
        key = ("matrix", document)
        if key in self._cache:
            self._cache[key] = self._cache.pop(key)  # most recently used goes last
            return self._cache[key]
        log_probs = process_logits(self.mask_logits(document), self.decoding)
        if self.merge_equal_text:
            log_probs = _merge_classes(log_probs, self._classes()[0])
        log_probs.setflags(write=False)
        matrices = [k for k in self._cache if k[0] == "matrix"]
        for stale in matrices[: max(0, len(matrices) - self.cached_documents + 1)]:
            del self._cache[stale]
        if self.cached_documents > 0:
            self._cache[key] = log_probs
        return log_probs

    def sample_ids(self, document: str, n: int, rng: np.random.Generator) -> list[np.ndarray]:
        """``n`` independent rewrites of ``document``: one token id per word."""
        if n < 1:
            raise InvalidArgumentError("n", n, "an integer >= 1")
        return draw_rows(self.declared_matrix(document), n, rng)

    def sample(self, document: str, n: int, rng: np.random.Generator) -> list[str]:
        """``n`` rewrites of ``document`` as text: the black-box view of the mechanism."""
        return [self.decode(ids) for ids in self.sample_ids(document, n, rng)]

    def decode(self, ids: np.ndarray) -> str:
        """The rewrite's text: the stripped text of each replacement, joined by spaces."""
        texts = self._classes()[1]
        return " ".join(texts[int(i)] for i in ids)

    def encode_output(self, text: str, document: str | None = None) -> np.ndarray:
        """One token id per word of an output text (the smallest id with that text).

        The inverse of :meth:`decode`: words are separated by single spaces, so a
        replacement whose text is empty (a whitespace token) stays a word.
        """
        lookup = self._classes()[2]
        words = text.split(" ")
        missing = [w for w in words if w not in lookup]
        if missing:
            raise InvalidArgumentError("output", text, f"single-token words, not {missing}")
        return np.asarray([lookup[w] for w in words], dtype=np.int64)

    def declared_log_probs(
        self, document: str, outputs: list[np.ndarray]
    ) -> Iterator[tuple[int, np.ndarray]]:
        """``(i, L)`` with ``L[w]`` the declared log-distribution of word ``w``'s replacement.

        ``L`` is the same matrix for every output of ``document``: computed once per call.
        """
        matrix = self.declared_matrix(document)
        for i, y in enumerate(outputs):
            self._check_length(i, y, matrix.shape[0])
            yield i, matrix

    def token_log_probs(self, document: str, outputs: list[np.ndarray]) -> list[np.ndarray]:
        """Exact ``ln p(y_w | document)`` of every replacement of every output.

        An output whose word count differs from the document's has probability zero
        (the mechanism always releases one word per input word): all ``-inf``.
        """
        matrix = self.declared_matrix(document)
        rows = np.arange(matrix.shape[0])
        out = []
        for y in outputs:
            if len(y) != matrix.shape[0]:
                out.append(np.full(len(y), -np.inf))
            else:
                out.append(matrix[rows, np.asarray(y, dtype=np.int64)])
        return out

    def length_cap(self, document: str) -> int:
        """The words a rewrite of ``document`` releases: one per input word."""
        return len(self.words(document))

    def tokens_released(self, output: np.ndarray) -> int:
        """How many ε-units an output paid for: its words."""
        return len(output)

    def describe(self) -> str:
        """One line for reports."""
        context = "original + masked" if self.concat else "masked only"
        return (
            f"{self.name}: per word ({context}) {self.decoding.describe()}; "
            f"claim {self.claim.describe()}"
        )

    def _check_length(self, i: int, output: np.ndarray, words: int) -> None:
        if len(output) != words:
            raise InvalidArgumentError(
                f"outputs[{i}]", f"{len(output)} words", f"{words} words, one per input word"
            )

    def _classes(self) -> tuple[np.ndarray, list[str], dict[str, int]]:
        """(representative id of each id, text of each id, text → representative id)."""
        if ("classes",) not in self._cache:
            texts = [_token_text(self.tokenizer, v) for v in range(self.vocabulary)]
            lookup: dict[str, int] = {}
            for v, t in enumerate(texts):
                lookup.setdefault(t, v)
            canonical = np.asarray([lookup[t] for t in texts], dtype=np.int64)
            self._cache[("classes",)] = (canonical, texts, lookup)
        return self._cache[("classes",)]


def draw_rows(log_probs: np.ndarray, n: int, rng: np.random.Generator) -> list[np.ndarray]:
    """``n`` draws of one index per row of ``log_probs``: ``n`` calls of ``lm.sample_rows``.

    The same inverse-CDF rule (``u ∈ (0, 1]``, zero-probability indices never drawn) and
    the same random stream, with the CDF computed once instead of ``n`` times.
    """
    cdf = np.cumsum(np.exp(log_probs), axis=-1)
    u = (1.0 - rng.random((n, cdf.shape[0]))) * cdf[:, -1]
    drawn = np.empty((n, cdf.shape[0]), dtype=np.int64)
    for w in range(cdf.shape[0]):
        drawn[:, w] = np.searchsorted(cdf[w], u[:, w], side="left")
    np.minimum(drawn, cdf.shape[1] - 1, out=drawn)
    return list(drawn)


def _token_text(tokenizer: Any, token: int) -> str:
    """The text the released code emits for one token: ``decode([v]).strip()``.

    LM heads can be wider than the tokenizer (untrained rows); such ids decode to nothing.
    """
    try:
        return str(tokenizer.decode([token])).strip()
    except (IndexError, KeyError, OverflowError, TypeError, ValueError):
        return ""


def _logits_at(model: Any, ids: Any, mask: Any, at: Any) -> Any:
    """Logits at one position per row, computing the LM head only there when it is known.

    RoBERTa (``lm_head``) and BERT (``cls``) heads act position-wise, so applying them to
    the mask positions' states equals slicing the full logits at a fraction of the memory.
    """
    rows = ids.new_tensor(range(ids.shape[0]))
    head = getattr(model, "lm_head", None)
    if head is None:
        head = getattr(model, "cls", None)
    base = getattr(model, "base_model", None)
    if head is not None and base is not None and base is not model:
        states = base(input_ids=ids, attention_mask=mask).last_hidden_state
        return head(states[rows, at])
    return model(input_ids=ids, attention_mask=mask).logits[rows, at]


def _merge_classes(log_probs: np.ndarray, canonical: np.ndarray) -> np.ndarray:
    """Log-mass of each class of ids at its representative, ``-inf`` at the other members."""
    counts = np.bincount(canonical, minlength=log_probs.shape[-1])
    shared = np.flatnonzero(counts[canonical] > 1)  # ids in classes of two or more
    if shared.size == 0:
        return log_probs
    out = log_probs.copy()
    out[:, shared] = -np.inf
    order = shared[np.argsort(canonical[shared], kind="stable")]
    starts = np.flatnonzero(np.r_[True, np.diff(canonical[order]) != 0])
    with np.errstate(divide="ignore"):
        mass = np.logaddexp.reduceat(log_probs[:, order], starts, axis=1)
    out[:, canonical[order[starts]]] = mass
    return out


def dp_mlm(
    model: Any,
    epsilon: float,
    *,
    clip: tuple[float, float] = ROBERTA_BASE_CLIP,
    max_words: int = 64,
    concat: bool = True,
    batch_size: int = 32,
) -> MaskedRewriter:
    """DP-MLM at ``epsilon`` per word (Meisenbacher et al. 2024, §3).

    Each replacement is the exponential mechanism over the clipped mask-position
    logits, ``p(v) ∝ exp(clip(l_v, b_lo, b_hi) / T)`` with ``T = 2(b_hi − b_lo)/ε``
    (McSherry & Talwar 2007 with utility range ``b_hi − b_lo``), so each word is
    ε-DP and a document of ``n`` words costs ``n·ε`` for neighbours of equal word
    count (the output always has exactly ``n`` words).  ``clip`` defaults to the
    authors' bounds for roberta-base; calibrate it for any other model.
    """
    return MaskedRewriter(
        name="dp-mlm",
        model=model,
        decoding=exponential_decoding(epsilon, clip, max_new_tokens=max_words),
        claim=TextClaim(
            epsilon,
            Unit.WORD,
            neighbours=Neighbours.EQUAL_LENGTH,
            source="Meisenbacher et al. 2024, §3 (per word)",
        ),
        concat=concat,
        batch_size=batch_size,
    )
