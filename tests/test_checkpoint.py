"""Checkpoint and resume: kill -9 mid-run, --resume, and the result is identical."""

from __future__ import annotations

import json
import pickle
import time
from pathlib import Path

import numpy as np
import pytest
from _cli import run_cli_quiet
from _killed_cli import dpaudit_argv, kill_9_when, run_to_end

from dpaudit.engine import checkpoint
from dpaudit.engine.checkpoint import RunDirectory, session
from dpaudit.engine.executor import ExecutionConfig, run_units
from dpaudit.engine.unit_codec import decode_unit
from dpaudit.errors import InvalidArgumentError, MechanismError
from dpaudit.rundir.layout import (
    CALL_PREFIX,
    CONFIG_FILE,
    RESULT_FILE,
    UNIT_PREFIX,
    UNIT_SUFFIX,
    UNITS_DIR,
)

UNIT_FILES = f"{UNITS_DIR}/{CALL_PREFIX}*/{UNIT_PREFIX}*{UNIT_SUFFIX}"


def _without_timing(result: dict) -> dict:
    return {k: v for k, v in result.items() if k != "timing"}


def _unit_files(out: Path) -> list[Path]:
    return sorted(out.glob(UNIT_FILES))


def _audit_args(seed: int) -> list[str]:
    """A small black-box audit of Laplace: several stages, each a checkpointed call."""
    return ["audit", "laplace", "--epsilon", "1", "--samples", "20000", "--final-samples",
            "40000", "--seed", str(seed), "--workers", "1", "--json"]  # fmt: skip


# ------------------------------------------------------------ kill -9 and resume
SANITY = ["sanity-check", "laplace", "--epsilon", "1", "--runs", "100000000", "--seed", "3"]


@pytest.mark.slow
def test_kill_9_during_a_1e8_run_sanity_check_then_resume_is_identical(tmp_path: Path) -> None:
    """10^8 runs (n = 1) in 4 work units; the process is killed after the first unit is stored."""
    base = dpaudit_argv(*SANITY, "--workers", "1", "--json")
    out = tmp_path / "run"
    kill_9_when([*base, "--out", str(out)], lambda: bool(_unit_files(out)))
    stored = len(_unit_files(out))
    assert 1 <= stored < 4, stored  # killed mid-run: some units done, some not
    assert not (out / RESULT_FILE).exists()  # no result claims to be complete

    resumed = run_to_end([*base, "--out", str(out), "--resume"])
    assert resumed.returncode == 0, resumed.stderr
    assert f"resumed {stored} stored work units, computed {4 - stored}" in resumed.stderr
    fresh = run_to_end([*base, "--workers", "2"])
    assert fresh.returncode == 0, fresh.stderr
    a, b = json.loads(resumed.stdout), json.loads(fresh.stdout)
    assert a["detail"]["runs"] == 100_000_000
    assert _without_timing(a) == _without_timing(b)
    assert _without_timing(json.loads((out / RESULT_FILE).read_text())) == _without_timing(a)


def test_audit_resumes_every_stage_bit_identically(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _audit_args(seed=5)
    out = tmp_path / "audit"
    code, first, _ = run_cli_quiet(capsys, *args, "--out", str(out))
    assert code == 0
    files = _unit_files(out)
    calls = {f.parent.name for f in files}
    assert len(calls) >= 2  # several stages, each checkpointed
    # Simulate a crash: the last stage's units and the result are gone.
    for f in files[len(files) // 2 :]:
        f.unlink()
    (out / RESULT_FILE).unlink()
    code, second, err = run_cli_quiet(capsys, *args, "--out", str(out), "--resume")
    assert code == 0, err
    assert "resumed" in err
    a, b = json.loads(first), json.loads(second)
    assert _without_timing(a) == _without_timing(b)


def test_resume_with_a_different_configuration_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r"
    small = ["sanity-check", "laplace", "--epsilon", "1", "--runs", "1000", "--workers", "1"]
    assert run_cli_quiet(capsys, *small, "--out", str(out))[0] == 0
    before = sorted(p.name for p in out.rglob("*"))
    code, stdout, err = run_cli_quiet(capsys, *small[:-4], "--runs", "2000", "--workers", "1",
                                      "--out", str(out), "--resume")  # fmt: skip
    assert code == 2 and stdout == ""
    assert len(err.strip().splitlines()) == 1
    assert "runs=2000" in err and "1000" in err and "refused" in err
    assert sorted(p.name for p in out.rglob("*")) == before  # nothing touched
    # Execution-only options may change on resume.
    code, _, err = run_cli_quiet(capsys, *small[:-1], "2", "--out", str(out), "--resume")
    assert code == 0, err


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--resume"], "--resume"),
        (["--force", "--resume", "--out", "X"], "--force"),
    ],
)
def test_resume_option_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], needle: str
) -> None:
    extra = [str(tmp_path / "x") if e == "X" else e for e in extra]
    argv = ["sanity-check", "laplace", "--epsilon", "1", "--runs", "10", *extra]
    code, _, err = run_cli_quiet(capsys, *argv)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1


