"""Float-representation flaws found on raw outputs at the CLI's default budget, and exact ones not.

Runs ``dpaudit audit NAME --epsilon 1 --json F`` (the default 120 s time budget,
pilot-sized; ``--time-budget`` changes it) on mechanisms that add noise in float64 as
they are released — numpy's textbook Laplace (``x + rng.laplace``, through the
callable adapter), diffprivlib 0.6.6's ``Laplace`` and ``GaussianAnalytic`` — and on
ones whose bits carry no more than their value: OpenDP's exact Laplace and dpaudit's
own ``laplace`` (rounded by :func:`dpaudit.round_to_grid`).  Records per row the
verdict, the bound, the witness's attack family and set, the ``float representation``
note and the wall time.

    python benchmarks/float_representation.py --json benchmarks/results/float_representation.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: (row label, dpaudit audit arguments after the name).
ROWS = (
    ("numpy x + rng.laplace (callable)", ["float_representation_mechanisms:textbook_laplace",
                                          "--domain", "0,1"]),
    ("diffprivlib-laplace", ["diffprivlib-laplace"]),
    ("diffprivlib-gaussian", ["diffprivlib-gaussian", "--delta", "1e-5"]),
    ("opendp-laplace", ["opendp-laplace"]),
    ("dpaudit laplace", ["laplace"]),
)  # fmt: skip


def run_row(label: str, args: list[str], budget: float) -> dict:
    cli = str(Path(sys.executable).with_name("dpaudit"))
    argv = [cli, "-q", "audit", *args, "--epsilon", "1", "--time-budget", str(budget),
            "--seed", "0", "--json"]  # fmt: skip
    start = time.perf_counter()
    path = os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - start
    try:
        result = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return {"row": label, "error": proc.stderr.strip()[-400:], "wall_s": round(wall, 1)}
    witness = result.get("witness") or {}
    attack = witness.get("attack") or {}
    notes = [n for n in result.get("notes", []) if n.startswith("float representation")]
    return {
        "row": label,
        "verdict": result.get("verdict_text"),
        "epsilon_lcb": result.get("epsilon_lower_bound"),
        "attack_family": attack.get("family") if isinstance(attack, dict) else attack,
        "set": witness.get("output_set") or witness.get("event"),
        "samples": result.get("samples"),
        "representation_note": notes[0] if notes else None,
        "wall_s": round(wall, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-budget", type=float, default=120.0)
    parser.add_argument("--json", type=Path, default=None)
    a = parser.parse_args()
    rows = []
    for label, args in ROWS:
        row = run_row(label, args, a.time_budget)
        print(json.dumps(row), flush=True)
        rows.append(row)
    record = {
        "what": "raw-output audits at the CLI's default budget: dpaudit audit NAME --epsilon 1",
        "date": time.strftime("%Y-%m-%d"),
        "time_budget_s": a.time_budget,
        "rows": rows,
    }
    if a.json:
        a.json.write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
