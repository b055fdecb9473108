"""End to end: ``reproduce all --scale tiny`` writes every figure and a self-contained report.

The tiny scale exercises each figure's whole pipeline (auditor → results →
CSV/PNG/README → report) in seconds; its numbers prove nothing and are not
checked against the papers here (the quick/paper scales do that, see each
figure's README).  The report is rendered in headless Chromium with every host
name mapped to nowhere, and Chromium's own network log is checked for any
request the page made.
"""

from __future__ import annotations

import csv
import html
import json
import math
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpaudit.cli.main import main
from dpaudit.reproduce import registry
from dpaudit.reproduce.acl_loss import (
    exact_attack_loss,
    loss_standard_error,
    loss_upper_bound,
)
from dpaudit.reproduce.reference_data import acl2022_published, acl2022_published_runs
from dpaudit.results.audit import AuditorKind, AuditResult
from dpaudit.rundir.layout import (
    FIGURE_PNG,
    FIGURE_README,
    FIGURE_SVG,
    REPORT_HTML,
    REPORT_MD,
    RESULTS_CSV,
    RESULTS_JSON,
    RUN_STATUS,
)
from dpaudit.rundir.records import load_figure_result
from dpaudit.serialization import dumps
from dpaudit.witness import Witness

FIGURE_FILES = (RESULTS_JSON, RESULTS_CSV, FIGURE_PNG, FIGURE_SVG, FIGURE_README)


# The tests that read tiny_run are slow: the fixture runs every figure end to end
# (about 10 s on an idle core).  test_worker_count_does_not_change_results below runs
# one figure end to end in the quick subset, and tests/test_report.py the report.
@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("reproduce") / "run"
    code = main(
        ["--quiet", "reproduce", "all", "--scale", "tiny", "--workers", "1", "--out", str(out)]
    )
    assert code == 0
    return out


@pytest.mark.slow  # uses tiny_run: `reproduce all` end to end
def test_every_figure_has_all_outputs(tiny_run: Path) -> None:
    for name in registry.figure_names():
        fig_dir = tiny_run / name
        for file in FIGURE_FILES:
            assert (fig_dir / file).is_file(), f"{name}/{file}"
        data = json.loads((fig_dir / RESULTS_JSON).read_text())
        assert data["figure"] == name and data["scale"] == "tiny" and data["seed"] == 0
        for key in ("parameters", "sample_counts", "timings", "versions", "rows", "findings"):
            assert data[key], f"{name}: empty {key}"
        assert {"python", "dpaudit", "numpy", "scipy"} <= set(data["versions"])
        with (fig_dir / RESULTS_CSV).open() as fh:
            assert len(list(csv.DictReader(fh))) == len(data["rows"])
        png = (fig_dir / FIGURE_PNG).read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
        svg = (fig_dir / FIGURE_SVG).read_text()
        assert svg.lstrip().startswith("<?xml") and "<svg" in svg and len(svg) > 10_000
        for key in ("shows", "method", "differences"):
            assert len(data[key]) > 100, f"{name}: no words for the report ({key})"
        readme = (fig_dir / FIGURE_README).read_text()
        assert "Where and why this differs from the paper" in readme
        assert FIGURE_PNG in readme


@pytest.mark.slow  # uses tiny_run (`reproduce all`); quick sibling: tests/test_records_audit.py
def test_every_figure_result_reads_back_typed_and_byte_for_byte(tiny_run: Path) -> None:
    """``results.json`` → FigureResult → JSON gives the same file, for every real figure."""
    audited, kinds = {}, {}
    for name in registry.figure_names():
        path = tiny_run / name / RESULTS_JSON
        result = load_figure_result(path)
        assert dumps(result) + "\n" == path.read_text(), name
        audited[name] = [type(a.witness).__name__ for a in result.audits]
        # Every record stores its audit's own typed result (no figure builds one without).
        assert all(isinstance(a.audit, AuditResult) for a in result.audits), name
        kinds[name] = {a.audit.kind for a in result.audits if a.audit is not None}
    # Where a figure audits, its records carry the typed witness (the ACL grid's random-bits
    # mechanism has none: no event separates its outputs).
    for name in ("hoho-fig2", "mldp-lrec2024", "lm-rewriters"):
        assert audited[name] and set(audited[name]) == {Witness.__name__}, name
    assert audited["habernal2022-fig2"].count(Witness.__name__) >= 4
    assert kinds["hoho-fig2"] == {AuditorKind.BLACKBOX}
    assert kinds["habernal2022-fig2"] == {AuditorKind.SANITY}
    assert kinds["mldp-lrec2024"] == {AuditorKind.METRIC}
    assert kinds["lm-rewriters"] == {AuditorKind.REWRITER}


