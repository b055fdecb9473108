"""A training algorithm as dpaudit audits it: ``train(dataset, rng) -> model``, then scores.

The claim of a model trained with DP-SGD ("we trained at ε = 8, δ = 10⁻⁵") is a claim about
the *training algorithm*: for any two datasets that differ in one record (add/remove, the
neighbouring relation of Opacus' and dp-transformers' accountants), the distribution of
everything released — the final model, or every step's privatised gradient for a white-box
adversary — changes by at most (ε, δ).  An audit inserts *canaries* (records chosen by the
auditor) and asks how well a score on the released model tells whether each was in.

:class:`TrainingMechanism` is the one contract every trainer implements, the built-in
DP-SGD (:mod:`dpaudit.mechanisms.training.dpsgd`), Opacus
(:mod:`dpaudit.mechanisms.training.opacus_classifier`) and a user's own functions alike
(:class:`CallableTraining`):

* :meth:`~TrainingMechanism.train` — train once on ``dataset`` with randomness drawn from
  ``rng`` only, and return the released model (whatever object the trainer releases);
* :meth:`~TrainingMechanism.score` — one number per record, *high where the record looks
  included* (minus its loss for a black-box adversary, the privatised gradients' alignment
  with a gradient canary for a white-box one);
* :attr:`~TrainingMechanism.base` — the private dataset the canaries are added to;
* :meth:`~TrainingMechanism.combine` — ``base`` plus some canaries, as ``train`` takes it;
* :attr:`~TrainingMechanism.claim` — what the trainer's own accountant says, as any claim of
  :mod:`dpaudit.claims.curves` (an (ε, δ) point, or the RDP / μ-GDP curve).

The claim is a *hint* the audit tests, never a fact it trusts: the audit only ever looks at
models trained by the code and scored on canaries it chose.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, NamedTuple

import numpy as np

from dpaudit.errors import InvalidArgumentError, InvalidTypeError, MechanismError


class TextRecord(NamedTuple):
    """One labelled sentence, the record of the text classifiers (a plain tuple to users)."""

    text: str
    label: int


class GradientCanary(NamedTuple):
    """A Dirac gradient canary for a white-box audit of DP-SGD (Nasr et al., USENIX Sec. 2023).

    In the white-box threat model the adversary may insert a record whose per-example
    gradient it chooses: here ``clip_norm · sign · e_coordinate`` on one of the trainer's
    *canary coordinates* (parameters no data record touches), already at the clipping norm.
    Its score is the privatised gradient's sum along that coordinate over all steps.
    """

    coordinate: int
    sign: float = 1.0


#: What a score may read: the final model only, or every step's privatised gradient.
ACCESS = ("black-box", "white-box")


class TrainingMechanism(ABC):
    """A training algorithm with its private data, its score and its accountant's claim."""

    #: Name shown in results (``"dpsgd"``, ``"opacus"``, a user's ``module:function``).
    name: ClassVar[str] = ""
    #: Paper and equation the algorithm follows.
    reference: ClassVar[str] = ""
    #: The names :meth:`scores` returns for gradient canaries (white-box trace statistics);
    #: empty when it offers only ``score``.  A hint the multi-run audit picks its score from
    #: before any training; :meth:`scores` itself is what is checked.
    gradient_scores: ClassVar[tuple[str, ...]] = ()
    #: The canary kind an audit draws when none is named; None: ``gradient`` for a white-box
    #: trainer, ``mislabelled`` otherwise.
    default_canary_kind: ClassVar[str | None] = None

    @property
    @abstractmethod
    def claim(self) -> Any:
        """The accountant's claim for add/remove-one-record neighbours (a curve claim)."""

    @property
    @abstractmethod
    def base(self) -> Any:
        """The private dataset canaries are added to."""

    @property
    def access(self) -> str:
        """What :meth:`score` reads: ``"black-box"`` (final model) or ``"white-box"``."""
        return "black-box"

    @abstractmethod
    def train(self, dataset: Any, rng: np.random.Generator) -> Any:
        """Train once on ``dataset`` drawing randomness from ``rng`` only; the released model."""

    @abstractmethod
    def score(self, model: Any, records: Sequence[Any]) -> np.ndarray:
        """One finite number per record, high where the record looks included in training."""

    def scores(self, model: Any, records: Sequence[Any]) -> dict[str, np.ndarray]:
        """Every score the trainer offers, by name (default: :meth:`score` alone).

        An audit tries each and pays for each (Bonferroni): a white-box trainer offers
        several statistics of its trace (:mod:`~dpaudit.mechanisms.training.trace_scores`).
        """
        return {"score": self.score(model, records)}

    def trace(self, model: Any, records: Sequence[Any]) -> np.ndarray | None:
        """White box: each gradient canary's coordinate of every step's privatised gradient,
        times its sign, over the clipping norm, shape (steps, records); None (the default)
        when the trainer releases no per-step trace.  The multi-run audit fits a score to it
        on pilot runs (:mod:`~dpaudit.auditors.training.multi_run`)."""
        return None

    def with_base(self, records: Sequence[Any]) -> TrainingMechanism:
        """The same trainer on other base data (canaries drawn from the data leave it)."""
        raise MechanismError(
            f"{self.name} cannot be given other base data: implement with_base(records)"
        )

    def combine(self, base: Any, canaries: Sequence[Any]) -> Any:
        """``base`` plus ``canaries``, as :meth:`train` takes a dataset (default: a list)."""
        return [*base, *canaries]

    def spec(self) -> dict[str, Any]:
        """JSON-ready description: name and parameters."""
        params: dict[str, Any] = {}
        if dataclasses.is_dataclass(self):
            for f in dataclasses.fields(self):
                if f.metadata.get("spec", True):
                    params[f.name] = _jsonable(getattr(self, f.name))
        return {"mechanism": self.name, "params": params}

    def user_code(self) -> Any:
        """The user's own callable, if this wraps one (for the fixed-seed check); else None."""
        return None


