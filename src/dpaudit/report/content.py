"""The report's content as a list of blocks, independent of the output format.

Both renderers (:mod:`dpaudit.report.markdown`, :mod:`dpaudit.report.html`)
walk the same blocks built by :func:`build_document`, so the two files always
say the same thing in the same order:

1. the answer (:mod:`dpaudit.report.claims`): every claim found false with its
   certified bound, confidence, witness and evidence; then the claims that held
   with their power, then the inconclusive ones;
2. the reproduction scorecard a reviewer can quote: the papers and figures,
   every finding of the papers with the paper's number beside ours and whether
   it reproduced;
3. one section per figure: the figure, what it shows in plain words, the
   paper's numbers beside ours, the audited mechanisms, where and why we differ;
4. the witnesses, grouped per figure, each titled by what distinguishes it.

Text is kept raw here; :class:`Text` marks whether it is trusted Markdown
written by dpaudit (``**bold**``, ``*italic*``, `` `code` ``, ``- `` lists)
or plain text that may come from a corpus or a user.  Each renderer escapes
it for its format.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from dpaudit.report.blocks import (
    Block,
    Bullets,
    Heading,
    Image,
    Links,
    Table,
    Text,
    WitnessCard,
)
from dpaudit.report.bounds import bound_text, scrub_negative_bounds
from dpaudit.report.collect import FigureEntry, RunContents, fmt
from dpaudit.rundir.layout import FIGURE_FILES, RUN_STATUS
from dpaudit.rundir.records import AuditRecord, FigureResult, ReportTable
from dpaudit.rundir.status import STATUS_COMPLETE, RunStatus
from dpaudit.serialization import to_jsonable
from dpaudit.verdicts import Verdict

#: Marks of the reproduction scorecard: whether the paper's finding reproduced (◆), in a
#: colour of its own, never a tick: a reproduced "Laplace is never flagged" is not an
#: audit's pass.  One this scale cannot test, or one the run could neither show nor refute,
#: gets a neutral mark of its own.
SHOWS, NOT_SHOWN = "◆ reproduced", "◇ not reproduced"
NOT_AT_SCALE, UNDECIDED = "– not tested at this scale", "? inconclusive"
_MARKS = {"shows": SHOWS, "not shown": NOT_SHOWN, "not shown at this scale": NOT_AT_SCALE,
          "inconclusive": UNDECIDED}  # fmt: skip
VIOLATION, NONE_FOUND = Verdict.VIOLATION.label, Verdict.NO_VIOLATION_FOUND.label
INCONCLUSIVE = Verdict.INCONCLUSIVE.label
#: The one mark of "the audit found a violation" (✗, red), beside the verdict everywhere.
VIOLATION_MARK = f"✗ {VIOLATION}"
#: An inconclusive audit's mark; "no violation found" gets none (it is no pass).
INCONCLUSIVE_MARK = f"? {INCONCLUSIVE}"


# ------------------------------------------------------------------ run status
def status_line(run: RunContents) -> tuple[bool, str]:
    """``(complete, sentence)`` describing whether the run finished every figure."""
    status = run.status
    if run.complete and status is not None:
        took = _took(status)
        return True, (
            f"Complete run: {len(run.figures)} figure(s) at scale '{status.config.scale}', "
            f"root seed {status.config.seed}{took}."
        )
    state = None if status is None else status.status
    missing = run.missing_figures
    if state is None:
        text = f"INCOMPLETE RUN (status: unknown (no {RUN_STATUS}))."
    elif state == STATUS_COMPLETE:
        # The run said it finished, yet a figure's results are gone: say what is missing.
        text = "INCOMPLETE RUN: results are missing for some figures."
    else:
        text = f"INCOMPLETE RUN (status: {state})."
    text += " The results below are partial."
    if missing:
        text += f" Missing figures: {', '.join(missing)}."
    if status is not None and status.error:
        text += f" Error: {status.error}"
    return False, text


def _took(status: RunStatus) -> str:
    """`` in 206 s`` of work; with the part earlier runs did when a ``--resume`` kept some.

    The work time is each figure's, summed across the runs of the directory, so a
    resume that had nothing left to do reports the work's time, not its own 0 s.
    A status written before work times were kept gives its run's wall time.
    """
    work = status.total_work_seconds
    if work is None:
        return f" in {status.seconds:.0f} s" if status.seconds is not None else ""
    earlier = status.earlier_seconds or 0.0
    if earlier <= 0.0:
        return f" in {work:.0f} s"
    if earlier >= work - 0.5:  # nothing left to do: the last run only kept what was there
        last = "" if status.seconds is None else f"; the last resume took {status.seconds:.0f} s"
        return f" in {work:.0f} s of work, all of it in earlier runs{last}"
    return (
        f" in {work:.0f} s of work, {earlier:.0f} s of it in earlier runs "
        f"and {work - earlier:.0f} s in the last resume"
    )


# ------------------------------------------------------------------ formatting
def params_text(params: Mapping[str, Any]) -> str:
    """Mechanism parameters as ``k=v, ...`` (ε shown separately, unset ones left out)."""
    shown = [f"{k}={_value(v)}" for k, v in params.items() if k != "epsilon" and v is not None]
    return ", ".join(shown) or "—"


def _value(v: Any) -> str:
    if isinstance(v, float | int) and not isinstance(v, bool):
        return fmt(v, 6)
    if isinstance(v, list | tuple):
        return "(" + ", ".join(_value(x) for x in v) + ")"
    return str(v)


def _cell(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float | int):
        return fmt(v)
    if isinstance(v, str) and v in ("inf", "-inf", "nan"):
        return fmt(v)
    return str(v)


#: Parameter names as a reader writes them.
_SYMBOLS = {"epsilon": "ε", "lambda": "λ", "dim": "n", "delta": "δ"}


def _named(key: str, value: Any) -> str:
    return f"{_SYMBOLS.get(key, key)} = {_value(value)}"


# ------------------------------------------------------------------ findings
def findings(result: FigureResult) -> list[tuple[str, str, str, str]]:
    """``(status, statement, ours, paper)`` for each qualitative finding of a figure.

    A finding read from an older file without a status follows ``holds``
    (:meth:`~dpaudit.rundir.records.Finding.from_dict`).
    """
    return [(f.status, f.statement, f.detail, f.paper) for f in result.findings]


def figure_label(entry: FigureEntry) -> str:
    """A short name for a figure: the paper's short name and the figure number."""
    paper = entry.result.paper
    number = re.search(r"Fig(?:ure)?\.?\s*([0-9]+[a-z–-]*)", paper)
    author = paper.split(",")[0].split("'")[0].strip() or entry.name
    year = re.search(r"(19|20)[0-9]{2}", paper)
    short = f"{author} {year.group(0)}" if year else author
    short = short.replace("Salem & Zanella-Béguelin", "HoHo")
    return f"{short}, Fig. {number.group(1)}" if number else entry.name


