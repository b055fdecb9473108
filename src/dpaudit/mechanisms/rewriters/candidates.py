"""The exponential mechanism over a set of candidate rewrites, declared so it can be audited.

Many "DP" rewriters do not draw tokens: they build candidate rewrites, score each with a
utility against the private document and pick one with the exponential mechanism (McSherry
& Talwar, FOCS 2007): ``Pr[y = c] ∝ exp(ε·u(x, c) / (2Δu))`` for a utility with range
``Δu``.  That is ε-DP only when the candidate set does not depend on the private document:
a public set (a fixed list of sentences, a corpus).  Candidates *generated from* the private
document (paraphrases of it, its own sentences, an LM's outputs prompted with it) give every
candidate of ``x`` that ``x'`` cannot produce an infinite loss.

:class:`CandidateRewriter` is the declaration: the candidate set (a fixed tuple, or a
function of the document), the utility function, its declared range and ε.  The audit
scores rewrites exactly under it (:func:`~dpaudit.auditors.rewriter.audit_rewriter`) with
the utilities the user's own function computes, so a utility outside its declared range
shows as a larger loss, and a candidate set that moves with the input as an infinite one.
The user's sampler (``sampler=f(text, n, rng)``) is the code under audit; its rewrites are
checked against the declared law (the randomised-PIT check) and certify the claim on fresh
draws.  The candidate function must be deterministic: a set drawn at random from the input
has no exact law here (audit that code black box).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from dpaudit.claims import TextClaim
from dpaudit.errors import InvalidArgumentError, MechanismError
from dpaudit.mechanisms.rewriters.masked import draw_rows
from dpaudit.mechanisms.rewriters.strings import StringTable
from dpaudit.validation import check_epsilon

#: Documents whose candidate rows are kept (an audit alternates the two of a pair).
_CACHED_DOCUMENTS = 2


@dataclass(frozen=True)
class CandidateDecoding:
    """The declared law of a candidate-set exponential mechanism, as a value for reports.

    ``exponent``: the factor the utility is multiplied by, ``ε/(2Δu)`` as the mechanism
    states it; ``public``: the candidate set is fixed (does not depend on the document).
    """

    epsilon: float
    utility_range: tuple[float, float]
    exponent: float
    public: bool
    max_new_tokens: int = 1

    def exact_worst_token_loss(self, candidates: int) -> float:
        """The largest loss any two documents can cause with ``candidates`` public candidates.

        With ``a = exponent·Δu``, the worst candidate has the top utility under one document
        and the bottom under the other, every other candidate the reverse:
        ``a + ln((1 + (K−1)e^a) / (e^a + K − 1))``, below ``2a = ε`` (the token-level
        formula of :class:`~dpaudit.mechanisms.rewriters.decoding.Decoding` with ``V = K``).
        Candidates generated from the document: ``inf``.
        """
        if not self.public:
            return math.inf
        if candidates < 2:
            return 0.0
        a = self.exponent * (self.utility_range[1] - self.utility_range[0])
        k = float(candidates)
        return a + math.log1p((k - 1.0) * math.exp(a)) - math.log(math.exp(a) + k - 1.0)

    def describe(self) -> str:
        """One line such as ``exponential mechanism over 12 public candidates, u ∈ [0, 1]``."""
        lo, hi = self.utility_range
        where = "a public candidate set" if self.public else "candidates made from the input"
        return (
            f"exponential mechanism over {where}, utility in [{lo:g}, {hi:g}], "
            f"Pr ∝ exp({self.exponent:.4g}·u)"
        )


@dataclass(frozen=True, eq=False)
class CandidateRewriter:
    """An exponential mechanism over candidate rewrites (McSherry & Talwar 2007, Thm 6).

    Attributes:
        name: how reports name it.
        candidates: a fixed tuple of candidate rewrites (public), or a function
            ``document -> candidates`` (deterministic; made from the input, so not public).
        utility: ``u(document, candidate) -> float``, the user's own function.
        utility_range: ``(lo, hi)`` the utility is declared to lie in; ``Δu = hi − lo``.
        epsilon: the ε the mechanism is calibrated for.
        exponent: the factor the code multiplies the utility by; default ``ε/(2Δu)`` (the
            mechanism's), give the code's own where it differs (``ε/Δu`` is a common one).
        claim: what is claimed (default ``epsilon`` per document).
    """

    name: str
    candidates: tuple[str, ...] | Callable[[str], Sequence[str]]
    utility: Callable[[str, str], float]
    utility_range: tuple[float, float]
    epsilon: float
    exponent: float | None = None
    claim: TextClaim | None = None
    _table: StringTable = field(default_factory=StringTable, init=False, repr=False)
    _cache: dict[str, tuple[tuple[str, ...], np.ndarray]] = field(
        default_factory=dict, init=False, repr=False
    )

    #: Output ids number candidate strings in the order this process met them.
    ids_are_local = True
    #: One draw is a whole rewrite (reports say "one rewrite", not "one token").
    output_unit = "rewrite"
    code_under_audit = "the rewriter's own sampler (the declared mechanism)"
    model_source = "no language model: a candidate set and a utility function"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        lo, hi = self.utility_range
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise InvalidArgumentError("utility_range", self.utility_range, "(lo, hi), lo < hi")
        if not callable(self.utility):
            raise InvalidArgumentError("utility", type(self.utility).__name__, "a callable")
        if isinstance(self.candidates, (tuple, list)):
            if not self.candidates or not all(isinstance(c, str) for c in self.candidates):
                raise InvalidArgumentError("candidates", "<given>", "a non-empty tuple of str")
            object.__setattr__(self, "candidates", tuple(self.candidates))
        elif not callable(self.candidates):
            raise InvalidArgumentError(
                "candidates", type(self.candidates).__name__, "a tuple of str or a callable"
            )
        if self.exponent is None:
            object.__setattr__(self, "exponent", self.epsilon / (2.0 * (hi - lo)))
        if not (math.isfinite(self.exponent) and self.exponent > 0):  # type: ignore[arg-type]
            raise InvalidArgumentError("exponent", self.exponent, "a finite number > 0")
        if self.claim is None:
            claim = TextClaim(self.epsilon, "document", source=f"{self.name} (per document)")
            object.__setattr__(self, "claim", claim)

    @property
    def public(self) -> bool:
        """True when the candidate set is fixed (the same for every document)."""
        return isinstance(self.candidates, tuple)

    @property
    def decoding(self) -> CandidateDecoding:
        """The declared law, for reports and the analytic worst case."""
        assert self.exponent is not None
        return CandidateDecoding(self.epsilon, self.utility_range, self.exponent, self.public)

    @property
    def tokenizer(self) -> StringTable:
        """Decodes output ids (numbers of candidate strings)."""
        return self._table

    def analytic_token_bound(self) -> float:
        """The declared law's worst loss (over the public set's size; ``inf`` otherwise)."""
        size = len(set(self.candidates)) if self.public else 0  # type: ignore[arg-type]
        return self.decoding.exact_worst_token_loss(size)

    def candidate_set(self, document: str) -> tuple[str, ...]:
        """The candidates for ``document``: the public set, or the function's output."""
        if not isinstance(document, str):
            raise InvalidArgumentError("document", type(document).__name__, "a str")
        if self.public:
            return self.candidates  # type: ignore[return-value]
        try:
            made = tuple(self.candidates(document))  # type: ignore[operator]
        except Exception as exc:
            raise MechanismError(f"{self.name}: candidates raised {exc!r}") from exc
        if not made or not all(isinstance(c, str) for c in made):
            raise MechanismError(f"{self.name}: candidates must return a non-empty list of str")
        return made

    def _scored(self, document: str) -> tuple[tuple[str, ...], np.ndarray]:
        """The document's candidates and their log-probabilities (its own order)."""
        if document in self._cache:
            return self._cache[document]
        made = self.candidate_set(document)
        try:
            u = np.array([float(self.utility(document, c)) for c in made])
        except Exception as exc:
            raise MechanismError(f"{self.name}: utility raised {exc!r}") from exc
        if not np.all(np.isfinite(u)):
            raise MechanismError(f"{self.name}: utility returned a non-finite value")
        logits = self.exponent * u  # type: ignore[operator]
        log_p = logits - np.logaddexp.reduce(logits)
        for c in made:
            self._table.add(c)
        if len(self._cache) >= _CACHED_DOCUMENTS:
            self._cache.pop(next(iter(self._cache)))
        self._cache[document] = (made, log_p)
        return made, log_p

    def log_row(self, document: str) -> np.ndarray:
        """The declared log-distribution over every string numbered so far (``-inf`` off the
        document's candidates; equal candidates add up)."""
        made, log_p = self._scored(document)
        row = np.full(len(self._table), -np.inf)
        ids = np.array([self._table.index[c] for c in made])
        np.logaddexp.at(row, ids, log_p)
        return row

    def sample_ids(self, document: str, n: int, rng: np.random.Generator) -> list[np.ndarray]:
        """``n`` draws of the declared mechanism, one candidate id each."""
        if n < 1:
            raise InvalidArgumentError("n", n, "an integer >= 1")
        return draw_rows(self.log_row(document)[None, :], n, rng)

    def sample(self, document: str, n: int, rng: np.random.Generator) -> list[str]:
        """``n`` rewrites as text."""
        return [self.decode(y) for y in self.sample_ids(document, n, rng)]

    def declared_log_probs(
        self, document: str, outputs: list[np.ndarray]
    ) -> Iterator[tuple[int, np.ndarray]]:
        """``(i, L)``: ``L[0]`` the declared log-distribution the candidate of output ``i`` was
        drawn from (the row is as wide as the strings numbered when it is asked for)."""
        for i, output in enumerate(outputs):
            if len(output) != 1:
                raise InvalidArgumentError("outputs", f"<{len(output)} ids>", "one id each")
            row = self.log_row(document)
            if int(output[0]) >= row.size:  # a string first met after this document's row
                row = np.concatenate([row, np.full(int(output[0]) + 1 - row.size, -np.inf)])
            yield i, row[None, :]

    def token_log_probs(self, document: str, outputs: list[np.ndarray]) -> list[np.ndarray]:
        """Exact ``ln p(y | document)`` of each output (one candidate each)."""
        result: list[np.ndarray] = [np.zeros(0)] * len(outputs)
        for i, rows in self.declared_log_probs(document, outputs):
            result[i] = rows[0, [int(outputs[i][0])]]
        return result

    def encode_output(self, text: str, document: str | None = None) -> np.ndarray:
        """The id of an output text, the whole string (new strings are numbered)."""
        return np.asarray([self._table.add(text)], dtype=np.int64)

    def decode(self, ids: np.ndarray) -> str:
        """The candidate an id numbers."""
        return self._table.decode(ids)

    def length_cap(self, document: str) -> int:
        """One candidate per rewrite."""
        return 1

    def tokens_released(self, output: np.ndarray) -> int:
        """One ε-unit: the whole rewrite."""
        return 1

    def describe(self) -> str:
        """One line for reports."""
        assert self.claim is not None
        return f"{self.name}: {self.decoding.describe()}; claim {self.claim.describe()}"


__all__ = ["CandidateDecoding", "CandidateRewriter"]