def test_force_replaces_only_run_directories(tmp_path: Path) -> None:
    config = {"command": "x", "runs": 1}
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "precious.txt").write_text("keep me")
    with pytest.raises(InvalidArgumentError, match="--out"):
        RunDirectory.open(foreign, config)
    with pytest.raises(InvalidArgumentError, match="did not create"):
        RunDirectory.open(foreign, config, force=True)
    assert (foreign / "precious.txt").read_text() == "keep me"
    run = RunDirectory.open(tmp_path / "run", config)
    run.write_result({"ok": 1})
    again = RunDirectory.open(tmp_path / "run", {"command": "x", "runs": 2}, force=True)
    assert not again.complete and json.loads((again.path / CONFIG_FILE).read_text())["config"] == {
        "command": "x",
        "runs": 2,
    }


# ----------------------------------------------------------------- run_units
def _square(u: int) -> int:
    return u * u


def _fail_on_three(u: int) -> int:
    if u == 3:
        raise MechanismError("unit 3 is broken")
    return u


def test_run_units_outside_a_session_is_the_executor() -> None:
    assert run_units(_square, [1, 2, 3]) == [1, 4, 9]


def test_stored_units_are_reused_and_changed_units_recomputed(tmp_path: Path) -> None:
    run = RunDirectory.open(tmp_path / "r", {"command": "t"})
    with session(run) as s:
        assert run_units(_square, list(range(6)), s.attach()) == [0, 1, 4, 9, 16, 25]
        assert run_units(_square, [7], s.attach()) == [49]
    assert (s.computed, s.reused) == (7, 0)
    # Corrupt one stored unit and remove another: both are recomputed.
    files = _unit_files(run.path)
    files[0].write_bytes(b"garbage")
    files[1].unlink()
    resumed = RunDirectory.open(tmp_path / "r", {"command": "t"}, resume=True)
    with session(resumed) as s:
        assert run_units(_square, list(range(6)), s.attach()) == [0, 1, 4, 9, 16, 25]
        # Different units in call 1: the stored result (49) is not reused.
        assert run_units(_square, [8], s.attach()) == [64]
    assert (s.reused, s.computed, s.unreadable) == (4, 3, 1)
    assert "1 unreadable unit files were recomputed" in checkpoint.resume_summary(
        s.reused, s.computed, s.unreadable
    )


def test_a_failing_run_leaves_no_directory_behind(tmp_path: Path) -> None:
    run = RunDirectory.open(tmp_path / "r", {"command": "t"})
    with pytest.raises(MechanismError), session(run) as s:
        run_units(_fail_on_three, list(range(5)), s.attach(ExecutionConfig(workers=1)))
    assert not (tmp_path / "r").exists()


def test_cli_mechanism_fault_leaves_no_out_dir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Bad input is refused before the directory exists.
    out = tmp_path / "o"
    code, _, _err = run_cli_quiet(
        capsys, "sanity-check", "laplace", "--epsilon", "-1", "--out", str(out)
    )
    assert code == 2 and not out.exists()


def test_session_timeout_stops_a_hanging_unit() -> None:
    with (
        pytest.raises(MechanismError, match=r"did not finish within 0\.2 s"),
        session(unit_timeout=0.2) as s,
    ):
        run_units(_sleepy, [0], s.attach(ExecutionConfig(workers=1)))


def _sleepy(u: int) -> int:
    time.sleep(30)
    return u


def test_fingerprint_depends_on_units_and_function() -> None:
    fp = checkpoint.fingerprint
    assert fp(_square, [1, 2]) == fp(_square, [1, 2])
    assert fp(_square, [1, 2]) != fp(_square, [2, 1])
    assert fp(_square, [1]) != fp(_sleepy, [1])
    assert fp(_square, [np.arange(3)]) == fp(_square, [np.arange(3)])