# ------------------------------------------------------------------ audits
def audit_verdict(audit: AuditRecord) -> str:
    """An audit's verdict label: VIOLATION, inconclusive (too few samples) or none found."""
    if audit.verdict in (Verdict.VIOLATION, Verdict.INCONCLUSIVE):
        return audit.verdict.label
    return NONE_FOUND


def verdict_mark(audit: AuditRecord) -> str:
    """The verdict with its mark: ``✗ VIOLATION``, ``? inconclusive``, ``no violation found``."""
    verdict = audit_verdict(audit)
    return {VIOLATION: VIOLATION_MARK, INCONCLUSIVE: INCONCLUSIVE_MARK}.get(verdict, verdict)


def _short_methods(audits: Sequence[AuditRecord]) -> list[str]:
    """Each audit's method with the part shared by all of them removed (``""`` if all equal)."""
    methods = [a.method for a in audits]
    if len(set(methods)) <= 1:
        return ["" for _ in methods]
    parts = [m.split(", ") for m in methods]
    common = 0
    while all(len(p) > common + 1 for p in parts) and len({p[common] for p in parts}) == 1:
        common += 1
    out = []
    for p in parts:
        rest = ", ".join(p[common:])
        out.append(rest.split(" (")[0])
    return out


def _claimed_epsilon(audit: AuditRecord) -> Any:
    """The claimed ε for a label; None for a claim with no single ε (a μ-GDP curve: NaN)."""
    value = audit.claimed_epsilon
    return None if isinstance(value, float) and math.isnan(value) else to_jsonable(value)


