"""The ACL 2022 sanity-check grid (Habernal, ACL 2022, Fig. 2) and the reference code's defects.

Every mechanism × ε × n cell of the paper's grid is one run of the
reconstruction sanity check (:mod:`dpaudit.auditors.sanity.check`); all cells'
work units go to the engine together.  :func:`reference_effective_runs` says
how many runs stand behind one *published* cell (the authors' code overwrote
chunk counts for n > 16).  Used by :mod:`dpaudit.reproduce.habernal2022_fig2`
and the ``acl-grid`` benchmark.  Sits above ``auditors/`` and ``mechanisms/``;
nothing below ``reproduce/`` imports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dpaudit.auditors.core.procedure import run_audits
from dpaudit.auditors.sanity.check import SanityAuditor
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms import make_mechanism
from dpaudit.results.audit import AuditResult
from dpaudit.validation import check_probability_open

ACL2022_EPSILONS = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
ACL2022_DIMS = (1, 2, 8, 32, 64, 128)
ACL2022_MECHANISMS = ("laplace", "adept-acl22", "dptext", "identity", "random-bits")


@dataclass(frozen=True)
class AclGridRow:
    """One cell of the ACL 2022 grid, flat (tidy) for tables and CSV."""

    mechanism: str
    epsilon: float
    dim: int
    runs: int
    f00: int
    f01: int
    f10: int
    f11: int
    empirical_loss: float
    epsilon_lower_bound: float
    confidence: float
    violation: bool
    path: str


def run_acl2022_grid(
    runs: int = 10_000_000,
    *,
    mechanisms: Sequence[str] = ACL2022_MECHANISMS,
    epsilons: Sequence[float] = ACL2022_EPSILONS,
    dims: Sequence[int] = ACL2022_DIMS,
    seed: int = 1234,
    confidence: float = 0.95,
    familywise: bool = False,
    tie_rule: str = "half-even",
    execution: ExecutionConfig | None = None,
) -> list[AclGridRow]:
    """The sanity-check grid of Habernal (ACL 2022, Fig. 2): every mechanism × ε × n.

    Each cell is its own audit of its own claim at ``confidence``; with
    ``familywise=True`` the level is Bonferroni-corrected over all cells
    instead.  All cells' units go to the executor together, so workers stay
    busy across small and large cells.  Rows come in (mechanism, ε, n) order.
    """
    return [
        row
        for row, _ in audit_acl2022_grid(
            runs, mechanisms=mechanisms, epsilons=epsilons, dims=dims, seed=seed,
            confidence=confidence, familywise=familywise, tie_rule=tie_rule, execution=execution,
        )
    ]  # fmt: skip


def audit_acl2022_grid(
    runs: int = 10_000_000,
    *,
    mechanisms: Sequence[str] = ACL2022_MECHANISMS,
    epsilons: Sequence[float] = ACL2022_EPSILONS,
    dims: Sequence[int] = ACL2022_DIMS,
    seed: int = 1234,
    confidence: float = 0.95,
    familywise: bool = False,
    tie_rule: str = "half-even",
    execution: ExecutionConfig | None = None,
) -> list[tuple[AclGridRow, AuditResult]]:
    """:func:`run_acl2022_grid` with each cell's typed audit result beside its row.

    The result is the cell's whole sanity check (:class:`AuditResult` with its
    :class:`~dpaudit.auditors.sanity.check.SanityDetail`), which a figure's
    record stores; the row is its flat form for tables and CSV.
    """
    confidence = check_probability_open("confidence", confidence)
    cells = [(m, e, n) for m in mechanisms for e in epsilons for n in dims]
    if not cells:
        raise InvalidArgumentError("grid", cells, "at least one mechanism, ε and n")
    level = 1.0 - (1.0 - confidence) / len(cells) if familywise else confidence
    # No trust call: dpaudit's own mechanisms sample by their declared transform.
    auditor = SanityAuditor(runs, tie_rule, trusted=True)
    jobs = []
    for m, e, n in cells:
        mech = make_mechanism(m, epsilon=e, dim=n)
        jobs.append((auditor, mech, mech.claim, {"seed": seed, "confidence": level}))
    results = run_audits(jobs, execution, desc="ACL 2022 grid")
    rows = []
    for (m, e, n), r in zip(cells, results, strict=True):
        (f00, f01), (f10, f11) = r.detail.counts
        rows.append((
            AclGridRow(
                mechanism=m,
                epsilon=e,
                dim=n,
                runs=runs,
                f00=f00,
                f01=f01,
                f10=f10,
                f11=f11,
                empirical_loss=r.detail.empirical_loss,
                epsilon_lower_bound=r.epsilon_lower_bound,
                confidence=level,
                violation=r.violation,
                path=r.detail.path,
            ),
            r,
        ))  # fmt: skip
    return rows


def reference_effective_runs(dim: int, runs: int = 10_000_000) -> int:
    """Runs behind one published ACL 2022 cell: the last of 10 chunks when ``dim > 16``.

    The reference code ran ``n > 16`` in 10 chunks and overwrote the counts, so
    its cells rest on ``runs // 10`` runs (1M of the nominal 10M).
    """
    return runs // 10 if dim > 16 else runs