@pytest.mark.slow  # uses tiny_run: `reproduce all` end to end
def test_run_status_and_report_are_complete(tiny_run: Path) -> None:
    status = json.loads((tiny_run / RUN_STATUS).read_text())
    assert status["status"] == "complete"
    assert status["figures_done"] == registry.figure_names()
    md = (tiny_run / REPORT_MD).read_text()
    page = (tiny_run / REPORT_HTML).read_text()
    assert f"Complete run: {len(registry.figure_names())} figure(s)" in md
    assert "INCOMPLETE" not in md
    for name in registry.figure_names():
        title = json.loads((tiny_run / name / RESULTS_JSON).read_text())["title"]
        assert html.escape(title) in page, name
        assert f"{name}/{FIGURE_PNG}" in md
    # Audited mechanisms: the ACL grid's five (one witness each, titled by mechanism and
    # cell) and OME's twelve (titled by ε, λ and the auditor's mode).
    for mechanism in ("identity", "random-bits", "laplace", "adept-acl22", "dptext"):
        assert f"<summary>{mechanism}, ε = " in page
    for mode in ("DP-Sniper mode", "dpaudit mode"):
        assert page.count(f", {mode} — ") == 6
    assert page.count('src="data:image/png;base64,') == len(registry.figure_names())
    # Every figure's own words are in the HTML, not only in its README.
    assert page.count("<h3>What this shows</h3>") == len(registry.figure_names())
    assert page.count("<h3>Where and why this differs from the paper</h3>") == len(
        registry.figure_names()
    )


@pytest.mark.slow  # uses tiny_run: `reproduce all` end to end
def test_report_html_is_self_contained(tiny_run: Path) -> None:
    page = (tiny_run / REPORT_HTML).read_text()
    assert "http://" not in page and "https://" not in page
    assert not re.search(r"<(script|link|iframe|object|embed)\b", page, re.IGNORECASE)
    assert "@import" not in page and "url(" not in page
    for attr in re.findall(r"""\bsrc\s*=\s*["']([^"']*)""", page, re.IGNORECASE):
        assert attr.startswith("data:"), attr  # every image is inside the file
    anchors = set(re.findall(r'\bid="([^"]+)"', page))
    for attr in re.findall(r"""\bhref\s*=\s*["']([^"']*)""", page, re.IGNORECASE):
        if attr.startswith("#"):
            assert attr[1:] in anchors, attr
        else:  # a relative link to a full-size file beside the report, never elsewhere
            assert ":" not in attr and ".." not in attr and not attr.startswith("/"), attr
            assert (tiny_run / attr).is_file(), attr


@pytest.mark.slow  # uses tiny_run: `reproduce all` end to end
def test_report_escapes_corpus_text(tiny_run: Path) -> None:
    data = json.loads((tiny_run / "hoho-fig1" / RESULTS_JSON).read_text())
    page = (tiny_run / REPORT_HTML).read_text()
    examples = data["extra"]["examples"]
    assert examples
    for example in examples:
        assert html.escape(example["sentence"], quote=True) in page


