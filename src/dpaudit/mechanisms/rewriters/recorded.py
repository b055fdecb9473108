"""A user's own generation call, recorded as it runs: the white box without a declaration.

A rewriter written by someone else calls ``model.generate(...)`` (or its own loop) with
settings that may differ from its paper: no logit clipping, a temperature and nothing else,
Hugging Face's default ``top_k=50``, greedy decoding, ``max_new_tokens`` taken from the
input.  Declaring what the paper says and scoring under the declaration audits the paper,
not the code.  :class:`RecordedRewriter` reads the distribution each token was drawn from
off the run itself:

* while the user's call runs, ``torch.multinomial`` is replaced by a recorder that keeps
  the probability row the code computed (after every logits processor, warper, clip and
  temperature the code applied, in its order and dtype) and draws the token from that row
  with the audit's own generator, so a rewrite is reproducible from the audit's seed;
* ``torch.argmax`` called from Hugging Face's generation code (greedy decoding) is recorded
  as a point mass on the chosen token;
* scoring a rewrite ``y`` under another document runs the same call on that document with
  every draw *forced* to ``y``'s next token, recording the row the code computed there.  A
  run that stops before ``y`` ends gives the rest of ``y`` probability 0; a run that would
  go on after ``y`` ended gives ``y``, as a finished output, probability 0 (its last token
  gets −∞): a cap that depends on the input shows as an infinite loss.

So the exact loss ``Σ_t ln p(y_t | x, y_<t) − ln p(y_t | x', y_<t)`` is computed under the
law the code really samples from, and :func:`~dpaudit.auditors.rewriter.audit_rewriter`
audits it like any declared rewriter (proposals on training rewrites, certification on
fresh ones).

What it cannot see: randomness outside ``torch.multinomial`` (a sampler of the user's own
written with ``torch.rand``, dropout left on) is not recorded — such a call is refused when
it draws no token through the recorder; batched or beam generation (one sequence per call
is recorded); transformers' deferred stop check (used on ``mps`` devices only).  Torch's
global generator is forked around each call, so the user's process keeps its state.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.claims import TextClaim
from dpaudit.errors import InvalidArgumentError, MechanismError
from dpaudit.mechanisms.rewriters.decoding import Decoding
from dpaudit.mechanisms.rewriters.lm import sample_rows, torch_module

#: Where Hugging Face's greedy ``torch.argmax`` is called from.
_GENERATION_FILES = ("transformers/generation/", "transformers\\generation\\")


class RecordingError(MechanismError):
    """The generation call could not be recorded (what it did is in the message)."""


class _OverrunError(BaseException):
    """A forced run asked for a token after the rewrite being scored had ended (a
    BaseException, so that a call catching every Exception does not swallow it)."""


@dataclass
class _Recording:
    """What one run of the call drew: per step, the log-probability row and the token."""

    forced: np.ndarray | None
    rng: np.random.Generator | None
    rows: list[np.ndarray] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    prompt: np.ndarray | None = None

    def see_forward(self, module: Any, args: tuple, kwargs: dict) -> None:
        """A forward pre-hook: keep the token ids of the model's first pass (the prompt)."""
        if self.prompt is None:
            ids = kwargs.get("input_ids", args[0] if args else None)
            if ids is not None and hasattr(ids, "detach"):
                self.prompt = ids.detach().to("cpu").numpy().reshape(-1).astype(np.int64)

    def choose(self, log_row: np.ndarray, kind: str) -> int:
        step = len(self.tokens)
        if self.forced is not None:
            if step >= self.forced.size:
                raise _OverrunError
            token = int(self.forced[step])
        elif kind == "greedy":
            token = int(np.argmax(log_row))
        else:
            assert self.rng is not None
            token = int(sample_rows(log_row[None, :], self.rng)[0])
        self.rows.append(log_row)
        self.tokens.append(token)
        self.kinds.append(kind)
        return token


