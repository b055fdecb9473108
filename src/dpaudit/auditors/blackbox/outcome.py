"""Building the black-box audit's witness and result from the final counts.

Shared by both modes; the witness is :class:`dpaudit.witness.Witness`, the
result :class:`dpaudit.results.audit.AuditResult` with its
:class:`~dpaudit.auditors.blackbox.result.BlackBoxDetail`.  Imports nothing above ``auditors/``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpaudit.auditors.blackbox.config import AuditConfig
from dpaudit.auditors.blackbox.pairs import InputPair, only_listed_are_neighbours
from dpaudit.auditors.blackbox.representation import RepresentationScore
from dpaudit.auditors.blackbox.result import BlackBoxDetail
from dpaudit.auditors.blackbox.selection import Candidate, log_ratio
from dpaudit.auditors.core.answer import (
    Judged,
    epsilon_evidence,
    untestable_epsilon,
)
from dpaudit.auditors.core.certify import Certificate, FinalCounts
from dpaudit.auditors.core.power import describe_power, power_summary
from dpaudit.auditors.core.procedure import Reading
from dpaudit.auditors.core.proposal import Proposal, record
from dpaudit.errors import DPAuditError
from dpaudit.mechanisms.base import Mechanism
from dpaudit.results.statement import CertifiedStatement
from dpaudit.witness import ThresholdAttack, Witness, WitnessKind, WitnessSeeds, format_value


def typed_inputs(mech: Mechanism, x: tuple[float, ...], xp: tuple[float, ...]) -> dict[str, Any]:
    """The witness fields naming the user's own inputs, for a mechanism whose inputs are encoded.

    A mechanism audited through an encoding of a typed domain (``input_value``, e.g.
    :class:`dpaudit.adapters.callable.FunctionMechanism` on ``--domain int:0..10``)
    gives the value each encoded input stands for and the rule; others give nothing.
    """
    values = (mech.input_value(x), mech.input_value(xp))
    if values[0] is None:
        return {}
    return {"values": values, "input_encoding": mech.input_encoding}


#: Outputs drawn per input to name a witness set by the output values it contains.
OUTPUT_DRAWS = 256
#: Most distinct outputs for which the set is listed by its values (else the threshold).
MAX_LISTED = 12


def _drawn_outputs(mech: Mechanism, x: tuple[float, ...], seed: int) -> Any:
    """``OUTPUT_DRAWS`` outputs at ``x``: (the rows the audit sees, the user's values or None).

    A mechanism calling a user function (``function``) whose outputs are not arrays of
    numbers has its rows encoded from the values; the values are drawn again from
    the same seed with the function itself (it draws from its ``rng`` alone, which the
    audit's trust check enforces; :func:`output_set_text` checks that they agree).
    """
    shaped = np.asarray(x, dtype=np.float64).reshape(mech.input_shape)
    rows = np.asarray(mech.sample(shaped, OUTPUT_DRAWS, np.random.default_rng(seed)))
    function = getattr(mech, "function", None)
    if function is None or rows.dtype.kind not in "f":
        return rows, None
    value = mech.input_value(x)
    raw = function(shaped if value is None else value, OUTPUT_DRAWS, np.random.default_rng(seed))
    if isinstance(raw, np.ndarray) and raw.dtype.kind in "biuf":
        if raw.ndim > 2 or (raw.ndim == 2 and raw.shape[1] != 1):
            return rows, None  # vectors of numbers: listed only when the rows are scalars
        raw = raw.ravel()
    values = list(raw)
    return rows, values if len(values) == rows.shape[0] else None


def output_set_text(
    mech: Mechanism, x: tuple[float, ...], xp: tuple[float, ...], c: Candidate
) -> str:
    """Candidate ``c``'s set ``S`` as the output values it contains, e.g. ``{'GREEN'}``.

    Only where the outputs are categorical: at most :data:`MAX_LISTED` distinct
    outputs among :data:`OUTPUT_DRAWS` fresh draws at each input (strings and other
    non-numbers are shown as the user's values, one number per output as a number).
    Each is in ``S`` when its score passes the threshold, as the audit decided; one on
    the threshold is kept with the set's tie probability.  ``""`` otherwise, and when
    the draws cannot be made: the witness then names ``S`` by its threshold alone.
    The draws use a generator of their own, so no count of the audit changes.
    """
    rows, values = [], []
    try:
        for seed, point in enumerate((x, xp)):
            r, v = _drawn_outputs(mech, point, seed)
            rows.append(r.reshape(r.shape[0], -1))
            values.append(v)
        outputs = np.concatenate(rows)
        scores = np.asarray(c.score(outputs), dtype=np.float64)
    except (DPAuditError, AttributeError, TypeError, ValueError):
        return ""
    typed = values[0] is not None and values[1] is not None
    if not typed and outputs.shape[1] != 1:
        return ""
    labels = [*values[0], *values[1]] if typed else [None] * outputs.shape[0]
    shown: dict[str, float] = {}
    row_of: dict[str, bytes] = {}
    for i, (row, value) in enumerate(zip(outputs, labels, strict=True)):
        if isinstance(value, np.generic):
            value = value.item()
        text = f"{row[0]:g}" if value is None else format_value(value)
        if row_of.setdefault(text, row.tobytes()) != row.tobytes():
            return ""  # the values drawn again disagree with the rows: name S by its threshold
        shown.setdefault(text, float(scores[i]))
        if len(shown) > MAX_LISTED:
            return ""
    if len(set(row_of.values())) != len(row_of):
        return ""
    inside = []
    for text, score in sorted(shown.items()):
        beyond = score > c.threshold if c.tail == "upper" else score < c.threshold
        if beyond or (score == c.threshold and c.tie_probability == 1.0):
            inside.append(text)
        elif score == c.threshold and c.tie_probability > 0.0:
            inside.append(f"{text} (with probability {c.tie_probability:.3g})")
    return "{" + ", ".join(inside) + "}" if inside else ""


def build_witness(
    mech: Mechanism,
    pair: InputPair,
    c: Candidate,
    cert: Certificate,
    seed: int,
    num_key: tuple[int, ...],
    den_key: tuple[int, ...],
    confidence: float,
) -> Witness:
    """The black-box witness of candidate ``c``, certified as ``cert`` by the core.

    Its bound holds at ``confidence`` overall when ``cert`` was certified together with
    every other set re-estimated on the final samples.
    """
    x, xp = (pair.x, pair.x_prime) if c.numerator_is_x else (pair.x_prime, pair.x)
    attack = threshold_attack(pair, c)
    p1, p2 = cert.p1, cert.p2
    return Witness(
        **typed_inputs(mech, x, xp),
        output_set=(
            c.score.set_text(c.threshold, c.tail, c.tie_probability)
            if isinstance(c.score, RepresentationScore)
            else output_set_text(mech, x, xp, c)
        ),
        kind=WitnessKind.BLACK_BOX,
        x=x,
        x_prime=xp,
        pair_origin=pair.origin,
        event=attack.set_description,
        confidence=confidence,
        attack=attack,
        p1=p1,
        p2=p2,
        epsilon_estimate=log_ratio(p1.hits, p1.samples, p2.hits, p2.samples, cert.delta),
        epsilon_lower_bound=cert.lower_bound,
        seeds=WitnessSeeds(seed, num_key, den_key),
    )


def threshold_attack(pair: InputPair, c: Candidate) -> ThresholdAttack:
    """Candidate ``c``'s set on ``pair`` as the attack a witness names."""
    return ThresholdAttack(
        family=c.score.family,
        score=c.score.describe(),
        score_inputs=(pair.x, pair.x_prime),
        tail=c.tail,
        threshold=c.threshold,
        tie_probability=c.tie_probability,
        target_mass=c.target_mass,
        classifier=c.score.parameters(),
    )


def proposals(roles: list[str], chosen: list[Candidate]) -> list[Proposal]:
    """The search's final sets as the proposals the core certifies (``roles``: why each)."""
    return [
        Proposal(c.pair_index, c.numerator_is_x, c, role)
        for role, c in zip(roles, chosen, strict=True)
    ]


def certified_sets(
    pairs: list[InputPair],
    proposed: list[Proposal],
    faces: list[float],
    counts: list[FinalCounts],
    certs: list[Certificate],
) -> tuple[CertifiedStatement, ...]:
    """The record of every set certified together: each proposal (its event a search
    candidate) with its face projection, final counts and certificate."""
    out = []
    for p, face, n, cert in zip(proposed, faces, counts, certs, strict=True):
        attack = threshold_attack(pairs[p.pair_index], p.event)
        event = f"{attack.family} {attack.set_description}"
        out.append(record(p, n, cert, event, face_projection=face))
    return tuple(out)


def result_reading(
    mech: Mechanism,
    cfg: AuditConfig,
    witness: Witness,
    families: tuple[str, ...],
    pairs: list[InputPair],
    n_compared: int,
    certified_proposals: int,
    certified: tuple[CertifiedStatement, ...] = (),
    *,
    screened: int = 0,
    representation: str = "",
) -> Reading:
    """What an audit whose best certified set is ``witness`` says (the core assembles it).

    ``certified_proposals``: ``K``, the number of sets certified together on the final
    samples; ``certified``: those sets (:func:`certified_sets`), where recorded.  The
    witness's set is the statement judged; without a violation, the power of the final
    sample size says whether it could have shown one
    (:func:`~dpaudit.auditors.core.power.power_summary`).
    """
    claim = mech.claim
    lcb = witness.epsilon_lower_bound
    notes = []
    if witness.p2.hits == 0:
        notes.append(
            f"no output of M(x') fell in S: the bound is limited only by the sample size "
            f"(p2_upper = 1 − (error)^(1/n) = {witness.p2.bound:.3g} with n = "
            f"{witness.p2.samples})"
        )
    notes.append(inputs_note(mech, pairs, screened, witness.pair_origin))
    if representation:
        notes.append(representation)
    power: dict[str, float] = {}
    testable, blind = True, ""
    if not lcb > claim.epsilon:
        n_final = min(witness.p1.samples, witness.p2.samples)
        power = power_summary(claim.epsilon, n_final, witness.p1.bound_error, claim.delta)
        notes.append(describe_power(claim.epsilon, power))
        testable = math.isfinite(power["mass 0.5"])
        blind = untestable_epsilon(claim.epsilon, power["ceiling"], n_final)
    return Reading(
        judged=(Judged.of_bound(max(0.0, lcb), claim.epsilon, testable=testable),),
        evidence=epsilon_evidence(max(0.0, lcb), claim.epsilon, claim.delta, blind),
        bound=lcb,
        witness=witness,
        detail=BlackBoxDetail(
            cfg.mode, families, len(pairs), n_compared, certified_proposals, certified
        ),
        notes=tuple(notes),
        power=power,
        claim_text=mech.claim_text,
    )


def no_witness_reading(
    mech: Mechanism,
    cfg: AuditConfig,
    pairs: list[InputPair],
    families: tuple[str, ...],
    n_compared: int,
    *,
    screened: int = 0,
    representation: str = "",
) -> Reading:
    """What an audit says when no candidate set had a finite projected bound: nothing was
    certified."""
    claim = mech.claim
    return Reading(
        judged=(Judged.of_bound(0.0, claim.epsilon),),
        evidence=epsilon_evidence(0.0, claim.epsilon, claim.delta),
        bound=0.0,
        witness=None,
        detail=BlackBoxDetail(cfg.mode, families, len(pairs), n_compared, 0),
        notes=(
            "no candidate had a positive projected bound",
            inputs_note(mech, pairs, screened, None),
            *((representation,) if representation else ()),
        ),
        claim_text=mech.claim_text,
    )


#: How each kind of pair is named in :func:`inputs_note`, by the start of its origin.
_ORIGINS = (
    ("given", "given"),
    ("design", "from the input design"),
    ("pair search", "moves of the pair search"),
)


def inputs_note(
    mech: Mechanism, pairs: list[InputPair], screened: int, witness_origin: str | None
) -> str:
    """What the audit looked at: the pairs it trained, where they came from, and what not.

    A black-box audit only ever sees the inputs it samples; this sentence says so, with
    the design's spacing where it ran (a leak confined to a region narrower than that,
    or to one exact input value, is found only by luck).
    """
    kinds: dict[str, int] = {}
    for p in pairs:
        kind = next((name for start, name in _ORIGINS if p.origin.startswith(start)), None)
        kinds[kind or "generated patterns"] = kinds.get(kind or "generated patterns", 0) + 1
    parts = ", ".join(f"{n} {kind}" for kind, n in kinds.items())
    domain = mech.input_domain
    every = domain.integer and domain.size == 1 and screened >= domain.high - domain.low + 1
    best = f"; the witness's pair: {witness_origin}" if witness_origin else ""
    head = f"inputs looked at: {len(pairs)} pair(s) trained ({parts})"
    if only_listed_are_neighbours(mech):
        design = (
            f"; the input design screened {screened} neighbouring pairs, one record added to "
            "(or replacing one of) a small dataset for each record value it spread over the "
            "record domain"
            if screened
            else "; no input design ran"
        )
        return (
            f"{head}{design}{best}. Datasets no pair visits are not covered: a loss that needs "
            "other records, or a record value the design did not take, could not have been seen"
        )
    if screened and every:
        return (
            f"{head}; the input design screened every pair of the domain's {screened} inputs "
            f"on small samples{best}. A loss on a pair the screen ranked low and no stage "
            "trained could not have been seen"
        )
    design = (
        f"; the input design screened {screened} inputs spread over the domain (spacing "
        f"≈ 1/{screened ** (1.0 / domain.size):.3g} of each range)"
        if screened
        else "; no input design ran"
    )
    return (
        f"{head}{design}{best}. Inputs no pair visits are not covered: a loss confined to "
        "them (one exact input value, or a region narrower than the spacing) could not have "
        "been seen"
    )


def search_chosen(
    compared: tuple[int, int, int],
    playoff: bool,
    sets: tuple[int, int, int, int, int],
) -> str:
    """How the dpaudit-mode search chose the sets it certifies, in words (the head of the
    confidence sentence; ``auditor``'s docstring).

    ``compared``: pairs, attack families and threshold/direction candidates compared
    before the final samples; ``sets``: ``K`` and how many of them are runners-up,
    hedges, ladder rungs and rare-event sets (the rest are the best candidates).
    """
    k, runners, hedges, rungs, rare = sets
    pairs, families, candidates = compared
    hedged = f"{hedges} leading set(s) under the ranking's own margin, " if hedges else ""
    chosen = (
        f"{pairs} pair(s), {families} attack famil(ies) and {candidates} threshold/direction "
        f"candidates were compared on separate training, ranking"
        f"{' and playoff' if playoff else ''} samples, so choosing among them costs no "
        f"confidence; {k} set(s) ({k - rungs - runners - hedges - rare} best candidate(s), "
        f"{runners} runner(s)-up too close to call, {hedged}{rungs} smaller set(s) of the "
        f"winner's kind) were re-estimated on fresh final samples."
    )
    if rare:
        chosen += (
            f" {rare} of the {k} set(s) are rare-event sets (clusters of repeated or "
            "nearly equal training outputs), counted in that K."
        )
    return chosen
