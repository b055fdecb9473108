"""The Ray backend on a local 2-CPU Ray instance: determinism across engines, faults, user code.

Ray is started once for the module (about 5 s).  These tests run in CI (which
installs the ``all`` extra); they are skipped only where Ray cannot be imported.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import test_executor_usermod as usermod
from _cli import run_cli

ray = pytest.importorskip("ray")

#: Starting a Ray instance and its workers costs seconds per test: left out of the quick subset.
pytestmark = pytest.mark.slow

from dpaudit.engine import ray_backend  # noqa: E402
from dpaudit.engine.executor import (  # noqa: E402
    ExecutionConfig,
    prepare_backend,
    run_units,
    shutdown_ray,
)
from dpaudit.errors import DPAuditError, InvalidArgumentError  # noqa: E402
from dpaudit.mechanisms import make_mechanism  # noqa: E402

ONE = ExecutionConfig(workers=1)
TWO = ExecutionConfig(workers=2)
RAY = ExecutionConfig(backend="ray", workers=2)


@pytest.fixture(scope="module", autouse=True)
def ray_instance() -> Iterator[None]:
    """One local Ray instance with 2 CPUs for the whole module."""
    prepare_backend(RAY)
    assert ray.cluster_resources()["CPU"] == 2
    yield
    shutdown_ray()


def _without_timing(result: Any) -> dict[str, Any]:
    data = result.to_dict() if hasattr(result, "to_dict") else dataclasses.asdict(result)
    return {k: v for k, v in data.items() if k not in ("timing", "timings", "seconds")}


# ------------------------------------------------------------- determinism
def test_user_module_mechanism_is_bit_identical_on_local_and_ray() -> None:
    units = usermod.make_units(chunks=6)
    one = np.stack(run_units(usermod.count_unit, units, ONE))
    two = np.stack(run_units(usermod.count_unit, units, TWO))
    on_ray = np.stack(run_units(usermod.count_unit, units, RAY))
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(one, on_ray)


@pytest.mark.parametrize("name", ["laplace", "dptext"])
def test_sanity_check_is_bit_identical_on_local_and_ray(name: str) -> None:
    from dpaudit.auditors.sanity.check import sanity_check

    mech = make_mechanism(name, epsilon=1.0, dim=8)
    runs = 300_000
    results = [sanity_check(mech, runs, seed=4, execution=c) for c in (ONE, TWO, RAY)]
    dicts = [_without_timing(r) for r in results]
    assert dicts[0] == dicts[1] == dicts[2]
    assert sum(results[0].counts[0]) == runs


def test_blackbox_audit_is_bit_identical_on_local_and_ray() -> None:
    from dpaudit.auditors.blackbox.auditor import AuditConfig, audit

    mech = make_mechanism("laplace", epsilon=0.5)
    config = AuditConfig(samples=50_000, final_samples=200_000, seed=3)
    results = [audit(mech, config, execution=c) for c in (ONE, TWO, RAY)]
    bounds = {r.epsilon_lower_bound for r in results}
    assert len(bounds) == 1
    dicts = [_without_timing(r) for r in results]
    assert dicts[0] == dicts[1] == dicts[2]


USER_SCRIPT = """
import sys
from dataclasses import dataclass
from dpaudit.engine.executor import ExecutionConfig, run_units
from dpaudit.random import unit_rng

sys.path.insert(0, sys.argv[2])
import shipped_module  # importable here only: shipped to the workers via the runtime env

@dataclass(frozen=True)
class Coin:  # defined in __main__: shipped to the workers by value
    p: float

def flip(unit):
    coin, chunk = unit
    return int((unit_rng(5, (chunk,)).random(1000) < coin.p).sum())

if __name__ == "__main__":
    units = [(Coin(0.25), c) for c in range(8)]
    local = run_units(flip, units, ExecutionConfig(workers=1))
    joined = ExecutionConfig(backend="ray", ray_address=sys.argv[1])
    assert local == run_units(flip, units, joined)
    assert run_units(shipped_module.triple, [1, 2], joined) == [3, 6]
    print(sum(local))