def audit_labels(audits: Sequence[AuditRecord]) -> list[str]:
    """Each audit's title: its claimed ε and what tells it from the figure's others (λ, n, mode)."""
    if not audits:
        return []
    columns: list[tuple[str, list[Any]]] = [
        ("mechanism", [a.mechanism for a in audits]),
        ("epsilon", [_claimed_epsilon(a) for a in audits]),
    ]
    # Parameter names are the mechanisms' own (a free mapping): every name any audit has.
    keys: list[str] = []
    for a in audits:
        for k in a.parameters:
            if k != "epsilon" and k not in keys:
                keys.append(k)
    columns += [(k, [a.parameters.get(k) for a in audits]) for k in keys]
    # The claimed ε is always named (it says which cell of a grid an audit is); other
    # columns only where they tell the audits apart.
    varying = [
        (k, vals) for k, vals in columns if k == "epsilon" or len({json.dumps(v) for v in vals}) > 1
    ]
    methods = _short_methods(audits)
    labels = []
    for i, a in enumerate(audits):
        parts = []
        for k, vals in varying:
            if vals[i] is None:
                continue  # a parameter this mechanism does not have
            parts.append(str(vals[i]) if k == "mechanism" else _named(k, vals[i]))
        if methods[i]:
            parts.append(methods[i])
        labels.append(", ".join(parts) or a.mechanism)
    return labels


def audit_table(entry: FigureEntry) -> list[Block]:
    """The figure's audited mechanisms: one short row each, shared facts said once above."""
    audits = list(entry.result.audits)
    if not audits:
        return []
    labels = audit_labels(audits)
    methods = {a.method for a in audits}
    confidences = {fmt(a.confidence, 3) for a in audits}
    shared = []
    if len(methods) == 1:
        shared.append(f"Method: {methods.pop()}.")
    if len(confidences) == 1:
        shared.append(f"Each ε lower bound holds with confidence {next(iter(confidences))}.")
    mechanisms = {a.mechanism for a in audits}
    lead = f"Mechanism audited: {mechanisms.pop()}. " if len(mechanisms) == 1 else ""
    rows = []
    curves = any(_claimed_epsilon(a) is None for a in audits)  # a μ-GDP curve: no single ε
    for label, a in zip(labels, audits, strict=True):
        rows.append(
            (
                label,
                a.claim if _claimed_epsilon(a) is None else fmt(a.claimed_epsilon),
                fmt(a.true_epsilon),
                bound_text(a.epsilon_lower_bound, "")
                + ("" if len(confidences) == 1 else f" @ {fmt(a.confidence, 3)}"),
                verdict_mark(a),
            )
        )
    return [
        Heading(3, "Audited mechanisms"),
        Text(lead + " ".join(shared) + " Full witnesses: see the end of the report."),
        Table(
            (
                "configuration",
                "claim" if curves else "claimed ε",
                "exact ε (analysis)",
                "ε lower bound" + ("" if len(confidences) == 1 else " @ confidence"),
                "verdict",
            ),
            tuple(rows),
            marks=4,
        ),
    ]