def test_hoho_fig1_reads_a_corpus_given_with_data(tmp_path: Path) -> None:
    words = ["good", "bad", "food", "service", "great", "slow", "nice", "place", "staff", "price"]
    rng = np.random.default_rng(0)
    lines = [" ".join(rng.choice(words, size=5)) + f" <b>{i}</b>\t{i % 2}" for i in range(60)]
    corpus = tmp_path / "tiny_corpus.txt"
    corpus.write_text("\n".join(lines) + "\n")
    out = tmp_path / "run"
    code = main(
        ["--quiet", "reproduce", "hoho-fig1", "--scale", "tiny", "--data", str(corpus),
         "--out", str(out)]
    )  # fmt: skip
    assert code == 0
    data = json.loads((out / "hoho-fig1" / RESULTS_JSON).read_text())
    assert data["parameters"]["corpus"] == str(corpus)
    assert data["sample_counts"]["sentences"] == 60
    page = (out / REPORT_HTML).read_text()
    # The corpus's markup is shown as text (dpaudit's own bold is <b>...</b> of words).
    assert not re.search(r"<b>\d+</b>", page) and re.search(r"&lt;b&gt;\d+&lt;/b&gt;", page)


def test_worker_count_does_not_change_results(tmp_path: Path) -> None:
    rows = []
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}"
        argv = ["--quiet", "reproduce", "habernal2021-fig1", "--scale", "tiny", "--seed", "7"]
        assert main([*argv, "--workers", workers, "--out", str(out)]) == 0
        rows.append(json.loads((out / "habernal2021-fig1" / RESULTS_JSON).read_text())["rows"])
    assert rows[0] == rows[1]


# ------------------------------------------------------------------ Chromium
def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _page_requests(netlog: Path) -> list[str]:
    """URLs the page itself requested, from Chromium's NetLog.

    Browser-internal requests (time sync, account checks) carry the initiator
    "not an origin"; requests made by the page carry its origin (``null`` for
    a file:// page).
    """
    text = netlog.read_text(errors="replace").rstrip().rstrip(",")
    if not text.endswith("}"):
        text += "]}"  # Chromium may leave the event list open on exit
    log = json.loads(text)
    kinds = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    urls = []
    for event in log["events"]:
        params = event.get("params") or {}
        started = kinds.get(event["type"]) == "URL_REQUEST_START_JOB" and "url" in params
        if started and params.get("initiator") != "not an origin":
            urls.append(params["url"])
    return urls


@pytest.mark.slow  # uses tiny_run: `reproduce all` end to end
def test_report_renders_in_headless_chromium_without_network(
    tiny_run: Path, tmp_path: Path
) -> None:
    browser = _chromium()
    if browser is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium)")
    shot, netlog = tmp_path / "report.png", tmp_path / "netlog.json"
    cmd = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--host-resolver-rules=MAP * ~NOTFOUND",  # any host lookup fails
        f"--log-net-log={netlog}",
        f"--screenshot={shot}",
        "--window-size=1280,2000",
        (tiny_run / REPORT_HTML).resolve().as_uri(),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert shot.is_file(), proc.stderr[-2000:]
    assert _page_requests(netlog) == []
    from matplotlib import image

    pixels = image.imread(shot)[..., :3]
    assert pixels.shape[0] == 2000 and pixels.shape[1] == 1280
    # Not blank: a real page has text, tables and plots (dark pixels and variety).
    assert float(pixels.std()) > 0.05
    assert float(np.mean(pixels.mean(axis=2) < 0.5)) > 0.005


#: Measures the rendered page after load and appends the facts as JSON (test copy only:
#: the report itself has no script).
_LAYOUT_PROBE = """<script>
window.addEventListener("load", () => {
  const top = (e) => e ? e.getBoundingClientRect().top + window.scrollY : null;
  const facts = {
    viewport: [window.innerWidth, window.innerHeight],
    summary: top(document.getElementById("summary")),
    violations: top(document.getElementById("violations")),
    first_violation_row: top(document.querySelector("#violations ~ table tbody tr")),
    first_figure_heading: top(document.querySelector("section.figure h2")),
    images: [...document.querySelectorAll("figure.plot img")].map((img) => ({
      figure: img.closest("figure").id,
      top: top(img),
      rendered: img.getBoundingClientRect().width,
      natural: img.naturalWidth,
      linked: img.parentElement.tagName === "A" ? img.parentElement.getAttribute("href") : null,
    })),
    witnesses: top(document.getElementById("witnesses")),
    last_figure_section: top([...document.querySelectorAll("section.figure")].pop()),
    shows: [...document.querySelectorAll("section.figure")].map((sec) =>
      [...sec.querySelectorAll("h3")].map((h) => h.textContent)),
    page_width: document.documentElement.scrollWidth,
  };
  const out = document.createElement("pre");
  out.id = "layout-facts";
  out.textContent = JSON.stringify(facts);
  document.body.appendChild(out);
});
</script>"""