def _log_row(probs: Any, what: str) -> np.ndarray:
    row = probs.detach().to("cpu").double().numpy()
    if row.ndim == 2 and row.shape[0] == 1:
        row = row[0]
    if row.ndim != 1:
        raise RecordingError(
            f"{what} got a {tuple(probs.shape)} tensor: the recorder follows one sequence per "
            "call (no batches, num_return_sequences or beams)"
        )
    if not np.all(np.isfinite(row)) or np.any(row < 0) or row.sum() <= 0:
        raise RecordingError(f"{what} got probabilities that are negative, NaN or all zero")
    with np.errstate(divide="ignore"):
        return np.log(row / row.sum())


class _Patched:
    """``torch.multinomial`` and generation's ``torch.argmax`` replaced by the recorder."""

    def __init__(self, torch: Any, recording: _Recording) -> None:
        self.torch, self.recording = torch, recording
        self.multinomial, self.argmax = torch.multinomial, torch.argmax

    def __enter__(self) -> _Patched:
        torch, original_argmax = self.torch, self.argmax

        def multinomial(probs: Any, num_samples: int = 1, *args: Any, **kwargs: Any) -> Any:
            if num_samples != 1:
                raise RecordingError(f"torch.multinomial drew {num_samples} samples at once")
            token = self.recording.choose(_log_row(probs, "torch.multinomial"), "sampled")
            shape = (1, 1) if probs.dim() == 2 else (1,)
            return torch.full(shape, token, dtype=torch.long, device=probs.device)

        def argmax(tensor: Any, *args: Any, **kwargs: Any) -> Any:
            caller = sys._getframe(1).f_code.co_filename
            if not any(part in caller for part in _GENERATION_FILES):
                return original_argmax(tensor, *args, **kwargs)
            scores = tensor.detach().to("cpu").double().numpy().reshape(-1)
            if tensor.dim() == 2 and tensor.shape[0] != 1:
                raise RecordingError("greedy decoding of a batch: record one sequence per call")
            point = np.full(scores.shape, -math.inf)
            point[int(np.argmax(scores))] = 0.0
            token = self.recording.choose(point, "greedy")
            return torch.full((1,), token, dtype=torch.long, device=tensor.device)

        torch.multinomial, torch.argmax = multinomial, argmax
        return self

    def __exit__(self, *exc: object) -> None:
        self.torch.multinomial, self.torch.argmax = self.multinomial, self.argmax


@dataclass(frozen=True, eq=False)
class RecordedRun:
    """One recorded run: the prompt the model's first forward pass got, the tokens drawn,
    the log-probability row each was drawn from (after the call's own processing) and how
    (``sampled`` or ``greedy``)."""

    prompt: np.ndarray
    tokens: np.ndarray
    log_rows: np.ndarray
    kinds: tuple[str, ...]


@dataclass(frozen=True)
class RecordedDecoding:
    """What is known of a recorded call's decoding before it runs: the longest rewrite the
    audit lets it produce, and that there is no analytic per-token bound to quote."""

    max_new_tokens: int

    def exact_worst_token_loss(self, vocab: int) -> float:
        """Unknown before the run: NaN (the exact losses come from the recording)."""
        return math.nan

    def describe(self) -> str:
        """One line for reports."""
        return f"recorded from the call as it ran (≤ {self.max_new_tokens} tokens)"


