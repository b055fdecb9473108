"""Published numbers shipped with the package as reference data.

``dpaudit/data/acl2022_results.json`` holds the empirical losses of Fig. 2 of
Habernal (ACL 2022), produced by the author's code; its ``provenance`` block
says where they come from and which cells rest on fewer runs than the paper
states (the reference code assigned instead of adding its chunk counts for
n > 16).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

#: Runs behind each published cell: 10M as the paper states for n <= 16; the
#: reference code kept only its last chunk of 1M runs for n > 16.
ACL2022_PAPER_RUNS = 10_000_000
ACL2022_DEFECT_RUNS = 1_000_000
ACL2022_DEFECT_ABOVE_N = 16


@lru_cache(maxsize=1)
def _load_acl2022() -> dict[str, Any]:
    text = resources.files("dpaudit").joinpath("data", "acl2022_results.json").read_text("utf-8")
    return json.loads(text)


def acl2022_provenance() -> dict[str, str]:
    """Where the published ACL 2022 numbers come from (a copy)."""
    return dict(_load_acl2022()["provenance"])


def acl2022_published() -> dict[str, dict[float, dict[int, float]]]:
    """Published Fig. 2 losses keyed by dpaudit mechanism name, then ε, then n.

    Only the mechanisms Fig. 2 shows (those with a dpaudit counterpart) are
    returned; ``inf`` marks the cells published as infinite.
    """
    data = _load_acl2022()
    out: dict[str, dict[float, dict[int, float]]] = {}
    for ref_name, ours in data["mechanism_names"].items():
        if ours is None:
            continue
        table = data["results"][ref_name]
        out[ours] = {
            float(eps): {int(n): float(v) for n, v in row.items()} for eps, row in table.items()
        }
    return out


def acl2022_published_runs(n: int) -> int:
    """How many runs per dataset the published cell for dimension ``n`` rests on."""
    return ACL2022_DEFECT_RUNS if n > ACL2022_DEFECT_ABOVE_N else ACL2022_PAPER_RUNS
