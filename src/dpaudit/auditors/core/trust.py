"""What an audit learns about the code before it trusts any count: one call, once per audit.

Every auditor starts with :func:`establish_trust` and nothing else checks the
mechanism's habits.  It does two things, for whatever the auditor is given:

1. **Randomness** (:mod:`dpaudit.auditors.core.guard`): three small draws —
   twice from one seed, once from another — tell apart code that follows the
   seed it is given (``seeded``), code whose output does not vary
   (``deterministic``) and code that draws from a source dpaudit cannot seed
   (``unseedable``: the audit is valid, the result says it cannot be repeated
   bit for bit).  A *fixed internal seed* raises
   :class:`~dpaudit.errors.MechanismError`: every chunk would repeat the same
   noise and any bound computed from it would be meaningless.  So does code
   whose outputs depend on the calls before (state kept between calls: the same
   seed gives other outputs after one call on another input), since its
   outputs are not independent draws on one input.  Vector and
   word mechanisms are probed by the same rule
   (:func:`~dpaudit.auditors.core.guard.classify_randomness`), each through its
   own sampling guard.  (Text samplers are not probed: a rewriter's outputs can
   repeat so often that a few rewrites cannot tell a fixed seed from a
   low-entropy mechanism, and enough rewrites to tell cost minutes.)
2. **Declarations** (:mod:`dpaudit.auditors.core.declarations`, vector
   mechanisms only): a declared density or noise transform is a hint for
   speed; each one the auditor will use is tested against the real sampler,
   and a contradiction is reported as a finding (the auditor then does not
   rely on it).

The result, a :class:`TrustReport`, is a value the auditor passes into the one
construction of its result (:func:`trust_fields`: ``reproducible``,
``declaration_findings`` and the notes); no finished result is patched.  Nothing is
remembered between audits: each audit checks the code it is given.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dpaudit.auditors.core.declarations import (
    DECLARATION_SEED,
    DeclarationFinding,
    check_log_prob,
    check_transform,
)
from dpaudit.auditors.core.guard import (
    RandomnessCheck,
    check_randomness,
    classify_randomness,
    sample_word_codes,
)
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.base import Mechanism, MechanismContract

if TYPE_CHECKING:  # the word package loads its mechanisms; vector audits need none of it
    from dpaudit.mechanisms.word.base import WordMechanism
from dpaudit.random import unit_rng

#: The declarations a vector mechanism may make, by the name of its method.
DECLARATIONS = ("log_prob", "noise_from_uniform")
#: Draws per randomness probe of a word mechanism, and the key tag of its seeds.
WORD_PROBE_ROWS, _WORD_TAG = 16, 29


@dataclass(frozen=True)
class TrustReport:
    """What :func:`establish_trust` found: the randomness kind and the contradicted declarations."""

    randomness: RandomnessCheck
    findings: tuple[DeclarationFinding, ...] = ()

    @property
    def reproducible(self) -> bool:
        """Whether the same seed reproduces the audit bit for bit."""
        return self.randomness.reproducible

    @property
    def notes(self) -> tuple[str, ...]:
        """Sentences for a result's notes: the reproducibility warning, if any."""
        return (self.randomness.warning,) if self.randomness.warning else ()

    def contradicts(self, declaration: str) -> bool:
        """True when the sampler contradicted ``declaration`` (one of :data:`DECLARATIONS`)."""
        return any(f.declaration == declaration for f in self.findings)


def trust_fields(
    trust: TrustReport | None,
    notes: Iterable[str] = (),
    findings: Iterable[DeclarationFinding] = (),
) -> dict[str, Any]:
    """The trust fields of a result, given to its construction (``AuditResult(**...)``).

    ``reproducible``, ``declaration_findings`` and ``notes``: ``trust``'s findings then the
    auditor's own ``findings`` (a declaration it checked itself, as the rewriter white box
    checks a recorded call's), ``trust``'s notes (the reproducibility warning, if any), then
    the auditor's own ``notes``.  ``trust = None`` (an audit that made no trust call) gives
    the defaults: reproducible, and only the auditor's findings.
    """
    if trust is None:
        return {"notes": tuple(notes), "declaration_findings": tuple(findings)}
    return {
        "reproducible": trust.reproducible,
        "declaration_findings": (*trust.findings, *findings),
        "notes": (*trust.notes, *notes),
    }


