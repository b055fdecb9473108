"""CLI usability: counts as 1e6, the same options everywhere, -q anywhere, progress in logs,
--resume on a missing run, a light start-up and the top-level ``dpaudit`` API."""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _cli import run_cli, run_cli_quiet

import dpaudit
from dpaudit import progress
from dpaudit.cli.main import COMMANDS, build_parser, requested_command
from dpaudit.cli.parser import integer

# ------------------------------------------------------------------ numbers


@pytest.mark.parametrize(
    ("text", "value"),
    [("1000000", 10**6), ("1_000_000", 10**6), ("1e6", 10**6), ("2.5e6", 2_500_000),
     ("1E3", 1000), ("1.0", 1), (" 7 ", 7), ("-3", -3),
     ("123456789012345678e1", 1234567890123456780)],
)  # fmt: skip
def test_integer_accepts_whole_numbers_in_any_notation(text: str, value: int) -> None:
    assert integer(text) == value


@pytest.mark.parametrize("text", ["1.5", "1e-3", "abc", "", "inf", "nan", "1e19", "1e999999999"])
def test_integer_refuses_what_is_not_a_whole_count(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        integer(text)


def test_counts_in_help_notation_reach_the_command() -> None:
    args = build_parser("audit").parse_args(
        ["audit", "laplace", "--epsilon", "1", "--samples", "1e4", "--final-samples", "2.5e5"]
    )
    assert (args.samples, args.final_samples) == (10_000, 250_000)
    args = build_parser("sanity-check").parse_args(
        ["sanity-check", "laplace", "--epsilon", "1", "--runs", "1e6"]
    )
    assert args.runs == 1_000_000


def test_a_fractional_count_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "audit", "laplace", "--epsilon", "1", "--samples", "1.5")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "--samples" in err and "1e6" in err


def test_every_count_option_of_every_command_takes_1e3() -> None:
    # Every integer option of every command parses '1e3' (none is left with type=int).
    for name in COMMANDS:
        parser = build_parser(name)
        for action in _all_actions(parser):
            if action.type is int:
                pytest.fail(f"{name} {action.option_strings}: type=int refuses 1e6")


def _all_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    out = []
    for action in parser._actions:
        out.append(action)
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                out.extend(_all_actions(child))
    return out


def test_integer_mechanism_parameters_take_1e3_too(capsys: pytest.CaptureFixture[str]) -> None:
    outs = []
    for dim in ("10", "1e1", "1_0"):
        code, out, err = run_cli(capsys, "analyze", "laplace", "--epsilon", "1", "-p", f"dim={dim}")
        assert code == 0, err
        outs.append(out)
    assert outs[0] == outs[1] == outs[2]
    code, _, err = run_cli(capsys, "analyze", "laplace", "--epsilon", "1", "-p", "dim=1.5")
    assert code == 2 and "dim" in err and "integer" in err


# ------------------------------------------------------------ consistency


def test_dim_means_the_same_in_analyze_audit_and_sanity_check(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, by_option, err = run_cli(
        capsys, "analyze", "laplace", "--epsilon", "1", "--dim", "3", "--json"
    )
    assert code == 0, err
    code, by_param, err = run_cli(
        capsys, "analyze", "laplace", "--epsilon", "1", "-p", "dim=3", "--json"
    )
    assert code == 0, err
    assert json.loads(by_option) == json.loads(by_param)
    for command in ("audit", "sanity-check"):
        parsed = build_parser(command).parse_args(
            [command, "laplace", "--epsilon", "1", "--dim", "3"]
        )
        assert parsed.dim == 3


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["analyze", "laplace", "--epsilon", "1", "--dim", "3", "-p", "dim=4"], "--dim"),
        (["audit", "randomized-response", "--epsilon", "1", "--dim", "3"], "--dim"),
        (["sanity-check", "laplace", "--epsilon", "1", "--dim", "0"], "dim"),
    ],
)
def test_dim_conflicts_and_misuse_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], named: str
) -> None:
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and named in err