def audit_details(audit: AuditRecord) -> list[tuple[str, str]]:
    """``(label, text)`` lines describing one audit (the witness is :func:`witness_items`)."""
    truth = "not known in closed form"
    if audit.true_epsilon is not None:
        truth = f"ε = {fmt(audit.true_epsilon, 6)}"
        if audit.truth_method:
            truth += f" ({audit.truth_method})"
    return [
        ("claim", audit.claim),
        ("verdict", audit.verdict_text),
        ("analytic truth", truth),
        (
            "empirical ε lower bound",
            f"{bound_text(audit.epsilon_lower_bound, '', 6)} with confidence "
            f"{fmt(audit.confidence, 4)}",
        ),
        ("method", audit.method),
        ("parameters", params_text(audit.parameters)),
    ]


def witness_items(audit: AuditRecord) -> list[tuple[str, str]]:
    """An audit's witness card as ``(label, text)`` lines; nested values as compact JSON.

    The lines are :attr:`~dpaudit.rundir.records.AuditRecord.card_lines` as
    ``results.json`` holds them (``inf`` as ``"inf"``), so a card reads the same
    whether its lines were stored or derived from the typed witness.
    """
    items = []
    for key, value in to_jsonable(audit.card_lines).items():
        if isinstance(value, dict | list):
            text = json.dumps(value, separators=(", ", ": "), ensure_ascii=False)
        elif isinstance(value, float | int) and not isinstance(value, bool):
            text = fmt(value, 6)
        else:
            text = str(value)
        items.append((str(key), scrub_negative_bounds(text)))
    return items


# ------------------------------------------------------------------ tables
def comparison_table(result: FigureResult) -> Table | None:
    """The figure's raw comparison rows as one table (used when it has no ``tables``)."""
    rows = result.comparison  # each figure's own columns: free mappings
    if not rows:
        return None
    keys = list(dict.fromkeys(k for row in rows for k in row))
    body = tuple(tuple(_cell(row.get(k)) for k in keys) for row in rows)
    return Table(tuple(keys), body)


def _table(t: ReportTable) -> Table:
    return Table(t.headers, tuple(tuple(_cell(c) for c in row) for row in t.rows), t.title, t.note)


def figure_tables(result: FigureResult) -> list[Table]:
    """The tables a reader sees for one figure: its own ``tables``, else its comparison."""
    tables = [_table(t) for t in result.tables]
    if tables:
        return tables
    table = comparison_table(result)
    return [] if table is None else [table]


def run_facts(result: FigureResult) -> str:
    """Scale, seed, timings and versions of one figure in one line."""
    total = result.total_seconds
    versions = ", ".join(f"{k} {v}" for k, v in result.versions.items())
    took = f", {total:.1f} s" if total is not None else ""
    return f"scale {result.scale}, seed {result.seed}{took}; {versions}"


# ------------------------------------------------------------------ figure text
def figure_text(entry: FigureEntry) -> tuple[str, str, str]:
    """``(shows, method, differences)`` of a figure, as dpaudit's Markdown.

    Taken from ``results.json``; a figure that does not record them there
    (written by an older dpaudit) has them read back from its README, whose
    layout :func:`dpaudit.reproduce.common.readme_page` fixes.
    """
    result = entry.result
    shows, method, differences = result.shows, result.method, result.differences
    readme = entry.readme or ""
    if not shows:
        shows = _readme_section(readme, "What this shows")
    if not method:
        method = _readme_section(readme, "How it was made")
    if not method and readme:  # the layout before "How it was made" had its own heading
        match = re.search(r"^Reproduces .*?\n\n(.*?)\n\n(?:\[?!\[figure\])", readme, re.S | re.M)
        method = match.group(1).strip() if match else ""
    if not differences:
        differences = _readme_section(readme, "Where and why this differs from the paper")
    return shows, method, differences


def _readme_section(readme: str, heading: str) -> str:
    """The text under ``## heading`` of a figure's README, up to the next ``##`` heading."""
    match = re.search(rf"^## {re.escape(heading)}\n\n(.*?)(?:\n\n## |\Z)", readme, re.S | re.M)
    return match.group(1).strip() if match else ""


