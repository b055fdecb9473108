"""Does a recorded call do what its author declares?  The declaration against the recording.

A user who records their own generation call (:class:`~dpaudit.mechanisms.rewriters.
recorded.RecordedRewriter`) may also say what it is meant to do: the paper's decoding, as a
:class:`~dpaudit.mechanisms.rewriters.decoding.Decoding`.  The audit scores the recording
(the code's own law); this check compares the two, step by step.  For each recorded run the
model's logits are teacher-forced on the prompt the call gave the model and the tokens it
drew, the declared processors turn them into the declared row, and the row the code really
drew from is set beside it.  Both rows are exact (no sampling), so a difference beyond float
rounding is a fact, not a test at some level, and each finding says where and of what kind:

* ``greedy``: the code took the argmax where the declaration samples ("always the argmax");
* ``point mass``: probability 1 on one token where the declaration spreads it; a *copy* when
  that token is in the prompt (a probability-1 copy of the input);
* ``truncation``: the code keeps fewer tokens than the declaration (a top-k or top-p), so its
  support can depend on the input;
* ``wider support``: the code draws tokens the declaration excludes;
* ``unclipped``: the code's log-probabilities spread further than the declared clip allows;
* ``other law``: the same support and another distribution (a temperature, a penalty, the
  processors' order), with the temperature it is consistent with when it is one;
* ``length``: more tokens than the declared ``max_new_tokens``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.rewriters.decoding import Decoding, process_logits
from dpaudit.mechanisms.rewriters.lm import causal_logits
from dpaudit.mechanisms.rewriters.recorded import RecordedRun, RecordingError
from dpaudit.results.findings import DeclarationFinding

#: Total variation between two rows below which they are one law: the declared row is
#: processed in float64 from float32 logits, the code's row in the code's own dtype.
ROW_TOLERANCE = 1e-4
#: Places a finding names before "and k more".
SHOWN_PLACES = 3


@dataclass(frozen=True)
class DeclarationCheck:
    """The declared decoding set beside the recorded one, over ``runs`` free runs.

    Attributes:
        declared: the declaration, in words.
        documents: the documents the runs were on (a finding's "document 2" is the second).
        runs: recorded runs compared (each on one audited document).
        steps: steps compared (tokens drawn within the declared ``max_new_tokens``).
        mismatched_steps: of them, where the two rows differ by more than
            :data:`ROW_TOLERANCE` in total variation.
        max_total_variation: the largest difference of any step.
        findings: one per kind of difference, each naming where it was seen.
    """

    declared: str
    documents: tuple[str, ...]
    runs: int
    steps: int
    mismatched_steps: int
    max_total_variation: float
    findings: tuple[DeclarationFinding, ...] = ()

    @property
    def matches(self) -> bool:
        """True when no step and no length differs from the declaration."""
        return not self.findings

    def describe(self) -> str:
        """One line for reports."""
        if self.matches:
            return (
                f"the declared decoding ({self.declared}) matches the recording at all "
                f"{self.steps} steps of {self.runs} runs (total variation ≤ "
                f"{self.max_total_variation:.2g})"
            )
        kinds = ", ".join(f.declaration.removeprefix("decoding: ") for f in self.findings)
        return (
            f"MISMATCH: the call does not do what is declared ({self.declared}): "
            f"{self.mismatched_steps} of {self.steps} steps of {self.runs} runs differ; "
            f"found: {kinds}"
        )


@dataclass(frozen=True)
class _Step:
    """One compared step: where it is, what was drawn, and the two rows' shapes."""

    place: str
    kind: str
    total_variation: float
    support: int
    declared_support: int
    spread: float
    declared_probability: float
    in_prompt: bool
    entropy: float
    declared_entropy: float
    slope: float
    slope_residual: float


def check_declaration(
    rewriter: Any,
    declared: Decoding,
    documents: Sequence[str],
    rng: np.random.Generator,
    runs_per_document: int = 2,
) -> DeclarationCheck:
    """Compare ``declared`` with what ``rewriter`` (a recorded call) does on ``documents``.

    ``runs_per_document`` free runs are recorded per document, each from a child of
    ``rng``; every step of every run is compared exactly.
    """
    if not isinstance(declared, Decoding):
        raise InvalidArgumentError("declared", type(declared).__name__, "a Decoding")
    if not documents:
        raise InvalidArgumentError("documents", documents, "at least one document")
    steps: list[_Step] = []
    long_runs: list[str] = []
    short_runs: list[str] = []
    eos = _eos_ids(rewriter)
    runs = 0
    for d, document in enumerate(documents):
        for child in rng.spawn(runs_per_document):
            run = rewriter.record(document, child)
            runs += 1
            label = f"document {d + 1}"
            n = int(run.tokens.size)
            if n > declared.max_new_tokens:
                long_runs.append(f"{label}: {n} tokens")
            elif n < declared.max_new_tokens and eos and int(run.tokens[-1]) not in eos:
                short_runs.append(f"{label}: {n} tokens")
            steps.extend(_compare_run(rewriter, declared, run, label))
    findings = _findings(rewriter, declared, steps)
    m = declared.max_new_tokens
    for runs_seen, text in (
        (long_runs, f"generated more than the declared max_new_tokens = {m} tokens"),
        (short_runs, f"stopped without an end token before the declared max_new_tokens = {m}"),
    ):
        if runs_seen:
            summary = f"the call {text} in {len(runs_seen)} of {runs} runs"
            if runs_seen is short_runs:
                summary += " (a cap the declaration lacks, perhaps one taken from the input)"
            findings.append(_finding(rewriter, "length", summary, _places(runs_seen)))
    tv = [s.total_variation for s in steps]
    return DeclarationCheck(
        declared=declared.describe(),
        documents=tuple(documents),
        runs=runs,
        steps=len(steps),
        mismatched_steps=sum(1 for v in tv if v > ROW_TOLERANCE),
        max_total_variation=max(tv, default=0.0),
        findings=tuple(findings),
    )


def _compare_run(rewriter: Any, declared: Decoding, run: RecordedRun, label: str) -> list[_Step]:
    """Every step of one run within the declared cap, the two rows side by side."""
    if run.prompt.size == 0:
        raise RecordingError(
            f"{rewriter.name}: the model's forward pass was not seen, so its logits cannot "
            "be teacher-forced under the declaration"
        )
    compared = min(run.tokens.size, declared.max_new_tokens)
    if compared == 0:
        return []
    tokens = run.tokens[:compared]
    _, logits = next(causal_logits(rewriter.model.model, run.prompt, [tokens]))
    declared_rows = process_logits(logits[:compared], declared)
    prompt_tokens = set(run.prompt.tolist())
    out = []
    for t in range(compared):
        token = int(tokens[t])
        place = f"{label} step {t + 1} ({_token_text(rewriter, token)})"
        out.append(
            _step(run.log_rows[t], declared_rows[t], run.kinds[t], token, place, prompt_tokens)
        )
    return out


def _step(
    row: np.ndarray, declared: np.ndarray, kind: str, token: int, place: str, prompt: set[int]
) -> _Step:
    if row.size != declared.size:
        raise RecordingError(
            f"the call drew from {row.size} tokens, the model's vocabulary has {declared.size}"
        )
    p, q = np.exp(row), np.exp(declared)
    finite, declared_finite = np.isfinite(row), np.isfinite(declared)
    both = finite & declared_finite
    slope, residual = _temperature_fit(row[both], declared[both])
    return _Step(
        place=place,
        kind=kind,
        total_variation=float(0.5 * np.abs(p - q).sum()),
        support=int(finite.sum()),
        declared_support=int(declared_finite.sum()),
        spread=float(row[finite].max() - row[finite].min()),
        declared_probability=float(q[token]),
        in_prompt=token in prompt,
        entropy=_entropy(row),
        declared_entropy=_entropy(declared),
        slope=slope,
        slope_residual=residual,
    )


def _temperature_fit(row: np.ndarray, declared: np.ndarray) -> tuple[float, float]:
    """``s`` and the residual of ``row ≈ s·declared + c`` on the common support: a change
    of temperature alone scales centred log-probabilities by ``T_declared / T_code``."""
    if row.size < 3:
        return math.nan, math.inf
    x, y = declared - declared.mean(), row - row.mean()
    scale = float(x @ x)
    if scale == 0.0:
        return math.nan, math.inf
    s = float(x @ y) / scale
    return s, float(np.sqrt(np.mean((y - s * x) ** 2)) / (np.std(y) + 1e-300))


def _entropy(log_row: np.ndarray) -> float:
    finite = log_row[np.isfinite(log_row)]
    return float(-(np.exp(finite) * finite).sum())


def _kind_of(step: _Step, spread_allowed: float) -> str:
    """Which difference one mismatched step shows (the module's list, first that applies)."""
    if step.kind == "greedy" and step.declared_support > 1:
        return "greedy"
    if step.support == 1 < step.declared_support:
        return "point mass"
    if step.support < step.declared_support:
        return "truncation"
    if step.support > step.declared_support:
        return "wider support"
    if step.spread > spread_allowed + 1e-6:
        return "unclipped"
    return "other law"


def _findings(rewriter: Any, declared: Decoding, steps: list[_Step]) -> list[DeclarationFinding]:
    """One finding per kind of difference, in the order of the module's list."""
    limit = _spread_allowed(declared)
    by_kind: dict[str, list[_Step]] = {}
    for s in steps:
        if s.total_variation > ROW_TOLERANCE:
            by_kind.setdefault(_kind_of(s, limit), []).append(s)
    out = []
    for kind in ("greedy", "point mass", "truncation", "wider support", "unclipped", "other law"):
        seen = by_kind.get(kind)
        if seen:
            text = _summary(kind, seen, len(steps), declared, limit)
            out.append(_finding(rewriter, kind, text, _places(s.place for s in seen)))
    return out


def _summary(kind: str, seen: list[_Step], steps: int, declared: Decoding, limit: float) -> str:
    """The finding of one kind, in words, with its numbers."""
    n = len(seen)
    if kind == "greedy":
        always = " (always the argmax)" if n == steps else ""
        return (
            f"the call takes the argmax at {n} of {steps} steps{always}, where the declaration "
            f"samples from {_range(s.declared_support for s in seen)} tokens"
        )
    if kind == "point mass":
        copies = sum(s.in_prompt for s in seen)
        return (
            f"the call gives one token probability 1 at {n} steps, a token of the prompt at "
            f"{copies} of them (a probability-1 copy), where the declaration gives it at most "
            f"{max(s.declared_probability for s in seen):.3g}"
        )
    if kind == "truncation":
        return (
            f"the call keeps {_range(s.support for s in seen)} tokens at {n} steps, the "
            f"declaration {_range(s.declared_support for s in seen)} (a top-k or top-p the "
            "declaration lacks: a support that can depend on the input)"
        )
    if kind == "wider support":
        return (
            f"the call can draw {_range(s.support for s in seen)} tokens at {n} steps, the "
            f"declaration only {_range(s.declared_support for s in seen)}"
        )
    if kind == "unclipped":
        return (
            f"the call's log-probabilities span up to {max(s.spread for s in seen):.3g} nats "
            f"at {n} steps, more than the declared decoding allows ({limit:.3g}): the logits "
            "are not clipped as declared"
        )
    return _other_law(declared, seen)


def _other_law(declared: Decoding, steps: list[_Step]) -> str:
    """The same support, another law: sharper or flatter, and the temperature it fits."""
    tv = max(s.total_variation for s in steps)
    sharper = sum(s.entropy < s.declared_entropy for s in steps)
    text = (
        f"another law on the declared support at {len(steps)} steps (total variation up to "
        f"{tv:.3g}; sharper than declared at {sharper}, flatter at {len(steps) - sharper})"
    )
    slopes = [s.slope for s in steps if s.slope_residual < 1e-3 and s.slope > 0]
    if len(slopes) == len(steps) and declared.clip is None:
        temperature = declared.temperature / float(np.median(slopes))
        text += f", consistent with temperature {temperature:.4g} instead of the declared "
        text += f"{declared.temperature:.4g}"
    return text


def _spread_allowed(declared: Decoding) -> float:
    """The widest log-probability spread a declared row can have: ``(b_hi − b_lo)/T`` with
    the clip before the temperature, ``b_hi − b_lo`` after it; unbounded without a clip."""
    if declared.clip is None:
        return math.inf
    width = declared.clip[1] - declared.clip[0]
    order = declared.order
    if "temperature" in order and order.index("temperature") > order.index("clip"):
        return width / declared.temperature
    return width


def _finding(rewriter: Any, kind: str, summary: str, evidence: str) -> DeclarationFinding:
    return DeclarationFinding(
        declaration=f"decoding: {kind}",
        mechanism=str(rewriter.name),
        summary=summary,
        evidence=evidence,
        alpha=0.0,
    )


def _places(places: Any) -> str:
    shown = list(places)
    more = f" and {len(shown) - SHOWN_PLACES} more" if len(shown) > SHOWN_PLACES else ""
    return "seen at " + "; ".join(shown[:SHOWN_PLACES]) + more


def _range(values: Any) -> str:
    v = list(values)
    lo, hi = min(v), max(v)
    return f"{lo}" if lo == hi else f"{lo}–{hi}"


def _eos_ids(rewriter: Any) -> set[int]:
    eos = getattr(rewriter.tokenizer, "eos_token_id", None)
    ids = eos if isinstance(eos, list) else [eos]
    return {int(i) for i in ids if i is not None}


def _token_text(rewriter: Any, token: int) -> str:
    try:
        return repr(rewriter.tokenizer.decode([token]))
    except Exception:  # a tokenizer that cannot decode one id still has the id
        return f"#{token}"


__all__ = ["ROW_TOLERANCE", "DeclarationCheck", "check_declaration"]