"""


def test_user_code_runs_on_a_joined_cluster(tmp_path: Path) -> None:
    # A second driver joins the running instance by its address (as with
    # --ray-address on a real cluster): code from its __main__ travels by value,
    # its own module through DPAUDIT_RAY_RUNTIME_ENV (the joined cluster gets
    # no import path from the driver).
    address = ray.get_runtime_context().gcs_address
    (tmp_path / "user_script.py").write_text(USER_SCRIPT)
    modules = tmp_path / "mods"
    modules.mkdir()
    (modules / "shipped_module.py").write_text("def triple(x):\n    return 3 * x\n")
    env = dict(os.environ)
    env[ray_backend.RUNTIME_ENV_VARIABLE] = json.dumps(
        {"py_modules": [str(modules / "shipped_module.py")]}
    )
    proc = subprocess.run(
        [sys.executable, str(tmp_path / "user_script.py"), address, str(modules)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert 1500 < int(proc.stdout) < 2500  # 8000 flips at p = 1/4: mean 2000, sd 39


# ------------------------------------------------------------------ faults
def test_dpaudit_error_from_a_ray_task_propagates_unchanged() -> None:
    with pytest.raises(InvalidArgumentError) as info:
        run_units(usermod.fail_on_five, list(range(12)), RAY)
    assert (info.value.argument, info.value.value) == ("runs", 5)


def test_ray_worker_that_dies_once_is_retried_to_the_same_result(tmp_path: Path) -> None:
    reference = np.stack(run_units(usermod.count_unit, usermod.make_units(rows=2000), ONE))
    marker = tmp_path / "died"
    units = usermod.make_units(rows=2000, die_once=str(marker))
    out = np.stack(run_units(usermod.count_unit, units, RAY))
    assert marker.exists()
    np.testing.assert_array_equal(out, reference)


def test_results_from_ray_are_writable() -> None:
    out = run_units(usermod.writable, [1, 2], RAY)
    out[0] += out[1]
    assert out[0].tolist() == [0, 3, 6, 9]


def test_module_missing_on_the_workers_gives_a_clear_error(tmp_path: Path) -> None:
    # A module the driver has loaded but whose directory is no longer on its
    # import path: the workers cannot import it, as on a cluster whose nodes
    # lack the user's code.
    (tmp_path / "vanishing_user_module.py").write_text("def triple(x):\n    return 3 * x\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import vanishing_user_module
    finally:
        sys.path.remove(str(tmp_path))
    try:
        with pytest.raises(DPAuditError, match="importable on every Ray node"):
            run_units(vanishing_user_module.triple, [1, 2], RAY)
    finally:
        sys.modules.pop("vanishing_user_module", None)


# --------------------------------------------------------------------- CLI
def test_cli_sanity_check_on_ray_equals_local(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["-q", "sanity-check", "laplace", "--epsilon", "1", "--dim", "4", "--runs", "50000"]
    code_l, out_l, _ = run_cli(capsys, *base, "--workers", "2", "--json")
    code_r, out_r, _ = run_cli(capsys, *base, "--backend", "ray", "--workers", "2", "--json")
    assert code_l == code_r == 0
    local, remote = json.loads(out_l), json.loads(out_r)
    for key in ("counts", "empirical_loss", "epsilon_lower_bound", "violation"):
        assert local[key] == remote[key]


def test_cli_unreachable_ray_address_exits_2_with_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, out, err = run_cli(
        capsys,
        "sanity-check",
        "laplace",
        "--epsilon",
        "1",
        "--runs",
        "1000",
        "--backend",
        "ray",
        "--ray-address",
        f"127.0.0.1:{port}",
        "--out",
        str(tmp_path / "run"),
        "--json",
    )
    assert code == 2
    assert out == ""
    assert not (tmp_path / "run").exists()  # nothing half-written
    assert len(err.strip().splitlines()) == 1
    assert "--ray-address" in err