def establish_trust(
    subject: Mechanism | WordMechanism,
    *,
    seed: int = 0,
    probe: Any = None,
    declarations: Collection[str] = DECLARATIONS,
    transform_inputs: list[np.ndarray] | None = None,
) -> TrustReport:
    """Probe ``subject``'s randomness on ``probe`` and test the ``declarations`` it makes.

    ``probe``: the input the randomness probe runs on (a vector mechanism's
    default is the low corner of its domain; a word or text subject needs one).
    ``declarations``: which of :data:`DECLARATIONS` the auditor will rely on;
    only those the mechanism makes are tested (seeded by
    :data:`~dpaudit.auditors.core.declarations.DECLARATION_SEED`, so a finding
    does not depend on the audit's seed).  ``transform_inputs`` overrides the
    inputs of the transform test (default: the domain's corners).  Raises
    :class:`~dpaudit.errors.MechanismError` for a fixed internal seed.
    """
    unknown = sorted(set(declarations) - set(DECLARATIONS))
    if unknown:
        raise InvalidArgumentError("declarations", unknown, f"a subset of {DECLARATIONS}")
    if isinstance(subject, Mechanism):
        randomness = check_randomness(subject, probe, seed=seed)
        return TrustReport(randomness, _findings(subject, declarations, transform_inputs))
    if isinstance(subject, MechanismContract) and subject.output_kind == "word":
        if not isinstance(probe, str):
            raise InvalidArgumentError("probe", probe, "a word of the mechanism's vocabulary")
        return TrustReport(_word_randomness(subject, probe, seed))
    raise InvalidArgumentError("mechanism", subject, "a Mechanism or a WordMechanism")


def establish_training_trust(
    draw: Callable[[int], np.ndarray], label: str, user_code: Any = None
) -> TrustReport:
    """The randomness probe of a training algorithm: ``draw(tag)`` trains from seed ``tag``.

    Each draw is a few trainings (their canaries' scores stacked), so the probe costs a
    handful of runs, not the 192 outputs of a vector mechanism's; the rule is
    :func:`~dpaudit.auditors.core.guard.classify_randomness` (a fixed seed, or a module-level
    generator in ``user_code``'s module, is refused with :class:`MechanismError`).
    """
    holders = (user_code,) if user_code is not None else ()
    check = classify_randomness(
        draw, label, "two probe trainings", kind="training", holders=holders
    )
    return TrustReport(check)


def _findings(
    mechanism: Mechanism, declarations: Collection[str], inputs: list[np.ndarray] | None
) -> tuple[DeclarationFinding, ...]:
    found: list[DeclarationFinding | None] = []
    if "log_prob" in declarations and mechanism.has_log_prob:
        found.append(check_log_prob(mechanism, seed=DECLARATION_SEED))
    if "noise_from_uniform" in declarations:
        found.append(check_transform(mechanism, inputs, seed=DECLARATION_SEED))
    return tuple(f for f in found if f is not None)


def _word_randomness(mech: WordMechanism, word: str, seed: int) -> RandomnessCheck:
    def draw(tag: int, on: str = word) -> np.ndarray:
        rng = unit_rng(seed, (_WORD_TAG, tag))
        return np.asarray(sample_word_codes(mech, on, WORD_PROBE_ROWS, rng))

    words = mech.vocabulary.words
    other = next((w for w in words[:2] if w != word), None)  # state kept between calls?
    return classify_randomness(
        draw,
        mech.name,
        repr(word),
        kind="word mechanism",
        holders=(mech,),
        between=None if other is None else (lambda: draw(3, other)),
        between_on=repr(other),
    )
