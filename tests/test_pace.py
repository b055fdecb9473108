"""The machine's pace: the probe against its reference, and the pooled factor's closed form."""

from __future__ import annotations

import pytest

from dpaudit.engine import pace
from dpaudit.engine.pace import PROBE_WEIGHT_S, Pace, probe_pace


def test_an_unprobed_pace_with_nothing_finished_keeps_the_idle_estimate() -> None:
    assert Pace().estimate(40.0) == 40.0


def test_the_factor_pools_the_probe_with_the_finished_work() -> None:
    p = Pace(probe=2.0)
    assert p.factor == pytest.approx(2.0)
    p.observe(30.0, 120.0)  # a figure 4× slower than its idle estimate
    expected = (PROBE_WEIGHT_S * 2.0 + 120.0) / (PROBE_WEIGHT_S + 30.0)
    assert p.factor == pytest.approx(expected) and p.estimate(10.0) == pytest.approx(10 * expected)
    p.observe(0.0, 5.0)  # no estimate: nothing to learn from
    assert p.factor == pytest.approx(expected)


def test_the_factor_stays_in_its_range() -> None:
    low, high = pace.FACTOR_RANGE
    assert Pace(probe=1000.0).factor == high
    fast = Pace(probe=1.0)
    fast.observe(500.0, 0.0)  # every unit kept from a checkpoint
    assert fast.factor == low


def test_the_probe_measures_the_time_of_its_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """A clock that advances by the reference per repeat gives exactly 1; by twice it, 2."""
    for per_round, factor in ((pace.PROBE_REFERENCE_S / pace.PROBE_REPEATS, 1.0),
                              (2 * pace.PROBE_REFERENCE_S / pace.PROBE_REPEATS, 2.0)):  # fmt: skip
        ticks = iter([0.0, per_round * pace.PROBE_REPEATS])
        monkeypatch.setattr(pace.time, "perf_counter", lambda t=ticks: next(t))
        assert probe_pace() == pytest.approx(factor)


def test_the_real_probe_is_quick_and_in_range() -> None:
    import time

    start = time.perf_counter()
    factor = probe_pace()
    assert time.perf_counter() - start < 30 * pace.PROBE_REFERENCE_S * 4 / 3
    assert pace.FACTOR_RANGE[0] <= factor <= pace.FACTOR_RANGE[1]


def test_without_a_run_queue_one_thread_is_asked_for_only_on_a_busy_machine(
    monkeypatch,
) -> None:
    monkeypatch.setattr(pace, "competing_runnable", lambda: None)
    assert pace.threads_for_now(pace.BUSY_FACTOR) == 1
    assert pace.threads_for_now(1.0) is None


def test_threads_are_the_cores_other_work_leaves(monkeypatch) -> None:
    monkeypatch.setattr(pace, "usable_cpus", lambda: 4)
    for others, threads in ((0, None), (1, 3), (3, 1), (9, 1)):
        monkeypatch.setattr(pace, "competing_runnable", lambda n=others: n)
        assert pace.threads_for_now(1.0) == threads  # the probe is not asked
    monkeypatch.setattr(pace, "competing_runnable", lambda: 0)
    assert pace.threads_for_now(pace.BUSY_FACTOR) is None  # the run queue outranks it


def test_the_run_queue_is_read_less_the_reader(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(pace, "RUNQUEUE_PAUSE_S", 0.0)
    loadavg = tmp_path / "loadavg"
    loadavg.write_text("2.33 2.24 1.67 3/83 15253\n")  # the reader and two spinners
    assert pace.competing_runnable(str(loadavg)) == 2
    loadavg.write_text("0.34 0.57 0.96 1/79 15163\n")  # the reader alone
    assert pace.competing_runnable(str(loadavg)) == 0
    assert pace.competing_runnable(str(tmp_path / "none")) is None