def _layout_facts(browser: str, page: Path, tmp_path: Path, size: str) -> dict:
    # The probe copy sits beside the real report so that relative links resolve alike.
    probe = page.with_name("layout-probe.html")
    probe.write_text(page.read_text().replace("</body>", _LAYOUT_PROBE + "</body>"))
    try:
        proc = _run_probe(browser, probe, tmp_path, size)
    finally:
        probe.unlink()
    match = re.search(r'<pre id="layout-facts">(.*?)</pre>', proc.stdout, re.S)
    assert match, proc.stderr[-2000:]
    return json.loads(html.unescape(match.group(1)))


def _run_probe(browser: str, probe: Path, tmp_path: Path, size: str) -> Any:
    return subprocess.run(
        [
            browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-dev-shm-usage",
            f"--user-data-dir={tmp_path / 'profile-layout'}", "--hide-scrollbars",
            "--host-resolver-rules=MAP * ~NOTFOUND", "--force-device-scale-factor=1",
            f"--window-size={size}", "--virtual-time-budget=10000", "--dump-dom",
            probe.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip


@pytest.mark.slow  # uses tiny_run: `reproduce all` end to end
def test_report_layout_as_a_reader_sees_it(tiny_run: Path, tmp_path: Path) -> None:
    """The claims found false first, then the scorecard, figures, witnesses; figures not shrunk."""
    browser = _chromium()
    if browser is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium)")
    facts = _layout_facts(browser, tiny_run / REPORT_HTML, tmp_path, "1280,900")
    width, height = facts["viewport"]  # the page's viewport: the window less its frame
    assert width == 1280 and 700 <= height <= 900, facts["viewport"]
    images = facts["images"]
    assert [i["figure"] for i in images] == [f"{n}-img" for n in registry.figure_names()]
    # The answer first (issue: findings before the scorecard): the table of claims found
    # false opens the report and its first row is on the first screen.
    assert facts["violations"] is not None and facts["violations"] < 0.5 * height, facts
    assert facts["first_violation_row"] < height, f"first row at {facts['first_violation_row']}"
    # Then the scorecard, the figures, and the witnesses last.
    assert facts["violations"] < facts["summary"] < facts["first_figure_heading"]
    assert facts["first_figure_heading"] < images[0]["top"]
    assert facts["last_figure_section"] < facts["witnesses"]
    for image in images:
        # Drawn for the report's width: shown at (nearly) the size its text was drawn at.
        assert image["natural"] > 500, image
        assert image["rendered"] >= 0.9 * image["natural"], image
        assert image["linked"] and image["linked"].endswith("/figure.svg"), image
    assert facts["page_width"] <= width  # nothing forces a horizontal scroll
    for headings in facts["shows"]:
        assert "What this shows" in headings
        assert "Where and why this differs from the paper" in headings


def test_chromium_netlog_check_catches_an_external_request(tmp_path: Path) -> None:
    """The network check itself can fail: a page with a remote image is caught."""
    browser = _chromium()
    if browser is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium)")
    page = tmp_path / "leaky.html"
    page.write_text('<html><body><img src="https://example.invalid/x.png">x</body></html>')
    netlog = tmp_path / "netlog.json"
    subprocess.run(
        [
            browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", f"--user-data-dir={tmp_path / 'p'}",
            "--host-resolver-rules=MAP * ~NOTFOUND", f"--log-net-log={netlog}",
            f"--screenshot={tmp_path / 's.png'}", "--window-size=400,300", page.as_uri(),
        ],
        capture_output=True,
        timeout=120,
    )  # fmt: skip
    assert any("example.invalid" in url for url in _page_requests(netlog))