def markdown_blocks(text: str) -> list[Block]:
    """dpaudit's own Markdown (paragraphs, ``- `` lists, pipe tables) as blocks."""
    blocks: list[Block] = []
    for para in re.split(r"\n\s*\n", text.strip()):
        lines = para.split("\n")
        if not para.strip():
            continue
        if lines[0].startswith("- "):
            items: list[str] = []
            for line in lines:
                if line.startswith("- "):
                    items.append(line[2:].strip())
                elif items:
                    items[-1] += " " + line.strip()
            blocks.append(Bullets(tuple(items), markdown=True))
        elif lines[0].startswith("|") and len(lines) >= 2:
            cells = [_pipe_cells(line) for line in lines if not re.match(r"^\|[-|: ]+\|$", line)]
            blocks.append(Table(tuple(cells[0]), tuple(tuple(r) for r in cells[1:])))
        elif lines[0].startswith("#"):
            blocks.append(Heading(4, lines[0].lstrip("# ").strip()))
            if len(lines) > 1:
                blocks.extend(markdown_blocks("\n".join(lines[1:])))
        else:
            blocks.append(Text(" ".join(line.strip() for line in lines), markdown=True))
    return blocks


def _pipe_cells(line: str) -> list[str]:
    cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
    return [c.strip().replace("\\|", "|") for c in cells]


# ------------------------------------------------------------------ document
def _plain(text: str) -> str:
    """Text from a results file made safe to embed in dpaudit's Markdown (marks removed)."""
    return re.sub(r"[*`\[\]_]", "", text)


def _count_text(statuses: Sequence[str]) -> str:
    """``"2 of 4 findings reproduced; 1 not shown at this scale, 1 inconclusive"``."""
    held = sum(s == "shows" for s in statuses)
    text = f"{held} of {len(statuses)} findings reproduced"
    rest = [f"{statuses.count(s)} {s}" for s in _MARKS if s != "shows" and s in statuses]
    return text + ("; " + ", ".join(rest) if rest else "")


def _group_label(entry: FigureEntry) -> str:
    """A figure's row in the summary: link, paper, and how many findings show."""
    found = findings(entry.result)
    held = sum(f[0] == "shows" for f in found)
    paper = _plain(entry.result.paper)
    return f"[{figure_label(entry)}](#{entry.name}) — {paper} — {held}/{len(found)} reproduced"


def _paper_count(run: RunContents) -> int:
    return len({re.sub(r",? *(§|Fig).*$", "", e.result.paper) for e in run.figures})


def summary_blocks(run: RunContents) -> list[Block]:
    """The reproduction scorecard: papers, their findings with numbers, and whether they reproduced.

    It follows the claims' sections (:func:`dpaudit.report.claims.claims_blocks`); the run's
    status opens the report above both (:func:`status_blocks`).
    """
    all_found = [(e, f) for e in run.figures for f in findings(e.result)]
    audits = run.audits()
    flagged = sum(a.violation for _, a in audits)
    unsure = sum(audit_verdict(a) == INCONCLUSIVE for _, a in audits)
    scale = "?" if run.status is None else run.status.config.scale
    blocks: list[Block] = [
        Heading(2, "Reproduction scorecard", "summary"),
        Text(
            f"This run reproduces {len(run.figures)} figure(s) from "
            f"{_paper_count(run)} paper(s) at scale '{scale}'. "
            f"**{_count_text([f[0] for _, f in all_found])}** (the papers' own, and "
            "dpaudit's checks marked 'not in paper'); only ◆ counts as reproduced ('–': not "
            "audited at this scale, '?': too few samples to tell). ◆ says the paper's finding "
            "reproduced, not that a mechanism passed: a reproduced 'never flagged' is no proof "
            "of privacy."
            + (
                f" The audits flag **{flagged} of {len(audits)}** audited configurations as "
                "violating their privacy claim ([listed first](#violations))"
                + (f"; {unsure} are inconclusive (not a pass)." if unsure else ".")
                if audits
                else ""
            )
            + " ε lower bounds are one-sided: they can show a violation, never prove privacy.",
            markdown=True,
        ),
    ]
    rows = []
    for entry, (status, statement, ours, paper) in all_found:
        rows.append((_group_label(entry), statement, paper or "—", ours or "—", _MARKS[status]))
    if rows:
        blocks.append(
            Table(
                ("figure", "finding", "paper", "this run (cell)", "reproduced?"),
                tuple(rows),
                marks=4,
                group_column=0,
                css="findings",
            )
        )
    return blocks


