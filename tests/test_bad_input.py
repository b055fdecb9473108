"""Bad-input and fault suite (issue 7 §5): every case ends in a clear error and leaves nothing.

CLI cases: exit 2, nothing on stdout, exactly one line on stderr (no traceback)
naming the problem, and no file or directory created (the working directory is
compared before and after; a ``--out`` directory must not exist afterwards).
API cases: a ``ValueError``/``TypeError`` subclass whose message names the argument.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from _cli import run_cli_quiet

from dpaudit.errors import MechanismError

USER_MODULE = """
import time
import numpy as np


def ok(x, n, rng):
    return x + rng.laplace(0.0, 1.0, size=(n, x.size))


def nan(x, n, rng):
    out = ok(x, n, rng)
    out[n // 2, 0] = np.nan
    return out


def posinf(x, n, rng):
    out = ok(x, n, rng)
    out[-1, 0] = np.inf
    return out


def neginf(x, n, rng):
    out = ok(x, n, rng)
    out[0, 0] = -np.inf
    return out


def wrong_shape(x, n, rng):
    return rng.laplace(0.0, 1.0, size=(n + 1, 1))


def one_string(x, n, rng):
    return "yes"  # one output, not a sequence of n


def complex_values(x, n, rng):
    return ok(x, n, rng).astype(complex)


def list_too_long(x, n, rng):
    return [float(v) for v in rng.laplace(0.0, 1.0, size=n + 1)]


def number_then_none(x, n, rng):
    out = [float(v) for v in rng.laplace(0.0, 1.0, size=n)]
    if n > 2:  # the probe (n = 2) sees numbers, the preflight a None
        out[-1] = None
    return out


def none(x, n, rng):
    return None


def raises(x, n, rng):
    raise ValueError("boom")


def hangs(x, n, rng):
    time.sleep(120)


def fixed_seed(x, n, rng):
    return x + np.random.default_rng(12345).laplace(0.0, 1.0, size=(n, x.size))


def nan_later(x, n, rng):
    out = ok(x, n, rng)
    if n > 100:  # passes the preflight, fails in the first real chunk
        out[n // 2, 0] = np.nan
    return out


def hangs_later(x, n, rng):
    if n > 100:
        time.sleep(120)
    return ok(x, n, rng)


not_callable = 3
"""


@pytest.fixture(scope="module")
def user_modules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("usermods")
    (root / "dpa_faulty.py").write_text(USER_MODULE)
    (root / "dpa_import_fails.py").write_text("raise RuntimeError('broken module')\n")
    sys.path.insert(0, str(root))
    yield root
    sys.path.remove(str(root))


SANITY = ["sanity-check", "--runs", "2000", "--workers", "1", "--epsilon", "1"]
AUDIT = ["audit", "--samples", "2000", "--final-samples", "2000", "--workers", "1"]
HOHO = ["attack", "hoho", "--scheme", "ome", "--epsilon", "1"]

# (id, argv, needle in the one-line error); {out} is a fresh run directory, {file} a
# regular file, {dir} an existing non-empty directory, {corpus:KIND} a malformed corpus.
CLI_CASES = [
    # -- a mechanism returning NaN, ±inf, the wrong shape or dtype, a list, None
    ("nan", [*SANITY, "dpa_faulty:nan"], "NaN"),
    ("posinf", [*SANITY, "dpa_faulty:posinf"], "inf"),
    ("neginf", [*SANITY, "dpa_faulty:neginf"], "inf"),
    ("wrong-shape", [*SANITY, "dpa_faulty:wrong_shape"], "shape"),
    ("one-string", [*SANITY, "dpa_faulty:one_string"], "returned str"),
    ("complex-dtype", [*SANITY, "dpa_faulty:complex_values"], "complex"),
    ("list-too-long", [*SANITY, "dpa_faulty:list_too_long"], "outputs for n = 2"),
    ("number-then-none", [*SANITY, "dpa_faulty:number_then_none"], "as output 15 of 16"),
    ("none", [*SANITY, "dpa_faulty:none"], "returned NoneType"),
    ("nan-in-audit", [*AUDIT, "dpa_faulty:nan", "--epsilon", "1", "--domain", "0,1"], "NaN"),
    # -- raising, hanging, ignoring the rng
    ("raises", [*SANITY, "dpa_faulty:raises"], "raised ValueError: boom"),
    ("hangs", [*SANITY, "dpa_faulty:hangs", "--unit-timeout", "1"], "did not finish within 1 s"),
    ("fixed-seed", [*SANITY, "dpa_faulty:fixed_seed"], "uses a fixed seed"),
    # -- faults that only show mid-run: the run directory it created is removed
    ("nan-mid-run", [*SANITY, "dpa_faulty:nan_later", "--out", "{out}"], "NaN"),
    (
        "hang-mid-run",
        [*SANITY, "dpa_faulty:hangs_later", "--unit-timeout", "1", "--out", "{out}"],
        "did not finish within 1 s",
    ),
    # -- ε or δ out of range
    ("epsilon-0", ["sanity-check", "laplace", "--epsilon", "0"], "epsilon"),
    ("epsilon-negative", ["sanity-check", "laplace", "--epsilon", "-1"], "epsilon"),
    ("epsilon-nan", ["sanity-check", "laplace", "--epsilon", "nan"], "epsilon"),
    ("epsilon-inf", ["audit", "laplace", "--epsilon", "inf"], "epsilon"),
    ("delta-1", [*SANITY, "dpa_faulty:ok", "--delta", "1"], "delta"),
    ("delta-negative", [*SANITY, "dpa_faulty:ok", "--delta", "-0.5"], "delta"),
    ("delta-unsupported", [*SANITY, "laplace", "--delta", "0.1"], "--delta"),
    ("epsilon-text-attack", [*HOHO[:-1], "0"], "epsilon"),
    # -- huge dims and sample counts: refused up front with the estimate
    ("huge-dim", ["sanity-check", "laplace", "--epsilon", "1", "-p", "dim=1000000000000"], "GiB"),
    ("huge-dim-callable", [*SANITY, "dpa_faulty:ok", "-p", "dim=1000000000000"], "fits in memory"),
    ("huge-train", [*AUDIT, "laplace", "--epsilon", "1", "--train-samples", "10" * 7], "GiB"),
    # -- auditors' arguments (issue 3)
    ("runs-0", ["sanity-check", "laplace", "--epsilon", "1", "--runs", "0"], "runs"),
    ("confidence-1.5", [*SANITY, "laplace", "--confidence", "1.5"], "confidence"),
    ("confidence-0", [*AUDIT, "laplace", "--epsilon", "1", "--confidence", "0"], "confidence"),
    ("unknown-mechanism", ["audit", "no-such-mech", "--epsilon", "1"], "unknown mechanism"),
    ("unknown-parameter", ["audit", "laplace", "--epsilon", "1", "-p", "nope=1"], "nope"),
    ("malformed-parameter", ["audit", "laplace", "--epsilon", "1", "-p", "dim"], "NAME=VALUE"),
    ("pair-outside-domain", [*AUDIT, "laplace", "--epsilon", "1", "--pair", "5;6"], "domain"),
    ("dims-0", ["simulate-sensitivity", "--dims", "0", "--pairs", "10"], "dims"),
    # -- counts written 1e6 must be whole; --dim is -p dim; unknown options hint at -p
    ("samples-fraction", [*AUDIT, "laplace", "--epsilon", "1", "--samples", "1.5"], "--samples"),
    ("runs-not-a-number", [*SANITY, "laplace", "--runs", "many"], "--runs"),
    ("dim-fraction", ["audit", "laplace", "--epsilon", "1", "--dim", "2.5"], "--dim"),
    ("dim-conflicts-with-p", ["analyze", "laplace", "--epsilon", "1", "--dim", "3", "-p", "dim=4"],
     "--dim"),
    ("dim-unsupported", ["audit", "randomized-response", "--epsilon", "1", "--dim", "3"], "--dim"),
    ("option-meant-as-param", ["audit", "ome", "--epsilon", "1", "--lambda", "10"], "-p lambda=10"),
    ("bound-0", ["simulate-sensitivity", "--dims", "1", "--bound", "0"], "bound"),
    # -- module:callable targets and claims from the command line
    ("missing-module", [*SANITY, "dpa_nowhere:f"], "importable module"),
    ("not-callable", [*SANITY, "dpa_faulty:not_callable"], "a callable"),
    ("missing-attribute", [*SANITY, "dpa_faulty:nope"], "defines nope"),
    ("module-import-raises", [*SANITY, "dpa_import_fails:f"], "broken module"),
    ("domain-reversed", [*SANITY, "dpa_faulty:ok", "--domain", "1,0"], "domain"),
    ("domain-text", [*SANITY, "dpa_faulty:ok", "--domain", "a,b"], "domain"),
    # -- output directory and execution options
    ("out-is-a-file", [*SANITY, "laplace", "--out", "{file}"], "--out"),
    ("out-not-empty", [*SANITY, "laplace", "--out", "{dir}"], "--out"),
    ("resume-without-out", [*SANITY, "laplace", "--resume"], "--resume"),
    ("resume-nothing-there", [*SANITY, "laplace", "--out", "{out}", "--resume"], "--resume"),
    ("unit-timeout-0", [*SANITY, "laplace", "--unit-timeout", "0"], "--unit-timeout"),
    ("reproduce-unknown-figure", ["reproduce", "nofig", "--out", "{out}"], "nofig"),
    ("reproduce-out-not-empty", ["reproduce", "hoho-fig2", "--out", "{dir}"], "--out"),
    ("reproduce-resume-nothing-there", ["reproduce", "hoho-fig2", "--out", "{out}", "--resume"],
     "--resume"),
    # -- malformed corpora, and a directory where a file is expected
    ("corpus-binary", [*HOHO, "--data", "{corpus:binary}"], "binary"),
    ("corpus-latin1", [*HOHO, "--data", "{corpus:latin1}"], "UTF-8"),
    ("corpus-empty-lines", [*HOHO, "--data", "{corpus:blank}"], "empty"),
    ("corpus-is-directory", [*HOHO, "--data", "{dir}"], "directory"),
    ("corpus-missing", [*HOHO, "--data", "{corpus:missing}"], "does not exist"),
    ("reproduce-corpus-directory", ["reproduce", "hoho-fig1", "--data", "{dir}", "--out", "{out}"],
     "--data"),
]  # fmt: skip


def _corpus(where: Path, kind: str) -> str:
    path = where / f"corpus-{kind}.txt"
    if kind == "binary":
        path.write_bytes(b"good sentence\t1\n\x00\x01\x02\xff\t0\n")
    elif kind == "latin1":
        path.write_bytes("caf\xe9 au lait\t1\nna\xefve\t0\n".encode("latin-1"))
    elif kind == "blank":
        path.write_text("\n  \n\t\n\n")
    return str(path)


def _snapshot(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if "__pycache__" not in p.parts}


@pytest.mark.parametrize(
    ("argv", "needle"), [c[1:] for c in CLI_CASES], ids=[c[0] for c in CLI_CASES]
)
def test_cli_bad_input_exits_2_with_one_line_and_no_output(
    argv: list[str],
    needle: str,
    user_modules: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    work = tmp_path / "work"
    inputs = tmp_path / "inputs"
    work.mkdir()
    inputs.mkdir()
    monkeypatch.chdir(work)
    (inputs / "a-file").write_text("x")
    full = inputs / "full"
    full.mkdir()
    (full / "keep.txt").write_text("keep")
    out = work / "run"
    subs = {"{out}": str(out), "{file}": str(inputs / "a-file"), "{dir}": str(full)}
    args = []
    for a in argv:
        if a.startswith("{corpus:"):
            a = _corpus(inputs, a[len("{corpus:") : -1])
        args.append(subs.get(a, a))
    before_inputs = _snapshot(inputs)
    code, stdout, stderr = run_cli_quiet(capsys, *args)
    assert code == 2, (stdout, stderr)
    assert stdout == ""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    assert needle in lines[0], lines[0]
    assert _snapshot(work) == set(), "partial output left behind"
    assert _snapshot(inputs) == before_inputs  # inputs untouched (no --force wipe)


def test_suite_has_at_least_30_cases() -> None:
    assert len(CLI_CASES) >= 30


# ----------------------------------------------------------------------- API
def _api_cases() -> list[tuple[str, object, type, str]]:
    from dpaudit.auditors.blackbox.auditor import AuditConfig
    from dpaudit.auditors.sanity.check import sanity_check
    from dpaudit.claims import Definition, InputDomain, PrivacyClaim
    from dpaudit.mechanisms import make_mechanism

    lap = make_mechanism("laplace", epsilon=1.0)
    unit = InputDomain((1,), 0.0, 1.0)
    return [
        ("epsilon-0", lambda: make_mechanism("laplace", epsilon=0.0), ValueError, "epsilon"),
        ("epsilon-nan", lambda: make_mechanism("laplace", epsilon=float("nan")), ValueError,
         "epsilon"),
        ("epsilon-type", lambda: make_mechanism("laplace", epsilon=[1.0]), TypeError, "epsilon"),
        ("delta-1", lambda: PrivacyClaim(Definition.APPROXIMATE, 1.0, unit, delta=1.0),
         ValueError, "delta"),
        ("dim-0", lambda: make_mechanism("laplace", epsilon=1.0, dim=0), ValueError, "dim"),
        ("runs-0", lambda: sanity_check(lap, 0), ValueError, "runs"),
        ("confidence-2", lambda: AuditConfig(confidence=2.0), ValueError, "confidence"),
        ("samples-0", lambda: AuditConfig(samples=0), ValueError, "samples"),
        ("input-nan", lambda: lap.sample([np.nan], 3, np.random.default_rng()), ValueError, "x"),
        ("input-shape", lambda: lap.sample([0.0, 1.0], 3, np.random.default_rng()), ValueError,
         "x"),
        ("rng-type", lambda: lap.sample([0.0], 3, 42), TypeError, "rng"),
        ("domain", lambda: InputDomain((1,), 1.0, 0.0), ValueError, "domain"),
    ]  # fmt: skip


@pytest.mark.parametrize("case", range(12))
def test_api_bad_input_names_the_argument(case: int) -> None:
    _, call, error, argument = _api_cases()[case]
    with pytest.raises(error, match=argument):
        call()


def test_api_mechanism_faults_raise_mechanism_error_naming_mechanism_and_input(
    user_modules: Path,
) -> None:
    from dpaudit.auditors.core.guard import preflight
    from dpaudit.auditors.core.trust import establish_trust
    from dpaudit.mechanisms import make_mechanism

    for target, needle, check in [
        ("dpa_faulty:nan", "NaN", preflight),
        ("dpa_faulty:fixed_seed", "fixed seed", establish_trust),
    ]:
        mech = make_mechanism("callable", target=target, epsilon=1.0)
        with pytest.raises(MechanismError, match=needle) as info:
            check(mech)
        assert target in str(info.value) and "input" in str(info.value)