@pytest.mark.parametrize(
    "argv",
    [
        ["audit", "laplace", "--epsilon", "1", "-q"],
        ["-q", "audit", "laplace", "--epsilon", "1"],
        ["attack", "hoho", "--scheme", "ome", "--epsilon", "1", "--quiet"],
        ["reproduce", "all", "--out", "x", "-q"],
    ],
)
def test_quiet_works_before_and_after_the_sub_command(argv: list[str]) -> None:
    args = build_parser(requested_command(argv)).parse_args(argv)
    assert args.quiet is True


def test_quiet_defaults_to_false() -> None:
    args = build_parser("audit").parse_args(["audit", "laplace", "--epsilon", "1"])
    assert args.quiet is False


def test_requested_command_skips_global_options() -> None:
    assert requested_command(["-q", "audit", "x"]) == "audit"
    assert requested_command(["--help"]) is None
    assert requested_command(["nonsense", "audit"]) is None


def test_top_level_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "--help")
    assert code == 0
    for name, (_, summary) in COMMANDS.items():
        assert name in out and summary[:30] in out


def test_each_command_registers_the_help_listed_for_it() -> None:
    parser = build_parser()  # every sub-command fully registered
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    helps = {choice.dest: choice.help for choice in sub._choices_actions}
    assert helps == {name: summary for name, (_, summary) in COMMANDS.items()}


def test_version_is_printed(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "--version")
    assert code == 0 and out.strip() == f"dpaudit {dpaudit.__version__}"


# ---------------------------------------------------------------- progress

ESCAPES = ("\r", "\x1b")


def test_progress_off_a_terminal_is_one_plain_line_per_stage(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # capsys's stderr is not a terminal; every stage shows once DELAY is 0.  (An earlier
    # in-process `-q` run leaves progress.ENABLED off.)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "ENABLED", True)
    code, _, err = run_cli(
        capsys, "simulate-sensitivity", "--dims", "1-3", "--pairs", "1e3", "--workers", "1"
    )
    assert code == 0
    assert not any(e in err for e in ESCAPES)
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("simulate-sensitivity: ") and " work units in " in lines[0]
    done, total = lines[0].split(": ")[1].split(" ")[0].split("/")
    assert done == total


def test_named_stages_give_one_line_each(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "ENABLED", True)
    lines: list[str] = []

    class Stream:
        def write(self, text: str) -> None:
            lines.append(text)

        def flush(self) -> None:
            pass

    monkeypatch.setattr(sys, "stderr", Stream())
    with progress.progress(3, "run", unit="steps") as bar:
        bar.set_description("run: a")
        bar.update(2)
        bar.set_description("run: b")
        bar.update(1)
    assert [line.split(" in ")[0] for line in lines] == ["run: a: done", "run: b: done"]
    assert all(line.endswith(" s\n") for line in lines)


class _Terminal(io.StringIO):
    """A stderr that says it is a terminal (as a pty would)."""

    def isatty(self) -> bool:
        return True


def _busy_two_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "getloadavg", lambda: (7.2, 5.0, 3.0))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)


def test_a_terminal_gets_a_bar_and_a_log_gets_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "ENABLED", True)
    for stream, bar in ((_Terminal(), True), (io.StringIO(), False)):
        monkeypatch.setattr(sys, "stderr", stream)
        with progress.progress(3, "fig-x [1/2] · selecting", unit="steps") as shown:
            shown.update(3)
        text = stream.getvalue()
        assert ("\r" in text and "%|" in text and "3/3 steps" in text) is bar, text
        assert ("\r" in text or "\x1b" in text) is bar
        assert "fig-x [1/2] · selecting" in text  # the figure and the stage, on both


def test_a_terminal_without_tqdm_gets_the_plain_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "ENABLED", True)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # import fails as if not installed
    stream = _Terminal()
    monkeypatch.setattr(sys, "stderr", stream)
    with progress.progress(2, "run", unit="steps") as bar:
        bar.update(2)
    assert stream.getvalue().startswith("run: 2/2 steps in ")