def figure_blocks(entry: FigureEntry) -> list[Block]:
    """One figure's section: image, what it shows, paper beside ours, audits, differences."""
    result = entry.result
    shows, method, differences = figure_text(entry)
    blocks: list[Block] = [
        Heading(2, f"{figure_label(entry)}: {entry.title}", entry.name),
    ]
    present = [(label, f"{entry.name}/{name}") for name, label in FIGURE_FILES
               if (entry.directory / name).is_file()]  # fmt: skip
    if entry.png is not None:
        full = tuple((label, path) for label, path in present if label in ("SVG", "PNG"))
        blocks.append(Image(entry.name, entry.png, entry.title, full))
    blocks.append(Text(f"Reproduces {result.paper}."))
    if present:
        blocks.append(Links("Files:", tuple(present)))
    if result.scope:
        blocks += [Heading(3, f"What was audited at scale '{result.scale}'")]
        blocks += markdown_blocks(result.scope)
    if shows:
        blocks += [Heading(3, "What this shows"), *markdown_blocks(shows)]
    found = findings(result)
    if found:
        counts = _count_text([f[0] for f in found])
        text = f"Findings: {counts} in this run ([scorecard](#summary))."
        blocks.append(Text(text, markdown=True))
    tables = figure_tables(result)
    if tables:  # "paper beside ours" only where a table holds a paper's numbers
        paper = any("paper" in str(h).lower() for t in tables for h in t.headers)
        blocks.append(Heading(3, "Paper beside ours" if paper else "The numbers"))
    for table in tables:
        blocks.append(Table(table.headers, table.rows, title=table.title, note=table.note))
    blocks += audit_table(entry)
    if differences:
        blocks += [Heading(3, "Where and why this differs from the paper")]
        blocks += markdown_blocks(differences)
    for note in result.notes:
        blocks.append(Text(note, kind="note"))
    if method:
        blocks += [Heading(3, "How it was made"), *markdown_blocks(method)]
    blocks.append(Text(f"Run: {run_facts(result)}", kind="facts"))
    return blocks


def witness_blocks(run: RunContents) -> list[Block]:
    """Every audit's full evidence, grouped per figure, titled by what distinguishes it."""
    blocks: list[Block] = []
    for entry in run.figures:
        audits = list(entry.result.audits)
        if not audits:
            continue
        blocks.append(Heading(3, f"{figure_label(entry)}: {entry.title}", f"{entry.name}-w"))
        for i, (label, a) in enumerate(zip(audit_labels(audits), audits, strict=True)):
            lines = audit_details(a)
            lines += [(f"witness: {k}", v) for k, v in witness_items(a)]
            title = f"{label} — {verdict_mark(a)}"
            blocks.append(WitnessCard(title, tuple(lines), a.violation, f"{entry.name}-w{i}"))
    if blocks:
        blocks.insert(0, Heading(2, "Witnesses", "witnesses"))
        blocks.insert(
            1,
            Text(
                "What proves each ε lower bound: the pair of inputs, the attack (the set S of "
                "outputs), the counts and the seeds. Grouped per figure; in the HTML report each "
                "card is folded: click its title to open it."
            ),
        )
    return blocks


def status_blocks(run: RunContents) -> list[Block]:
    """The run's status banner, the report's first line."""
    complete, status = status_line(run)
    kind = "status-ok" if complete else "status-bad"
    return [Text(("" if complete else "⚠ ") + status, kind=kind)]
