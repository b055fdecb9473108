"""`dpaudit audit --claim`: whole-claim audits from the command line (verdicts, errors, --out)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _cli import run_cli_quiet

from dpaudit.claims import GaussianDP, RenyiDP, ZeroConcentratedDP
from dpaudit.claims.parse import CLAIM_FORMS, parse_claim
from dpaudit.cli import cmd_audit_profile
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.gaussian import GaussianMechanism

FAST = ["--samples", "20000", "--final-samples", "200000", "--workers", "1"]
#: The analytic Gaussian at (1, 1e-5) on [0, 1]: σ ≈ 3.73, exact μ = 1/σ ≈ 0.268.
GAUSS = ["audit", "gaussian", "--epsilon", "1", "--delta", "1e-5"]
MU = 1.0 / GaussianMechanism(epsilon=1.0, delta=1e-5).sigma


def test_correct_gaussian_passes_every_form_of_its_claim(capsys) -> None:
    for claim in (
        f"gdp:{MU:.6f}",
        f"zcdp:{MU * MU / 2:.6f}",
        "approx:1,1e-5",
        "gaussian-analytic:1,1e-5",
    ):
        code, out, err = run_cli_quiet(capsys, *GAUSS, "--claim", claim, *FAST, "--json")
        assert code == 0, err
        data = json.loads(out)
        detail = data["detail"]
        assert data["kind"] == "profile" and data["violation"] is False, detail["findings"]
        assert detail["claim_source"] == claim and detail["x"] != detail["x_prime"]
        assert detail["mu_lower_bound"] <= MU


def test_too_small_mu_is_a_violation_and_fails_the_run(capsys) -> None:
    # Claim 0.15-GDP for μ ≈ 0.268: at 2·10⁵ samples μ is pinned to ≈ ±0.03, so it is refuted.
    code, out, _ = run_cli_quiet(
        capsys, *GAUSS, "--claim", "gdp:0.15", *FAST, "--fail-on-violation"
    )
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("violation: ") and "claimed by 0.15-GDP" in lines[0]
    assert "one-sided lower bounds" in lines[1]
    assert any(line.startswith("witness: x = [0.0], x′ = [1.0]") for line in lines)
    assert "at least" in out and "at most" in out and "finding: " in out


def test_projection_score_for_laplace_and_verbose_grid(capsys) -> None:
    code, out, err = run_cli_quiet(
        capsys,
        "audit",
        "laplace",
        "--epsilon",
        "1",
        "--claim",
        "pure:1",
        "--score",
        "projection",
        "--pair",
        "1;0",
        "--no-patterns",
        *FAST,
        "-v",
    )
    assert code == 0, err
    assert out.startswith("no violation found: ") and "claimed by 1-DP" in out.splitlines()[0]
    assert "witness: x = [1.0], x′ = [0.0]  (given)" in out
    assert "score: ⟨y − (x + x′)/2, x − x′⟩" in out
    assert "claimed δ(ε)" in out  # the grid table of -v


@pytest.mark.parametrize(
    "claim", ["gdp", "gdp:-1", "approx:1", "approx:1,2", "renyi:2", "zcdp:x", "nope:1", "library"]
)
def test_bad_claim_exits_2_with_one_line_naming_the_forms(capsys, claim: str, tmp_path) -> None:
    out_dir = tmp_path / "run"
    code, out, err = run_cli_quiet(capsys, *GAUSS, "--claim", claim, *FAST, "--out", str(out_dir))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "--claim" in err and "gdp:MU" in err
    assert not out_dir.exists()  # nothing half-written


@pytest.mark.parametrize(
    "extra",
    [
        ["--mode", "dpsniper"],
        ["--classifier", "logistic"],
        ["--final-candidates", "3"],
        ["--pair", "0;1", "--pair", "1;0"],
        ["--score", "bogus"],
    ],
)
def test_options_of_the_single_point_search_are_refused_with_claim(capsys, extra) -> None:
    code, out, err = run_cli_quiet(capsys, *GAUSS, "--claim", "gdp:1", *FAST, *extra)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1


def test_score_without_claim_is_refused(capsys) -> None:
    code, _, err = run_cli_quiet(capsys, *GAUSS, "--score", "projection", *FAST)
    assert code == 2 and "--score" in err and "--claim" in err


def test_out_writes_the_result_atomically(capsys, tmp_path: Path) -> None:
    out_dir = tmp_path / "run"
    code, out, _ = run_cli_quiet(
        capsys, *GAUSS, "--claim", "gdp:0.15", *FAST, "--out", str(out_dir), "--json"
    )
    assert code == 0
    stored = json.loads((out_dir / "result.json").read_text())
    assert stored == json.loads(out)
    assert not [p for p in out_dir.rglob("*") if p.name.startswith(".") and p.is_file()]


def test_claim_text_forms_parse_to_their_values() -> None:
    assert parse_claim("gdp:0.5").claim == GaussianDP(0.5)
    assert parse_claim("zcdp:0.125").claim == ZeroConcentratedDP(0.125)
    renyi = parse_claim("renyi:4=0.5, 2=0.25").claim
    assert renyi == RenyiDP((2.0, 4.0), (0.25, 0.5))
    classic = parse_claim("gaussian-classic:10,0.01")
    assert classic.claim.mu == pytest.approx(10.0 / (2 * 2.0 * 2.4141) ** 0.5, rel=1e-3)
    assert "approx:10,0.01" in classic.note  # says to audit the (ε, δ) promise too
    # σ scales with Δ, so μ = Δ/σ does not; the note records σ.
    wide = parse_claim("gaussian-analytic:1,1e-5,2")
    assert wide.claim.mu == pytest.approx(MU) and "σ = 7.46" in wide.note
    assert CLAIM_FORMS == cmd_audit_profile.CLAIM_FORMS  # --help lists the same forms
    with pytest.raises(InvalidArgumentError, match=r"--claim.*mu a finite number > 0"):
        parse_claim("gdp:0")


def test_classic_calibration_at_eps_10_is_refuted_on_a_narrow_grid(capsys) -> None:
    # Exact δ(10) = 0.0406 for the classic σ at (10, 0.01) (tests/test_profiles_claims.py);
    # the best set at ε = 10 has Pr[M(x) ∈ S] ≈ 1e-6, so 10⁷ final samples per input are
    # needed, and a narrow ε grid keeps the sets to certify few.
    argv = ["audit", "gaussian", "--epsilon", "10", "--delta", "0.01", "--claim",
            "approx:10,0.01", "--samples", "1e6", "--final-samples", "1e7",
            "--epsilons", "9.5:11:0.1", "--json"]  # fmt: skip
    code, out, err = run_cli_quiet(capsys, *argv, "-p", "calibration=classic")
    assert code == 0, err
    data = json.loads(out)
    assert data["violation"] is True and len(data["detail"]["profile"]) == 16
    at10 = next(p for p in data["detail"]["profile"] if p["epsilon"] == 10.0)
    assert 0.01 < at10["delta_lower_bound"] <= 0.0406


@pytest.mark.parametrize("grid", ["1:0:1", "0:1:0", "a,b", "-1,2", "0:1e6:1e-3", ""])
def test_bad_epsilon_grid_exits_2(capsys, grid: str) -> None:
    code, out, err = run_cli_quiet(capsys, *GAUSS, "--claim", "gdp:1", "--epsilons", grid, *FAST)
    assert code == 2 and out == "" and "--epsilons" in err


def test_epsilon_grid_is_parsed_with_its_end(capsys) -> None:
    assert cmd_audit_profile.parse_grid("0:1:0.25") == (0.0, 0.25, 0.5, 0.75, 1.0)
    assert cmd_audit_profile.parse_grid("2,1") == (2.0, 1.0)
    code, _, err = run_cli_quiet(capsys, *GAUSS, "--epsilons", "1,2", *FAST)
    assert code == 2 and "--epsilons" in err and "--claim" in err


def test_claim_without_sizes_fills_its_time_budget_and_says_how_to_repeat(capsys) -> None:
    # A fast mechanism: the plan goes past the sizes a whole-claim audit once had by
    # default (10⁵ / 10⁶), and the chosen sizes are printed with the flags that repeat them.
    code, out, err = run_cli_quiet(
        capsys, *GAUSS, "--claim", "gdp:0.268", "--time-budget", "5", "--workers", "1"
    )
    assert code == 0, err
    assert "for a budget of 5 s" in err and out.startswith("no violation found: ")
    assert "claimed by 0.268-GDP" in out.splitlines()[0]
    found = re.search(r"to repeat exactly: --samples (\d+) --final-samples (\d+)", err)
    assert found is not None, err
    samples, final = int(found.group(1)), int(found.group(2))
    assert final == cmd_audit_profile.PLAN_RATIO * samples and final > 1_000_000
    assert f"with {final} final samples per input" in out
    code, _, err = run_cli_quiet(
        capsys, *GAUSS, "--claim", "gdp:0.268", "--samples", "1e4", "--time-budget", "5"
    )
    assert code == 2 and "--time-budget" in err
