"""The one witness type: the evidence for an ε bound, shared by every auditor and the report.

A :class:`Witness` says why ``ε ≥ epsilon_lower_bound``: two inputs ``x`` and
``x'``, an event ``S`` (a distinguishing set of outputs, or for an analytic
witness the output or region where the privacy loss is attained), and — for
the empirical auditors — the counts behind ``Pr[M(x) ∈ S]`` and
``Pr[M(x') ∈ S]`` with their one-sided bounds.  Three sources make them
(``kind``):

* ``analytic`` (:mod:`dpaudit.analysis`, ``Mechanism.truth``): the exact privacy
  loss of the pair; ``confidence`` is None because nothing was sampled;
* ``sanity-check`` (:mod:`dpaudit.auditors.sanity.check`): the ACL 2022
  reconstruction attack's guess as the event, with its 2×2 table's counts;
* ``black-box`` (:mod:`dpaudit.auditors.blackbox.auditor`): a threshold attack on a score
  (:class:`ThresholdAttack`), counts from fresh samples and the seeds to redraw them.

A basic module: immutable values that serialise to JSON through
:mod:`dpaudit.serialization` and import nothing from dpaudit.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np

__all__ = [
    "ProbabilityEstimate",
    "ThresholdAttack",
    "Witness",
    "WitnessKind",
    "WitnessSeeds",
    "format_input",
    "format_value",
]


class WitnessKind(StrEnum):
    """Which auditor produced a witness."""

    ANALYTIC = "analytic"
    SANITY_CHECK = "sanity-check"
    BLACK_BOX = "black-box"


@dataclass(frozen=True)
class ProbabilityEstimate:
    """An estimated probability ``Pr[M(x) ∈ S]`` with its one-sided Clopper–Pearson bound.

    ``bound`` is a *lower* bound for the numerator probability ``p1`` and an
    *upper* bound for the denominator probability ``p2``; ``bound_side`` says
    which, and ``bound_error`` is the error probability of that one-sided bound.
    """

    hits: int
    samples: int
    bound: float
    bound_side: str
    bound_error: float

    @property
    def estimate(self) -> float:
        """The maximum-likelihood estimate ``hits / samples``."""
        return self.hits / self.samples

    def describe(self) -> str:
        """E.g. ``≥ 0.731 (7310/10000)`` (the bound's side, value and counts)."""
        op = "≥" if self.bound_side == "lower" else "≤"
        return f"{op} {self.bound:.4g} ({self.hits}/{self.samples})"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (includes the point estimate)."""
        return {
            "hits": self.hits,
            "samples": self.samples,
            "estimate": self.estimate,
            "bound": self.bound,
            "bound_side": self.bound_side,
            "bound_error": self.bound_error,
        }


@dataclass(frozen=True)
class ThresholdAttack:
    """A distinguishing set ``S`` defined by thresholding a score of the output.

    ``S = {y : score(y) > t} ∪ {y : score(y) = t, kept with probability q}`` for
    ``tail = "upper"``, and the same with ``<`` for ``tail = "lower"``.  The score
    is high where the output looks like it came from ``score_inputs[0]``.
    ``q`` (``tie_probability``) is realised by an independent coin per output,
    drawn from the work unit's seeded generator.  ``classifier`` (a trained
    score's parameters) is serialised but kept out of the repr.
    """

    family: str
    score: str
    score_inputs: tuple[tuple[float, ...], tuple[float, ...]]
    tail: str
    threshold: float
    tie_probability: float
    target_mass: float | None = None
    classifier: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def set_description(self) -> str:
        """The set ``S`` in words."""
        op = ">" if self.tail == "upper" else "<"
        t = f"{self.threshold:.9g}"
        if self.tie_probability == 0.0:
            return f"score(y) {op} {t}"
        if self.tie_probability == 1.0:
            return f"score(y) {op}= {t}"
        return f"score(y) {op} {t}, or score(y) = {t} with probability {self.tie_probability:.6g}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with the set in words."""
        out = {
            "family": self.family,
            "score": self.score,
            "score_inputs": [list(self.score_inputs[0]), list(self.score_inputs[1])],
            "tail": self.tail,
            "threshold": self.threshold,
            "tie_probability": self.tie_probability,
            "set": self.set_description,
        }
        if self.target_mass is not None:
            out["target_mass"] = self.target_mass
        if self.classifier is not None:
            out["classifier"] = self.classifier
        return out


@dataclass(frozen=True)
class WitnessSeeds:
    """Where the counts' samples came from: the root seed and the work-unit key prefixes.

    The samples behind ``p1`` (``p2``) were drawn from the generators that
    :func:`dpaudit.random.unit_rng` derives from ``root_seed`` and keys starting
    with ``p1_unit_key_prefix`` (``p2_unit_key_prefix``).
    """

    root_seed: int
    p1_unit_key_prefix: tuple[int, ...]
    p2_unit_key_prefix: tuple[int, ...]


def _count_text(p: ProbabilityEstimate) -> str:
    return f"{p.hits}/{p.samples}, {p.bound_side} bound {p.bound:.6g}"


def _floats(v: Any) -> tuple[float, ...] | str:
    if isinstance(v, str):  # a word-level mechanism's input
        return v
    return tuple(float(t) for t in np.ravel(v))


def format_input(x: tuple[float, ...] | str) -> str:
    """An input in a few characters: ``(0, 1)``, ``1^300`` (constant) or ``(0.2, 0.5, …) [n=9]``.

    A word (the input of a word-level mechanism) prints quoted: ``'good'``.
    """
    if isinstance(x, str):
        return repr(x)
    if len(x) > 4 and len(set(x)) == 1:
        return f"{x[0]:g}^{len(x)}"
    head = ", ".join(f"{v:.6g}" for v in x[:4])
    return f"({head}{', …' if len(x) > 4 else ''})" + (f" [n={len(x)}]" if len(x) > 4 else "")


def format_value(value: Any, limit: int = 60) -> str:
    """A typed input (an int, a category, a dataset, ...) as its ``repr``, cut to ``limit``."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class Witness:
    """Evidence that ``ε ≥ epsilon_lower_bound`` for the mechanism it was computed on.

    ``event`` describes ``S`` in words.  With ``confidence`` None (analytic
    witnesses) the bound is the pair's exact privacy loss; otherwise it holds
    with that probability, after the auditor's corrections for everything it
    tried.  ``p1``/``p2`` estimate ``Pr[M(x) ∈ S]`` (lower bound) and
    ``Pr[M(x') ∈ S]`` (upper bound); ``epsilon_estimate`` is their plain
    log-ratio.  ``attack`` (black-box only) details the threshold attack and
    ``seeds`` where the samples came from.  Fields a source lacks are None.

    A mechanism with a typed input domain (integers, categories, datasets, ...) is
    audited through an encoding of its inputs as numbers: ``x``/``x_prime`` are then
    the encoded inputs the attack and the seeds refer to, ``values`` the user's own
    ``(x, x')`` they stand for, and ``input_encoding`` the rule in words.  The text
    and the JSON show the user's values as ``x``/``x_prime`` (the encoded inputs as
    ``x_encoded``/``x_prime_encoded``).

    Where the outputs are categorical (strings, categories, a few distinct values)
    ``output_set`` is ``S`` as the output values it contains, e.g. ``{'GREEN'}``
    (:func:`dpaudit.auditors.blackbox.outcome.output_set_text`); the text shows it
    in place of the score threshold ``event``, which the JSON keeps beside it.
    """

    kind: WitnessKind
    x: tuple[float, ...] | str
    x_prime: tuple[float, ...] | str
    event: str
    epsilon_lower_bound: float
    confidence: float | None = None
    pair_origin: str = ""
    p1: ProbabilityEstimate | None = None
    p2: ProbabilityEstimate | None = None
    epsilon_estimate: float | None = None
    attack: ThresholdAttack | None = None
    seeds: WitnessSeeds | None = None
    values: tuple[Any, Any] | None = None
    input_encoding: str = ""
    output_set: str = ""

    def __post_init__(self) -> None:
        # Normalise numpy scalars/arrays to plain tuples of floats (hashable, JSON-ready);
        # words (word-level mechanisms) stay strings.
        object.__setattr__(self, "kind", WitnessKind(self.kind))
        object.__setattr__(self, "x", _floats(self.x))
        object.__setattr__(self, "x_prime", _floats(self.x_prime))
        object.__setattr__(self, "epsilon_lower_bound", float(self.epsilon_lower_bound))

    @classmethod
    def analytic(cls, x: Any, x_prime: Any, privacy_loss: float, event: str = "") -> Witness:
        """An exact witness: the pair ``x, x'`` has privacy loss ``privacy_loss`` (at ``event``)."""
        return cls(WitnessKind.ANALYTIC, x, x_prime, event, privacy_loss)

    def describe(self) -> str:
        """One line: the pair, the event and what it proves (no classifier state)."""
        eps = "∞" if math.isinf(self.epsilon_lower_bound) else f"{self.epsilon_lower_bound:.4g}"
        level = "exactly" if self.confidence is None else f"at confidence {self.confidence:g}"
        a, b = self.shown_inputs()
        pair = f"x = {a}, x' = {b}"
        if self.pair_origin:
            pair += f" ({self.pair_origin})"
        if self.p1 is None or self.p2 is None:
            return f"{pair}: ε ≥ {eps} {level}" + (f"; {self.event}" if self.event else "")
        return (
            f"{pair}; S = {self.shown_set()}: Pr[M(x) ∈ S] {self.p1.describe()}, "
            f"Pr[M(x') ∈ S] {self.p2.describe()}; ε ≥ {eps} {level}"
        )

    def shown_set(self) -> str:
        """``S`` as a reader should see it: its output values where they are categorical."""
        if self.output_set:
            return self.output_set
        return f"{{{self.event}}}"

    def shown_inputs(self) -> tuple[str, str]:
        """``x`` and ``x'`` as a reader should see them: the user's values when typed."""
        if self.values is not None:
            return format_value(self.values[0]), format_value(self.values[1])
        return format_input(self.x), format_input(self.x_prime)

    def summary(self) -> dict[str, Any]:
        """Short ``label → value`` lines for a report (what :func:`describe` says, itemised)."""
        out: dict[str, Any] = {"kind": self.kind.value}
        for key, v in (("x", self.x), ("x_prime", self.x_prime)):
            out[key] = v if isinstance(v, str) else list(v) if len(v) <= 8 else format_input(v)
        if self.values is not None:
            out["x"], out["x_prime"] = self.shown_inputs()
        if self.pair_origin:
            out["pair"] = self.pair_origin
        if self.attack is not None:
            out["attack"] = f"{self.attack.family}: S = {{y : {self.event}}}"
            if self.output_set:
                out["S"] = self.output_set
        else:
            out["event"] = self.event
        if self.p1 is not None and self.p2 is not None:
            out["p1 = Pr[M(x) ∈ S]"] = _count_text(self.p1)
            out["p2 = Pr[M(x') ∈ S]"] = _count_text(self.p2)
        if self.epsilon_estimate is not None:
            out["ε estimate ln(p1/p2)"] = self.epsilon_estimate
        if self.seeds is not None:
            out["seeds"] = dataclasses.asdict(self.seeds)
        return out

    def __str__(self) -> str:
        return self.describe()

    @staticmethod
    def json_fields(data: dict[str, Any]) -> dict[str, Any]:
        """:meth:`to_dict`'s JSON as field values: a typed domain's user values back in ``values``.

        The decoder (:func:`dpaudit.serialization.from_jsonable`) calls this before it
        builds the witness from its fields.
        """
        fields = dict(data)
        if "x_encoded" in fields:
            fields["values"] = [fields["x"], fields["x_prime"]]
            fields["x"], fields["x_prime"] = fields.pop("x_encoded"), fields.pop("x_prime_encoded")
        return fields

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict; optional fields a source lacks are left out (``confidence`` stays)."""
        out: dict[str, Any] = {
            "kind": self.kind.value,
            "x": self.x if isinstance(self.x, str) else list(self.x),
            "x_prime": self.x_prime if isinstance(self.x_prime, str) else list(self.x_prime),
        }
        if self.values is not None:
            out["x_encoded"], out["x_prime_encoded"] = out["x"], out["x_prime"]
            out["x"], out["x_prime"] = self.values
            out["input_encoding"] = self.input_encoding
        if self.pair_origin:
            out["pair_origin"] = self.pair_origin
        out["event"] = self.event
        if self.output_set:
            out["output_set"] = self.output_set
        for name in ("attack", "p1", "p2", "epsilon_estimate"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        out["epsilon_lower_bound"] = self.epsilon_lower_bound
        out["confidence"] = self.confidence
        if self.seeds is not None:
            out["seeds"] = self.seeds
        return out
