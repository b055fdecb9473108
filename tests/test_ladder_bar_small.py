"""benchmarks/ladder_bar_small.py: both ladder bars' bounds from one run per seed."""

from __future__ import annotations

import importlib.util
from pathlib import Path

PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "ladder_bar_small.py"
spec = importlib.util.spec_from_file_location("ladder_bar_small", PATH)
ladder_bar_small = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ladder_bar_small)


def test_the_face_bound_derived_from_a_projected_run_is_the_readme_example():
    # README's example (20 000 / 100 000, seed 0) runs with the face bar ("auto" at a
    # final sample 5× the selection sample) and shows ε ≥ 1.96343; the projected run of
    # the same seed certifies one more rung and gives it back with that rung dropped.
    r = ladder_bar_small.compare("readme-laplace-eps2", 1)
    assert round(r["mean_face"], 5) == 1.96343
    assert r["mean_k_projected"] == r["mean_k_face"] + 1
    assert r["mean_projected"] < r["mean_face"]  # the wider split, no rung winning
    assert r["violations_projected"] == r["violations_face"] == 1