def test_a_stage_past_its_estimate_says_so_with_the_load(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The heartbeat line says the stage is late and why it may be (off a terminal)."""
    import time

    monkeypatch.setattr(progress, "ENABLED", True)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "HEARTBEAT", 0.05)
    _busy_two_cores(monkeypatch)
    with progress.progress(10, "reproduce", unit="s(est)") as bar:
        bar.set_description("reproduce fig-x [1/1]")
        progress.expect(bar, 0.1, "fig-x")
        time.sleep(0.4)
        bar.update(10)
    lines = capsys.readouterr().err.splitlines()
    late = [line for line in lines if "past its 0 s estimate" in line]
    assert late and late[0].startswith("reproduce fig-x [1/1]: ")
    assert "(machine busy? load 7.2 on 2 cores); 0/10 s(est) done" in late[0]
    assert lines[-1].startswith("reproduce fig-x [1/1]: done in ")
    assert lines[-1].endswith(", past its 0 s estimate (machine busy? load 7.2 on 2 cores)")


def test_a_stage_within_its_estimate_is_not_called_late(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(progress, "ENABLED", True)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    with progress.progress(1, "run") as bar:
        bar.set_description("run: a")
        progress.expect(bar, 600.0, "a")
        bar.update(1)
    assert "estimate" not in capsys.readouterr().err


def test_a_bar_past_its_estimate_prints_one_line_above_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setattr(progress, "ENABLED", True)
    monkeypatch.setattr(progress, "HEARTBEAT", 0.05)
    _busy_two_cores(monkeypatch)
    stream = _Terminal()
    monkeypatch.setattr(sys, "stderr", stream)
    with progress.progress(10, "reproduce", unit="s(est)") as bar:
        progress.expect(bar, 0.05, "fig-x")
        time.sleep(0.4)
    text = stream.getvalue()
    assert text.count("fig-x: ") == 1 and "past its 0 s estimate (machine busy? load 7.2" in text


def test_stage_bars_carry_the_whole_commands_pilot_estimate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``dpaudit audit``'s stages show what is left of its estimate and say when it is passed."""
    import time

    monkeypatch.setattr(progress, "ENABLED", True)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    stream = _Terminal()
    monkeypatch.setattr(sys, "stderr", stream)
    with progress.whole_run(600.0, "audit"), progress.progress(2, "selecting") as bar:
        bar.update(2)
    assert "audit ≈ 600 s of 600 s left, pilot estimate" in stream.getvalue()
    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    monkeypatch.setattr(progress, "HEARTBEAT", 0.05)
    _busy_two_cores(monkeypatch)
    with progress.whole_run(0.1, "audit"):  # a log: the stage's lines name the command's lateness
        with progress.progress(4, "selecting") as bar:
            time.sleep(0.4)
            bar.update(4)
        with progress.progress(4, "final sampling") as bar:
            bar.update(4)
    lines = log.getvalue().splitlines()
    assert any(
        line.startswith("selecting: audit at ") and "past its 0 s estimate (machine busy?" in line
        for line in lines
    ), lines
    assert lines[-1].startswith("final sampling: ") and "audit at " in lines[-1]
    assert progress.RUN is None  # restored after the block
    with progress.whole_run(None, "audit"):  # no estimate: nothing changes
        assert progress.RUN is None


def test_quiet_prints_no_progress(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress, "DELAY", 0.0)
    code, _, err = run_cli_quiet(capsys, "simulate-sensitivity", "--dims", "1", "--pairs", "100")
    assert code == 0 and err == ""


@pytest.mark.slow  # a subprocess run long enough to draw progress; in-process checks stay quick
def test_piped_stderr_of_the_console_script_has_no_escape_codes(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "dpaudit.cli.main", "simulate-sensitivity", "--dims", "1-2",
         "--pairs", "2e4", "--workers", "1"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert not any(e in proc.stderr for e in ESCAPES)


# ------------------------------------------------------------------ resume


@pytest.mark.parametrize(
    "argv",
    [
        ["reproduce", "habernal2021-fig1", "--scale", "tiny"],
        ["sanity-check", "laplace", "--epsilon", "1", "--runs", "100"],
        ["audit", "laplace", "--epsilon", "1", "--samples", "100", "--final-samples", "100"],
    ],
)
def test_resume_of_a_missing_run_is_an_error_and_creates_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str]
) -> None:
    out_dir = tmp_path / "never-ran"
    code, out, err = run_cli_quiet(capsys, *argv, "--out", str(out_dir), "--resume")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "--resume" in err
    assert not out_dir.exists()