def test_a_torch_model_in_a_unit_is_fingerprinted_by_its_weights_not_pickled() -> None:
    """Two loads of one model fingerprint alike; one changed weight changes it."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from dpaudit.text.models import tiny_model

    one, two = tiny_model("causal", seed=0).model, tiny_model("causal", seed=0).model
    fp = checkpoint.fingerprint
    assert fp(_square, [("unit", one)]) == fp(_square, [("unit", two)])
    assert fp(_square, [("unit", one)]) != fp(_square, [("unit", tiny_model("causal", 1).model)])
    with torch.no_grad():
        next(two.parameters()).view(-1)[0] += 1.0  # the first value is one the digest reads
    assert fp(_square, [("unit", one)]) != fp(_square, [("unit", two)])


def test_checkpointed_helper_resumes(tmp_path: Path) -> None:
    with checkpoint.checkpointed(tmp_path / "c", {"figure": "f"}) as s:
        assert run_units(_square, [1, 2], s.attach()) == [1, 4]
        s.directory.write_result({"ok": True})
    with checkpoint.checkpointed(tmp_path / "c", {"figure": "f"}, resume=True) as s:
        assert run_units(_square, [1, 2], s.attach()) == [1, 4]
        # Without the session in the configuration nothing is stored or reused.
        assert run_units(_square, [5]) == [25]
    run = s.directory
    assert run.complete and run.stored_units() == 2


def _lose_worker(u: int) -> int:
    from dpaudit.engine.executor import WorkerLostError

    if u == 2:
        raise WorkerLostError("a worker process died")
    return u


def test_interrupted_or_lost_worker_run_keeps_its_units(tmp_path: Path) -> None:
    run = RunDirectory.open(tmp_path / "r", {"command": "t"})
    with pytest.raises(Exception, match="worker process died"), session(run) as s:
        run_units(_lose_worker, [0, 1, 2, 3], s.attach(ExecutionConfig(workers=1)))
    assert run.stored_units() == 2  # units 0 and 1 are kept for --resume


# ------------------------------------------------------------- no pickle, corruption
def test_truncated_unit_file_is_recomputed_and_the_result_is_identical(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A unit file cut short (or with flipped bytes) counts as missing: recomputed, reported."""
    args = _audit_args(seed=6)
    out = tmp_path / "s"
    code, first, _ = run_cli_quiet(capsys, *args, "--out", str(out))
    assert code == 0
    files = _unit_files(out)
    assert len(files) >= 4
    files[0].write_bytes(files[0].read_bytes()[: files[0].stat().st_size // 2])
    damaged = bytearray(files[-1].read_bytes())
    damaged[len(damaged) // 3] ^= 0xFF
    files[-1].write_bytes(bytes(damaged))
    (out / RESULT_FILE).unlink()
    code, second, err = run_cli_quiet(capsys, *args, "--out", str(out), "--resume")
    assert code == 0, err
    n = len(files)
    assert f"resumed {n - 2} stored work units, computed 2" in err
    assert "(2 unreadable unit files were recomputed)" in err
    assert _without_timing(json.loads(first)) == _without_timing(json.loads(second))
    # The recomputed units were written back whole.
    decode_unit(files[0].read_bytes())
    decode_unit(files[-1].read_bytes())


def test_run_directory_holds_no_pickle_and_never_loads_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _audit_args(seed=5)
    out = tmp_path / "audit"
    assert run_cli_quiet(capsys, *args, "--out", str(out))[0] == 0
    files = [p for p in out.rglob("*") if p.is_file()]
    assert _unit_files(out)
    for path in files:
        assert path.suffix in (".json", ".npz"), path
        assert not path.read_bytes().startswith(b"\x80"), path  # pickle protocol ≥ 2 header
        if path.suffix == ".npz":
            with np.load(path, allow_pickle=False) as archive:  # raises on pickled members
                for name in archive.files:
                    assert archive[name].dtype != object
    # A pickle planted in a call folder (e.g. by an older dpaudit) is never loaded.
    marker = tmp_path / "code-ran"
    call = _unit_files(out)[0].parent
    (call / "u000000.pkl").write_bytes(pickle.dumps(_Payload(marker)))
    (out / RESULT_FILE).unlink()
    code, _, err = run_cli_quiet(capsys, *args, "--out", str(out), "--resume")
    assert code == 0, err
    assert not marker.exists()


class _Payload:
    """Unpickling this creates ``marker``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple:
        return (Path.touch, (self.marker,))
