"""The conformance checks of a training algorithm (:func:`dpaudit.testing.check_mechanism`).

Each check runs the trainer as an audit would, on a few canaries, so a trainer that passes
them can be audited (it says nothing about privacy; :func:`dpaudit.audit` does):

* ``claim`` — a claim with a privacy profile (an (ε, δ) point or a curve): finite ε ≥ 0,
  δ in [0, 1);
* ``base`` — a non-empty base dataset, and ``with_base`` gives the same trainer on other data
  (the text canaries are drawn from the data and leave it);
* ``scores`` — one finite number per canary for each named score, for canaries in and out,
  the same names every run;
* ``seeding`` — same seed → same scores, different seeds → different scores; a fixed seed
  (or a module-level generator) fails, as the audit would refuse it;
* ``pickling`` — the trainer survives ``pickle`` (worker processes and Ray receive it so).
"""

from __future__ import annotations

import math
import pickle

from dpaudit.auditors.training.canaries import Canaries, draw_canaries
from dpaudit.auditors.training.one_run import TrainingRun, probe_randomness, run_training
from dpaudit.errors import DPAuditError
from dpaudit.mechanisms.training.contract import TrainingMechanism
from dpaudit.random import unit_rng
from dpaudit.testing.results import CheckResult, error_text, failed, passed

#: Canaries each check trains with (half of them in).
CHECK_CANARIES = 6


def _claim(trainer: TrainingMechanism) -> CheckResult:
    claim = trainer.claim
    if not callable(getattr(claim, "profile", None)):
        return failed("claim", f"{claim!r} has no privacy profile (a claim of dpaudit.claims)")
    eps = getattr(claim, "epsilon", None)
    delta = float(getattr(claim, "delta", 0.0))
    if eps is not None and not (math.isfinite(eps) and eps >= 0):
        return failed("claim", f"ε = {eps} is not a finite number >= 0")
    if not 0.0 <= delta < 1.0:
        return failed("claim", f"δ = {delta} is not in [0, 1)")
    return passed("claim", claim.describe())


def _canaries(trainer: TrainingMechanism) -> Canaries:
    kind = "gradient" if trainer.access == "white-box" else "random-tokens"
    return draw_canaries(kind, CHECK_CANARIES, trainer.base, unit_rng(0, (1,)))


def _base(trainer: TrainingMechanism) -> CheckResult:
    base = trainer.base
    if not len(base):
        return failed("base", "the base dataset is empty")
    try:
        smaller = trainer.with_base(tuple(base)[1:])
    except DPAuditError as exc:
        return failed("base", error_text(exc))
    if not isinstance(smaller, TrainingMechanism) or len(smaller.base) != len(base) - 1:
        return failed("base", "with_base(records) did not return the trainer on those records")
    return passed("base", f"{len(base)} records; with_base gives the trainer on other data")


def _scores(trainer: TrainingMechanism, seed: int) -> CheckResult:
    canaries = _canaries(trainer).records
    half = tuple(i % 2 == 0 for i in range(len(canaries)))
    names = []
    for run in range(2):
        try:
            scores, _ = run_training(TrainingRun(trainer, canaries, half, seed, (7, run)))
        except DPAuditError as exc:
            return failed("scores", error_text(exc))
        names.append(tuple(scores))
    if names[0] != names[1]:
        return failed("scores", f"different score names in two runs: {names}")
    return passed("scores", f"{len(canaries)} canaries scored by {', '.join(names[0])}")


def _seeding(trainer: TrainingMechanism, seed: int) -> CheckResult:
    try:
        found = probe_randomness(trainer, _canaries(trainer), seed).randomness
    except DPAuditError as exc:
        return failed("seeding", error_text(exc))
    if found.kind == "unseedable":
        return failed("seeding", "the same seed gave different scores: draw from the rng given")
    return passed("seeding", f"{found.kind}: same seed → same scores")


def _pickling(trainer: TrainingMechanism) -> CheckResult:
    try:
        again = pickle.loads(pickle.dumps(trainer))
    except Exception as exc:  # any pickling failure is the finding
        return failed("pickling", f"the trainer cannot be pickled ({type(exc).__name__}: {exc})")
    if type(again) is not type(trainer):
        return failed("pickling", "unpickling gave another type")
    return passed("pickling", "survives pickle (process pools and Ray)")


def training_checks(trainer: TrainingMechanism, seed: int) -> list[CheckResult]:
    """Every check of the module docstring, in order (an error in one fails that one)."""
    checks = (
        ("claim", lambda: _claim(trainer)),
        ("base", lambda: _base(trainer)),
        ("scores", lambda: _scores(trainer, seed)),
        ("seeding", lambda: _seeding(trainer, seed)),
        ("pickling", lambda: _pickling(trainer)),
    )
    results = []
    for name, check in checks:
        try:
            results.append(check())
        except DPAuditError as exc:
            results.append(failed(name, error_text(exc)))
    return results


__all__ = ["CHECK_CANARIES", "training_checks"]