def _jsonable(value: Any) -> Any:
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    return repr(value) if not hasattr(value, "describe") else value.describe()


def checked_scores(scores: Any, count: int, who: str) -> np.ndarray:
    """``scores`` as ``count`` finite float64 numbers, or a :class:`MechanismError` saying why."""
    try:
        arr = np.asarray(scores, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise MechanismError(f"{who} returned scores that are not numbers: {exc}") from None
    if arr.size != count:
        raise MechanismError(f"{who} returned {arr.size} scores for {count} records")
    if not np.all(np.isfinite(arr)):
        bad = int(np.count_nonzero(~np.isfinite(arr)))
        raise MechanismError(f"{who} returned {bad} non-finite score(s) (NaN or inf)")
    return arr


@dataclasses.dataclass(frozen=True, eq=False)
class CallableTraining(TrainingMechanism):
    """A user's own ``train(dataset, rng) -> model`` and ``score(model, records) -> scores``.

    ``dataset`` is ``list(base) + included canaries``; ``claim`` is what the user's
    accountant reports (``dpaudit.claims.ApproxDP(8, 1e-5)``, a ``RenyiDP`` curve ...).
    """

    train_function: Callable[[Any, np.random.Generator], Any]
    score_function: Callable[[Any, Sequence[Any]], Any]
    base_records: Sequence[Any]
    declared_claim: Any
    label: str = "user training"
    declared_access: str = "black-box"

    name: ClassVar[str] = "training"
    reference: ClassVar[str] = "the user's own training code"

    def __post_init__(self) -> None:
        for flag, fn in (("train", self.train_function), ("score", self.score_function)):
            if not callable(fn):
                raise InvalidTypeError(flag, fn, "a callable")
        if self.declared_access not in ACCESS:
            raise InvalidArgumentError("access", self.declared_access, f"one of {ACCESS}")

    @property
    def claim(self) -> Any:
        return self.declared_claim

    @property
    def base(self) -> Sequence[Any]:
        return self.base_records

    @property
    def access(self) -> str:
        return self.declared_access

    def with_base(self, records: Sequence[Any]) -> CallableTraining:
        return dataclasses.replace(self, base_records=tuple(records))

    def train(self, dataset: Any, rng: np.random.Generator) -> Any:
        return self.train_function(dataset, rng)

    def score(self, model: Any, records: Sequence[Any]) -> np.ndarray:
        return checked_scores(self.score_function(model, records), len(records), self.label)

    def spec(self) -> dict[str, Any]:
        return {"mechanism": self.label, "params": {"records": len(self.base_records)}}

    def user_code(self) -> Any:
        return self.train_function


__all__ = [
    "ACCESS",
    "CallableTraining",
    "GradientCanary",
    "TextRecord",
    "TrainingMechanism",
    "checked_scores",
]