def test_reproduce_resume_of_an_empty_directory_is_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run_cli_quiet(
        capsys, "reproduce", "habernal2021-fig1", "--out", str(tmp_path), "--resume"
    )
    assert code == 2 and "run-status.json" in err
    assert list(tmp_path.iterdir()) == []


def test_reproduce_refuses_force_with_resume(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run_cli_quiet(
        capsys, "reproduce", "habernal2021-fig1", "--out", str(tmp_path), "--resume", "--force"
    )
    assert code == 2 and "--force" in err


# ----------------------------------------------------------------- start-up

HEAVY = ("scipy", "sklearn", "matplotlib", "ray", "tqdm", "pyarrow", "pandas")


def _imported_after(code: str) -> set[str]:
    probe = f"import sys\n{code}\nprint(' '.join(sorted(sys.modules)))"
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    return set(proc.stdout.split())


@pytest.mark.parametrize(
    "code",
    [
        "import dpaudit",
        "from dpaudit.cli.main import build_parser; build_parser('')",
        # an error path that builds and validates a mechanism
        "from dpaudit.cli.main import main\n"
        "try:\n    main(['audit', 'laplace', '--epsilon', '-1'])\nexcept SystemExit:\n    pass",
        "from dpaudit.cli.main import build_parser\n"
        "for name in ('audit', 'sanity-check', 'reproduce', 'attack', 'utility', 'analyze'):\n"
        "    build_parser(name)",
    ],
)
def test_start_up_and_error_paths_import_no_heavy_library(code: str) -> None:
    loaded = _imported_after(code)
    heavy = sorted(m for m in loaded if m.split(".")[0] in HEAVY)
    assert heavy == [], heavy[:10]


def test_top_level_help_does_not_even_import_numpy() -> None:
    loaded = _imported_after("from dpaudit.cli.main import build_parser; build_parser('')")
    assert "numpy" not in loaded
    assert not any(m.startswith("dpaudit.cli.cmd_") for m in loaded)


# ------------------------------------------------------------ top-level API


def test_top_level_names_are_the_defining_modules_objects() -> None:
    from dpaudit.auditors.blackbox.auditor import audit
    from dpaudit.auditors.sanity.check import sanity_check
    from dpaudit.claims import Definition, InputDomain, PrivacyClaim
    from dpaudit.mechanisms import make_mechanism
    from dpaudit.testing import assert_no_violation

    assert dpaudit.audit_mechanism is audit and dpaudit.sanity_check is sanity_check
    assert dpaudit.PrivacyClaim is PrivacyClaim and dpaudit.InputDomain is InputDomain
    assert dpaudit.Definition is Definition and dpaudit.assert_no_violation is assert_no_violation
    assert dpaudit.make_mechanism is make_mechanism
    for name in dpaudit.__all__:
        assert getattr(dpaudit, name) is not None
        assert name in dir(dpaudit)


def test_top_level_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_thing"):
        dpaudit.no_such_thing  # noqa: B018


def test_top_level_api_runs_a_privacy_test() -> None:
    from dpaudit import Definition, InputDomain, PrivacyClaim, assert_no_violation, round_to_grid

    def laplace(x, n, rng):  # type: ignore[no-untyped-def]
        return round_to_grid(x + rng.laplace(0.0, 1.0, size=(n, x.size)), 1.0)

    claim = PrivacyClaim(Definition.PURE, 1.0, InputDomain((1,), 0, 1))
    assert_no_violation(laplace, claim, samples=2_000, final_samples=4_000)


@pytest.mark.parametrize(
    ("argv", "prog", "hint"),
    [
        (["audit", "ome", "--epsilon", "1", "--lambda", "10"], "dpaudit audit", "-p lambda=10"),
        (["analyze", "laplace", "--epsilon", "1", "--sigma=2"], "dpaudit analyze", "-p sigma=2"),
        (["attack", "hoho", "--scheme", "ome", "--epsilon", "1", "--lambda", "3"],
         "dpaudit attack hoho", "-p lambda=3"),
        (["reproduce", "all", "--out", "x", "--bogus"], "dpaudit reproduce", None),
    ],
)  # fmt: skip
def test_unknown_options_name_the_command_and_hint_at_p(
    capsys: pytest.CaptureFixture[str], argv: list[str], prog: str, hint: str | None
) -> None:
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert err.startswith(f"{prog}: error: unrecognized arguments")
    assert (hint in err) if hint else ("-p" not in err)


def test_printing_a_witness_stays_short(monkeypatch: pytest.MonkeyPatch) -> None:
    from dpaudit import AuditConfig, ExecutionConfig, audit_mechanism, make_mechanism

    monkeypatch.setattr(progress, "ENABLED", False)
    mech = make_mechanism("randomized-response", epsilon=1.0)
    config = AuditConfig(samples=4_000, final_samples=4_000, classifier="logistic")
    result = audit_mechanism(mech, config, ExecutionConfig(workers=1))
    witness = result.witness
    assert witness is not None and witness.attack.classifier is not None
    assert "weights" not in repr(witness) and len(repr(witness)) < 1_000
    assert "weights" in json.dumps(witness.attack.to_dict())  # kept for re-checking


# -- issue 24 item 3: small gaps (did you mean, signature) --------------------------------


def test_unknown_mechanism_lists_word_mechanisms_and_suggests_the_near_name(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli_quiet(capsys, "audit", "lapalce", "--epsilon", "1")
    assert code == 2 and out == ""
    assert "did you mean 'laplace'?" in err
    assert "cmp" in err and "vickrey" in err  # word-level mechanisms are listed too
    code, _, err = run_cli_quiet(capsys, "audit", "zzzzzz", "--epsilon", "1")
    assert code == 2 and "did you mean" not in err


def test_option_typo_is_named_before_the_parameter_hint(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # --epsilon is required: the typo must still be reported, not the missing option.
    code, out, err = run_cli_quiet(capsys, "audit", "laplace", "--epsilonn", "2")
    assert code == 2 and out == ""
    assert "did you mean --epsilon?" in err and "-p epsilonn" not in err
    # a real mechanism parameter spelt as an option keeps the -p hint
    code, _, err = run_cli_quiet(capsys, "audit", "ome", "--epsilon", "1", "--lambda", "10")
    assert code == 2 and "-p lambda=10" in err and "did you mean" not in err


def test_callable_with_wrong_signature_names_f_x_n_rng(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "badsig_mod.py").write_text("def f(x):\n    return x\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    before = sorted(p.name for p in tmp_path.iterdir())
    code, out, err = run_cli_quiet(
        capsys, "audit", "badsig_mod:f", "--epsilon", "1", "--domain", "0,1"
    )
    assert code == 2 and out == ""
    assert "f(x, n, rng)" in err and "TypeError" not in err
    assert len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "__pycache__") == before


def test_ctrl_c_says_how_to_resume(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from dpaudit.cli import cmd_reproduce

    def interrupted(args: argparse.Namespace) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(cmd_reproduce, "run", interrupted)
    out_dir = str(tmp_path / "run")
    code, _, err = run_cli_quiet(capsys, "reproduce", "hoho-fig1", "--out", out_dir)
    assert code == 130
    assert f"--resume --out {out_dir}" in err


def test_a_long_block_keeps_saying_it_is_alive(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A unit that runs long (or hangs without --unit-timeout) is never silent."""
    import time

    from dpaudit import progress

    monkeypatch.setattr(progress, "ENABLED", True)
    monkeypatch.setattr(progress, "HEARTBEAT", 0.05)
    with progress.progress(4, "final") as bar:
        time.sleep(0.3)
        bar.update(1)
    err = capsys.readouterr().err
    assert "final: still running after" in err and "(0/4 work units done)" in err