# ------------------------------------------------- ACL 2022 comparison maths
def test_exact_attack_loss_matches_closed_form_for_laplace_n1() -> None:
    # n = 1: q0 = P(Lap(b) >= 0.5) = e^{-0.5/b}/2 and q1 = 1 − q0, loss = ln((1−q0)/q0).
    for eps in (0.1, 1.0, 10.0):
        q0 = 0.5 * math.exp(-0.5 * eps)
        expected = math.log((1 - q0) / q0)
        # The sampler's 32-bit uniform grid moves q by at most 2^-32 per flip point.
        assert exact_attack_loss("laplace", eps, 1) == pytest.approx(expected, rel=1e-6)


def test_exact_attack_loss_majority_vote_matches_enumeration() -> None:
    # n = 2 under ADePT (b = 1/ε): vote 1 iff both coordinates round to 1 (a tie votes 0).
    eps = 1.0
    b = 1.0 / eps
    q0 = 0.5 * math.exp(-0.5 / b)
    q1 = 1 - q0
    p1 = (q0**2, q1**2)  # P(vote 1 | x=0), P(vote 1 | x=1)
    expected = max(abs(math.log(p1[0] / p1[1])), abs(math.log((1 - p1[0]) / (1 - p1[1]))))
    assert exact_attack_loss("adept-acl22", eps, 2) == pytest.approx(expected, rel=1e-6)
    # Published (10M runs): 1.6617 — within a few standard errors of the exact value.
    assert expected == pytest.approx(1.6617, abs=0.01)


def test_exact_attack_loss_extremes() -> None:
    assert exact_attack_loss("identity", 1.0, 8) == math.inf
    assert exact_attack_loss("dptext", 1.0, 8) == math.inf
    assert exact_attack_loss("random-bits", 1.0, 8) == 0.0


def test_loss_bounds_bracket_the_estimate_and_cover_the_truth() -> None:
    # Seeded binomial counts from known probabilities: the interval holds the true loss.
    rng = np.random.default_rng(1)
    p = np.array([[0.6, 0.4], [0.45, 0.55]])  # P(guess | true)
    true_loss = max(abs(math.log(p[0, g] / p[1, g])) for g in (0, 1))
    runs = 200_000
    ones = rng.binomial(runs, p[:, 1])
    counts = np.array([[runs - ones[0], ones[0]], [runs - ones[1], ones[1]]])
    estimate = max(abs(math.log(counts[0, g] / counts[1, g])) for g in (0, 1))
    upper = loss_upper_bound(counts, runs, 0.95)
    assert estimate <= upper and true_loss <= upper
    se = loss_standard_error(counts, runs, runs)
    # Delta method for ln(f01/f11): sqrt(2·[(1−p0)/(N p0) + (1−p1)/(N p1)]) at the max guess.
    expected_se = math.sqrt(2 * ((1 - 0.4) / (runs * 0.4) + (1 - 0.55) / (runs * 0.55)))
    assert se == pytest.approx(expected_se, rel=0.05)
    assert abs(estimate - true_loss) < 5 * se / math.sqrt(2)  # 5 standard errors


def test_loss_standard_error_undefined_on_zero_counts() -> None:
    assert loss_standard_error(np.array([[10, 0], [0, 10]]), 10, 10) is None


def test_published_reference_data() -> None:
    data = acl2022_published()
    assert set(data) == {"identity", "random-bits", "laplace", "adept-acl22", "dptext"}
    for table in data.values():
        assert sorted(table) == [0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0]
        for row in table.values():
            assert sorted(row) == [1, 2, 8, 32, 64, 128]
    assert data["dptext"][1.0][8] == math.inf
    assert acl2022_published_runs(16) == 10_000_000 and acl2022_published_runs(32) == 1_000_000
    # Published Laplace at n = 1 agrees with the exact attack loss within 4 SE of 10M runs.
    q0 = 0.5 * math.exp(-0.5)
    se = math.sqrt(2 * ((1 - q0) / (1e7 * q0) + q0 / (1e7 * (1 - q0))))
    assert abs(data["laplace"][1.0][1] - math.log((1 - q0) / q0)) < 4 * se
