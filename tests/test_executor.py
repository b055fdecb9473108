"""The executor seam, local backend: order, callbacks, errors, dead workers, configuration."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import test_executor_usermod as usermod

from dpaudit.engine import batches, executor, ray_backend
from dpaudit.engine.executor import (
    ExecutionConfig,
    WorkerLostError,
    default_workers,
    prepare_backend,
    run_units,
)
from dpaudit.errors import DPAuditError, InvalidArgumentError, OptionalDependencyError

ONE = ExecutionConfig(workers=1)
TWO = ExecutionConfig(workers=2)


# ------------------------------------------------------------------ results
@pytest.mark.parametrize("config", [ONE, TWO], ids=["1 worker", "2 workers"])
def test_results_in_unit_order_and_callback_sees_each_once(config: ExecutionConfig) -> None:
    seen: dict[int, int] = {}

    def record(i: int, r: int) -> None:
        assert i not in seen
        seen[i] = r

    units = list(range(500))
    out = run_units(usermod.square, units, config, on_result=record)
    assert out == [u * u for u in units]
    assert seen == {u: u * u for u in units}


def test_empty_units() -> None:
    assert run_units(usermod.square, [], TWO) == []


def test_same_seed_bit_identical_for_1_and_2_workers() -> None:
    units = usermod.make_units(chunks=5)
    one = run_units(usermod.count_unit, units, ONE)
    two = run_units(usermod.count_unit, units, TWO)
    np.testing.assert_array_equal(np.stack(one), np.stack(two))
    other = run_units(usermod.count_unit, usermod.make_units(chunks=5, seed=12), TWO)
    assert not np.array_equal(np.stack(one), np.stack(other))


def test_user_module_mechanism_counts_match_laplace_closed_form() -> None:
    # P(x + Lap(1/ε) >= 0.5) = ½·exp(−ε·0.5) for x = 0 (and 1 − that for x = 1).
    eps, rows, chunks = 1.0, 20_000, 6
    units = usermod.make_units(epsilon=eps, rows=rows, chunks=chunks)
    merged = np.zeros(3, dtype=np.int64)
    res = run_units(usermod.count_unit, units, TWO)
    for unit, r in zip(units, res, strict=True):
        if unit.x == 0.0:
            merged += r
    n = merged[0] * 2  # two coordinates per row
    p = 0.5 * np.exp(-eps * 0.5)
    # 5 standard errors of a binomial proportion.
    assert abs(merged[1] / n - p) < 5 * np.sqrt(p * (1 - p) / n)


def test_mechanism_defined_in_main_works_with_two_workers(tmp_path: Path) -> None:
    # A script defining its own mechanism class and unit function in __main__ (fork).
    script = tmp_path / "user_script.py"
    script.write_text(
        textwrap.dedent(
            """
            from dataclasses import dataclass
            import numpy as np
            from dpaudit.engine.executor import ExecutionConfig, run_units
            from dpaudit.random import unit_rng

            @dataclass(frozen=True)
            class Coin:
                p: float

            def flip(unit):
                coin, chunk = unit
                return int((unit_rng(5, (chunk,)).random(1000) < coin.p).sum())

            if __name__ == "__main__":
                units = [(Coin(0.25), c) for c in range(8)]
                a = run_units(flip, units, ExecutionConfig(workers=1))
                b = run_units(flip, units, ExecutionConfig(workers=2))
                assert a == b, (a, b)
                print(sum(a))
            """
        )
    )
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert 1500 < int(proc.stdout) < 2500  # 8000 flips at p = 1/4: mean 2000, sd 39


def test_spawn_fallback_runs_importable_functions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(executor, "_start_method", lambda: "spawn")
    units = usermod.make_units(chunks=2, rows=1000)
    spawned = run_units(usermod.count_unit, units, TWO)
    np.testing.assert_array_equal(
        np.stack(spawned), np.stack(run_units(usermod.count_unit, units, ONE))
    )


def test_results_arrive_writable() -> None:
    out = run_units(usermod.writable, [1, 2, 3], TWO)
    out[0] += 1  # merging by in-place addition must work
    assert out[2].tolist() == [0, 3, 6, 9]


# ------------------------------------------------------------------- errors
@pytest.mark.parametrize("config", [ONE, TWO], ids=["1 worker", "2 workers"])
def test_dpaudit_error_from_a_unit_propagates_unchanged(config: ExecutionConfig) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        run_units(usermod.fail_on_five, list(range(40)), config)
    err = info.value
    assert (err.argument, err.value, err.allowed) == ("runs", 5, "an integer other than 5")
    assert str(err) == str(InvalidArgumentError("runs", 5, "an integer other than 5"))


def test_ordinary_exception_keeps_type_and_worker_traceback() -> None:
    with pytest.raises(ZeroDivisionError) as info:
        run_units(usermod.divide_by_zero_on_three, list(range(10)), TWO)
    assert "divide_by_zero_on_three" in str(info.value.__cause__)


def test_unpicklable_exception_becomes_runtime_error_with_its_text() -> None:
    with pytest.raises(RuntimeError, match="_UnpicklableError: bad unit"):
        run_units(usermod.fail_unpicklable, list(range(4)), TWO)


def test_lambda_is_rejected_with_a_clear_message() -> None:
    with pytest.raises(TypeError, match="module-level"):
        run_units(lambda x: x, [1, 2, 3], TWO)


@pytest.mark.parametrize("how", ["exit", "kill"])
def test_worker_that_dies_once_is_retried_to_the_same_result(tmp_path: Path, how: str) -> None:
    reference = run_units(usermod.count_unit, usermod.make_units(rows=2000), ONE)
    marker = tmp_path / "died"
    units = usermod.make_units(rows=2000, die_once=str(marker), how=how)
    start = time.perf_counter()
    out = run_units(usermod.count_unit, units, TWO)
    assert marker.exists()  # a worker really died
    assert time.perf_counter() - start < 30
    np.testing.assert_array_equal(np.stack(out), np.stack(reference))


def test_worker_that_always_dies_fails_clearly_without_hanging() -> None:
    start = time.perf_counter()
    config = ExecutionConfig(workers=2, max_retries=1)
    with pytest.raises(WorkerLostError, match="worker process died 2 times") as info:
        run_units(usermod.always_die, list(range(6)), config)
    assert isinstance(info.value, DPAuditError)
    assert time.perf_counter() - start < 30


# ------------------------------------------------------- parent death
def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its new parent to reap it counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def _wait_gone(pids: list[int], seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        alive = [p for p in pids if _alive(p)]
        if not alive:
            return []
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


@pytest.mark.skipif(sys.platform == "win32", reason="kill -9 and re-parenting are POSIX")
def test_kill_9_of_the_parent_leaves_no_pool_workers(tmp_path: Path) -> None:
    """A 2-worker run whose units hang; the parent is killed; its workers must go too."""
    script = (
        "import sys; sys.path.insert(0, sys.argv[2])\n"
        "from test_executor_usermod import record_pid_and_sleep\n"
        "from dpaudit.engine.executor import ExecutionConfig, run_units\n"
        "run_units(record_pid_and_sleep, [(sys.argv[1], i) for i in range(4)],\n"
        "          ExecutionConfig(workers=2))\n"
    )
    pids_dir = tmp_path / "pids"
    pids_dir.mkdir()
    tests_dir = str(Path(__file__).parent)
    parent = subprocess.Popen([sys.executable, "-c", script, str(pids_dir), tests_dir])
    try:
        deadline = time.monotonic() + 60
        while len({p.suffix for p in pids_dir.iterdir()}) < 2:
            assert parent.poll() is None, "the run ended early"
            assert time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.02)
        workers = sorted({int(p.suffix[1:]) for p in pids_dir.iterdir()})
        assert parent.pid not in workers and all(_alive(p) for p in workers)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        assert _wait_gone(workers, 5.0) == []
    finally:
        for p in pids_dir.iterdir():  # never leave sleepers behind, even when failing
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(p.suffix[1:]), signal.SIGKILL)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_portable_guard_alone_ends_an_orphan(tmp_path: Path) -> None:
    """Without prctl, the polling thread notices the re-parenting and exits the process."""
    script = textwrap.dedent(
        """
        import os, sys, time
        from dpaudit.engine.executor import guard_parent_death
        if os.fork() == 0:
            guard_parent_death(os.getppid(), use_prctl=False, poll_seconds=0.1)
            print(os.getpid(), flush=True)
            time.sleep(120)
            os._exit(0)
        time.sleep(1.0)  # the parent dies while the child sleeps (no clean-up)
        os._exit(0)
        """
    )
    middle = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    orphan = int(middle.stdout.readline())
    try:
        middle.wait(timeout=30)
        assert _wait_gone([orphan], 3.0) == []
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(orphan, signal.SIGKILL)
        middle.stdout.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux-only")
def test_pool_workers_get_a_parent_death_signal() -> None:
    assert run_units(usermod.parent_death_signal, [0, 1], TWO) == [signal.SIGKILL] * 2
    # The in-process path (one worker) leaves the caller's own setting alone.
    own = usermod.parent_death_signal(0)
    assert run_units(usermod.parent_death_signal, [0], ONE) == [own]


# ------------------------------------------------------------ batching
def test_batches_grow_to_the_target_time_and_respect_the_fair_share() -> None:
    b = batches.Batcher(n_units=1_000_000, workers=2)
    assert b.next_batch() == [0]  # nothing measured yet: one unit
    b.record(1, 1e-5)  # 10 µs per unit
    batch = b.next_batch()
    assert len(batch) == int(batches.TARGET_BATCH_SECONDS / 1e-5)
    assert batch[0] == 1 and batch == list(range(1, 1 + len(batch)))
    slow = batches.Batcher(n_units=10, workers=2)
    slow.record(1, 1e-9)
    assert len(slow.next_batch()) == 3  # ceil(10 / (2·2)): the tail stays balanced
    slow.requeue([1, 0])
    assert list(slow.pending)[:3] == [0, 1, 3]


# ------------------------------------------------------------ configuration
def test_default_workers_is_the_core_count() -> None:
    assert ExecutionConfig().n_workers == default_workers() >= 1
    assert ExecutionConfig(workers=3).n_workers == 3


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"backend": "dask"}, "backend"),
        ({"workers": 0}, "workers"),
        ({"max_retries": -1}, "max_retries"),
        ({"backend": "ray", "ray_address": "no-port"}, "--ray-address"),
        ({"backend": "ray", "ray_address": "host:99999"}, "--ray-address"),
    ],
)
def test_bad_configuration_names_the_argument(kwargs: dict, argument: str) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        ExecutionConfig(**kwargs)
    assert info.value.argument == argument


def test_ray_missing_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # makes `import ray` fail
    with pytest.raises(OptionalDependencyError, match=r"dpaudit\[ray\]"):
        run_units(usermod.square, [1], ExecutionConfig(backend="ray", workers=1))


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_ray_address_fails_fast_and_clearly() -> None:
    pytest.importorskip("ray")
    address = f"127.0.0.1:{_closed_port()}"
    start = time.perf_counter()
    with pytest.raises(InvalidArgumentError, match="reachable Ray cluster") as info:
        prepare_backend(ExecutionConfig(backend="ray", ray_address=address))
    assert info.value.argument == "--ray-address"
    assert time.perf_counter() - start < ray_backend.RAY_CONNECT_TIMEOUT + 5


def test_malformed_runtime_env_variable_is_rejected_before_ray_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("ray")
    monkeypatch.setenv(ray_backend.RUNTIME_ENV_VARIABLE, "working_dir=.")
    with pytest.raises(InvalidArgumentError) as info:
        prepare_backend(ExecutionConfig(backend="ray", workers=1))
    assert info.value.argument == ray_backend.RUNTIME_ENV_VARIABLE


def test_batch_lost_when_submit_finds_the_pool_broken_is_requeued(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A worker that dies between two submissions makes the next ``submit`` raise
    # BrokenProcessPool: the batch it carried was taken from the batcher but never in
    # flight, and used to be dropped (its result left as None).
    real_submit = executor.ProcessPoolExecutor.submit
    calls = {"n": 0}

    def submit_breaking_once(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:
            raise BrokenProcessPool("simulated: a worker died")
        return real_submit(self, *args, **kwargs)

    reference = run_units(usermod.count_unit, usermod.make_units(rows=2000), ONE)
    monkeypatch.setattr(executor.ProcessPoolExecutor, "submit", submit_breaking_once)
    out = run_units(usermod.count_unit, usermod.make_units(rows=2000), TWO)
    assert calls["n"] > 2
    np.testing.assert_array_equal(np.stack(out), np.stack(reference))
