"""Sensitivity-violation simulation (EMNLP 2021 §6, Fig. 1): analytic facts and curve shape."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from _cli import run_cli_quiet

from dpaudit.auditors.sensitivity.simulation import (
    clip_rows,
    l1_distances,
    parse_dims,
    simulate_sensitivity,
    vector_norms,
)
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.errors import InvalidArgumentError

ONE = ExecutionConfig(workers=1)
C = 10.0


def fractions(result) -> dict[int, float]:  # type: ignore[no-untyped-def]
    return {r.dim: r.violating_fraction for r in result.results}


def test_clipping_projects_onto_the_ball() -> None:
    rng = np.random.default_rng(0)
    r = rng.uniform(-C, C, size=(1000, 5))
    for p in (1.0, 2.0, 3.0, math.inf):
        clipped = clip_rows(r, C, p)
        norms = vector_norms(clipped, p)
        assert np.all(norms <= C * (1 + 1e-12))
        inside = vector_norms(r, p) <= C
        assert np.array_equal(clipped[inside], r[inside])  # untouched inside the ball
    assert np.allclose(vector_norms(r, 3.0), np.linalg.norm(r, ord=3, axis=1))
    assert np.array_equal(clip_rows(np.zeros((1, 3)), C), np.zeros((1, 3)))


def test_the_papers_n2_pair_breaks_2c() -> None:
    # Habernal 2021, Sec. 4: r = ±(2C/3, 2C/3) lies in the L2 ball; L1 distance 8C/3 > 2C.
    a = np.array([[2 * C / 3, 2 * C / 3]])
    d = l1_distances(clip_rows(a, C), clip_rows(-a, C))
    assert d[0] == pytest.approx(8 * C / 3)
    # And the true L1 sensitivity of L2 clipping, 2C·sqrt(n), is attained on the diagonal.
    n = 16
    v = np.full((1, n), 10 * C)
    assert l1_distances(clip_rows(v, C), clip_rows(-v, C))[0] == pytest.approx(2 * C * 4)


def test_l1_clipping_never_violates() -> None:
    for dist, scale in (("uniform", "std"), ("normal", "variance")):
        res = simulate_sensitivity(
            "1-64",
            distribution=dist,
            normal_scale=scale,
            bound=1.0,
            clip_norm=1,
            pairs=2000,
            seed=3,
            execution=ONE,
        )
        assert all(r.violating == 0 for r in res.results)
        assert all(r.ci[0] == 0.0 for r in res.results)


def test_dim_one_never_violates_under_l2() -> None:
    for dist in ("uniform", "normal"):
        res = simulate_sensitivity([1], distribution=dist, pairs=20_000, execution=ONE)
        assert res.results[0].violating == 0 and res.results[0].boundary == 0


def test_uniform_curve_rises_quickly_to_one() -> None:
    res = simulate_sensitivity("1-16,32,64", pairs=10_000, seed=1, execution=ONE)
    f = fractions(res)
    # 5 standard errors of a fraction from 10,000 pairs is at most 0.025.
    tol = 5 * math.sqrt(0.25 / 10_000)
    assert 0.05 < f[2] < 0.3
    assert f[8] > 0.9
    assert f[16] > 0.99 and f[32] >= 0.999 and f[64] >= 0.999
    assert all(f[d + 1] >= f[d] - tol for d in range(1, 16))
    for r in res.results:
        assert r.ci[0] <= r.violating_fraction <= r.ci[1]


def test_normal_curve_rises_later_than_uniform() -> None:
    normal = fractions(
        simulate_sensitivity(
            "1-8,12,16,20,32,64", distribution="normal", pairs=10_000, seed=2, execution=ONE
        )
    )
    uniform = fractions(simulate_sensitivity("8,16", pairs=10_000, seed=2, execution=ONE))
    # With std 0.1·C = 1 the L1 distance of a pair is about 1.13·n: it passes 2C = 20
    # only from n ≈ 18 on, where the uniform case is long saturated.
    assert max(normal[d] for d in range(1, 9)) <= 0.001
    assert normal[16] < uniform[16] - 0.5 and normal[8] < uniform[8] - 0.5
    assert 0.1 < normal[20] < 0.95
    assert normal[32] > 0.99 and normal[64] > 0.99


def test_normal_scale_readings() -> None:
    std = simulate_sensitivity([2], distribution="normal", bound=1.0, pairs=10, execution=ONE)
    var = simulate_sensitivity(
        [2], distribution="normal", normal_scale="variance", bound=1.0, pairs=10, execution=ONE
    )
    assert std.sampling_std == pytest.approx(0.1)
    assert var.sampling_std == pytest.approx(math.sqrt(0.1))
    # At the published C = 10 the two readings coincide (std 1).
    at10 = simulate_sensitivity([2], distribution="normal", normal_scale="variance", pairs=10)
    assert at10.sampling_std == pytest.approx(1.0)


def test_claimed_sensitivity_is_respected() -> None:
    # With the true sensitivity 2C·sqrt(n) claimed, L2 clipping never violates.
    res = simulate_sensitivity([9], pairs=5000, claimed_sensitivity=2 * C * 3, execution=ONE)
    assert res.results[0].violating == 0


def test_parse_dims() -> None:
    assert parse_dims("1-4") == (1, 2, 3, 4)
    assert parse_dims("1,2,8") == (1, 2, 8)
    assert parse_dims("1-3, 16,2") == (1, 2, 3, 16)
    for bad in ("", "0-3", "4-2", "a", "1-", "1--3"):
        with pytest.raises(InvalidArgumentError, match="dims"):
            parse_dims(bad)


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"pairs": 0}, "pairs"),
        ({"bound": -1.0}, "bound"),
        ({"clip_norm": 0.5}, "clip_norm"),
        ({"distribution": "cauchy"}, "distribution"),
        ({"normal_scale": "sd"}, "normal_scale"),
        ({"confidence": 1.0}, "confidence"),
    ],
)
def test_rejects_bad_arguments(kwargs: dict[str, object], argument: str) -> None:
    with pytest.raises(InvalidArgumentError, match=argument):
        simulate_sensitivity([2], execution=ONE, **kwargs)  # type: ignore[arg-type]


def test_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli_quiet(
        capsys,
        "simulate-sensitivity",
        "--distribution",
        "uniform",
        "--dims",
        "1-3,8",
        "--pairs",
        "2000",
        "--bound",
        "10",
        "--seed",
        "4",
        "--workers",
        "1",
        "--json",
    )
    assert code == 0
    data = json.loads(out)
    assert [r["dim"] for r in data["results"]] == [1, 2, 3, 8]
    for r in data["results"]:
        assert set(r) >= {"dim", "violating_fraction", "ci"}
        assert r["ci"][0] <= r["violating_fraction"] <= r["ci"][1]


@pytest.mark.parametrize(
    "argv",
    [["--dims", "0-3"], ["--pairs", "0"], ["--clip-norm", "abc"], ["--confidence", "2"]],
)
def test_cli_bad_input_exits_2(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, out, err = run_cli_quiet(capsys, "simulate-sensitivity", "--workers", "1", *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