@dataclass(frozen=True, eq=False)
class RecordedRewriter:
    """A rewriter that is the user's own generation call, ``call(model, tokenizer, text)``.

    Attributes:
        name: how reports name it.
        model: an object with ``.model`` (a Hugging Face model) and ``.tokenizer``
            (:class:`~dpaudit.text.models.LoadedModel`), passed to ``call``.
        call: the user's function; it generates one rewrite of ``text`` and returns it
            (its return value is not read: the tokens are the ones recorded).
        claim: what the user claims for it (ε per token, word or document).
        max_new_tokens: the longest rewrite the audit accepts; a run that draws more is
            stopped with an error naming it.
        declared: what the user says the call does (the paper's decoding), or ``None``.  It
            is never scored: the audit sets it beside the recording and reports where the
            two differ (:mod:`dpaudit.auditors.rewriter.declared`).
    """

    name: str
    model: Any
    call: Callable[..., Any]
    claim: TextClaim
    max_new_tokens: int = 256
    declared: Decoding | None = None

    code_under_audit = "the user's generation call, recorded as it ran"
    law_name = "the call's recorded law"
    #: Its probabilities are the code's own, read off the run (not a declaration).
    records_its_law = True

    def __post_init__(self) -> None:
        if not callable(self.call):
            raise InvalidArgumentError("call", type(self.call).__name__, "a callable")
        if not isinstance(self.claim, TextClaim):
            raise InvalidArgumentError("claim", type(self.claim).__name__, "a TextClaim")
        if isinstance(self.max_new_tokens, bool) or not isinstance(self.max_new_tokens, int):
            raise InvalidArgumentError("max_new_tokens", self.max_new_tokens, "an integer >= 1")
        if self.max_new_tokens < 1:
            raise InvalidArgumentError("max_new_tokens", self.max_new_tokens, "an integer >= 1")
        if self.declared is not None and not isinstance(self.declared, Decoding):
            raise InvalidArgumentError("declared", type(self.declared).__name__, "a Decoding")

    @property
    def tokenizer(self) -> Any:
        """The model's tokenizer."""
        return self.model.tokenizer

    @property
    def decoding(self) -> RecordedDecoding:
        """No declaration: the decoding is read from each run."""
        return RecordedDecoding(self.max_new_tokens)

    def _run(self, document: str, recording: _Recording) -> bool:
        """Run the call once under the recorder; False when a forced run overran."""
        if not isinstance(document, str):
            raise InvalidArgumentError("document", type(document).__name__, "a str")
        torch = torch_module()
        seed = int(recording.rng.integers(2**63)) if recording.rng is not None else 0
        hook = self.model.model.register_forward_pre_hook(recording.see_forward, with_kwargs=True)
        with torch.random.fork_rng(devices=[]), _Patched(torch, recording):
            torch.manual_seed(seed)  # any other torch draw is a function of the audit's seed
            try:
                with torch.inference_mode():
                    self.call(self.model.model, self.model.tokenizer, document)
            except _OverrunError:
                return False
            except RecordingError:
                raise
            except Exception as exc:
                raise MechanismError(f"{self.name} raised {type(exc).__name__}: {exc}") from exc
            finally:
                hook.remove()
        if not recording.tokens:
            raise RecordingError(
                f"{self.name} drew no token through torch.multinomial nor chose one by "
                "transformers' greedy argmax: its decoding cannot be recorded (audit it "
                "black box, f(text, n, rng))"
            )
        if len(recording.tokens) > self.max_new_tokens:
            raise RecordingError(
                f"{self.name} generated {len(recording.tokens)} tokens, more than "
                f"max_new_tokens = {self.max_new_tokens}: raise it or cap the call"
            )
        return True

    def record(self, document: str, rng: np.random.Generator) -> RecordedRun:
        """One free run of the call on ``document``: what it was given and what it drew."""
        recording = _Recording(None, rng)
        self._run(document, recording)
        prompt = recording.prompt if recording.prompt is not None else np.zeros(0, np.int64)
        return RecordedRun(
            prompt, np.asarray(recording.tokens, np.int64), np.stack(recording.rows),
            tuple(recording.kinds),
        )  # fmt: skip

    def sample_ids(self, document: str, n: int, rng: np.random.Generator) -> list[np.ndarray]:
        """``n`` rewrites of ``document``, the token ids each run drew (one run each)."""
        if n < 1:
            raise InvalidArgumentError("n", n, "an integer >= 1")
        out = []
        for child in rng.spawn(n):
            recording = _Recording(None, child)
            self._run(document, recording)
            out.append(np.asarray(recording.tokens, dtype=np.int64))
        return out

    def declared_log_probs(
        self, document: str, outputs: list[np.ndarray]
    ) -> Iterator[tuple[int, np.ndarray]]:
        """``(i, L)`` with ``L[t]`` the log-distribution the call computed for token ``t`` of
        output ``i`` on ``document``, every earlier draw forced to the output's tokens.

        A run that ended before the output did leaves the rest impossible (rows of −∞);
        one that went on after it ended makes its end impossible (the last drawn token's
        entry −∞), so the output has probability 0 as a finished rewrite.
        """
        for i, output in enumerate(outputs):
            rows, _, _ = self._forced(document, output)
            yield i, rows

    def _forced(self, document: str, output: np.ndarray) -> tuple[np.ndarray, bool, int]:
        """The rows of ``output`` forced on ``document``, whether the run stopped where the
        output ends, and how many steps it drew before stopping."""
        forced = np.asarray(output, dtype=np.int64)
        recording = _Recording(forced, None)
        finished = self._run(document, recording)
        rows = np.full((forced.size, self._vocab(recording)), -math.inf)
        steps = min(len(recording.rows), forced.size)
        if steps:
            rows[:steps] = np.stack(recording.rows[:steps])
        if not finished and forced.size:
            rows[-1, int(forced[-1])] = -math.inf
        return rows, finished, len(recording.rows)

    def why_impossible(self, document: str, output: np.ndarray, position: int) -> str:
        """Why the call on ``document`` gives token ``position`` of ``output`` probability 0,
        read from the forced run: the flaw in the words a verdict names."""
        rows, finished, steps = self._forced(document, output)
        if position >= steps:
            return (
                f"the call on x′ stops after {steps} tokens, before this one: a length that "
                "depends on the input"
            )
        if not finished and position == len(output) - 1:
            return (
                "the call on x′ goes on past this rewrite's end: it never stops here, a length "
                "that depends on the input"
            )
        support = int(np.isfinite(rows[position]).sum())
        if support == 1:
            return (
                "the call on x′ puts probability 1 on another token here: greedy decoding or "
                "a copied token"
            )
        if support < rows.shape[1]:
            return (
                f"the call on x′ keeps only {support} of {rows.shape[1]} tokens here and not "
                "this one: a truncation (top-k, top-p) whose support depends on the input"
            )
        return "the call on x′ gives this token probability 0 here"

    def token_log_probs(self, document: str, outputs: list[np.ndarray]) -> list[np.ndarray]:
        """Exact ``ln p(y_t | document, y_<t)`` of every token, as the call computes it."""
        result: list[np.ndarray] = [np.zeros(0)] * len(outputs)
        for i, rows in self.declared_log_probs(document, outputs):
            result[i] = rows[np.arange(len(outputs[i])), outputs[i]]
        return result

    def _vocab(self, recording: _Recording) -> int:
        if recording.rows:
            return int(recording.rows[0].size)
        return int(self.model.model.config.vocab_size)

    def length_cap(self, document: str) -> int:
        """The most tokens a rewrite may have here: :attr:`max_new_tokens`."""
        return int(self.max_new_tokens)

    def decode(self, ids: np.ndarray) -> str:
        """The text of recorded ids (special tokens dropped)."""
        return str(self.tokenizer.decode(ids.tolist(), skip_special_tokens=True)).strip()

    def encode_output(self, text: str, document: str | None = None) -> np.ndarray:
        """Token ids of an output text (its canonical tokenisation, EOS appended)."""
        ids = list(self.tokenizer(text, add_special_tokens=False)["input_ids"])
        eos = self.tokenizer.eos_token_id
        if eos is not None:
            ids.append(int(eos))
        return np.asarray(ids, dtype=np.int64)

    def sample(self, document: str, n: int, rng: np.random.Generator) -> list[str]:
        """``n`` rewrites as text: the black-box view of the same call."""
        return [self.decode(ids) for ids in self.sample_ids(document, n, rng)]

    def tokens_released(self, output: np.ndarray) -> int:
        """How many ε-units an output paid for: its generated tokens."""
        return len(output)

    def describe(self) -> str:
        """One line for reports."""
        return f"{self.name}: {self.decoding.describe()}; claim {self.claim.describe()}"


def decoding_seen(rewriter: RecordedRewriter, document: str, rng: np.random.Generator) -> dict:
    """What one recorded run shows about the call's decoding, for a reader: whether it was
    greedy or sampled, how many tokens it drew, and the support of each step's row."""
    run = rewriter.record(document, rng)
    support = np.isfinite(run.log_rows).sum(axis=1)
    return {
        "kinds": sorted(set(run.kinds)),
        "tokens": int(run.tokens.size),
        "support_min": int(support.min()),
        "support_max": int(support.max()),
        "vocabulary": int(run.log_rows.shape[1]),
    }


__all__ = ["RecordedDecoding", "RecordedRewriter", "RecordedRun", "RecordingError", "decoding_seen"]
