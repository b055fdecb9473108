"""A user's own auditor, of a kind of its own, through the core's procedure and dpaudit.audit.

The auditor below is what a user writes: it proposes one statement (the event ``{output >
t}`` on the inputs 0 and 1, ``t`` read off pilot samples of its own) and reads the core's
certificate.  Its kind is its own (``"median-split"``), registered with its detail type;
its result serialises, reads back in another process and renders as a report.

The closed form: a Laplace mechanism with scale ``b`` on inputs 0 and 1 is ``1/b``-DP, and
the set ``{y > t}`` for ``t`` between the inputs has a likelihood ratio below ``e^{1/b}``,
so a claim of ``1/b`` is refuted with probability at most α, and a claim of half of it is
refuted at the sizes drawn here (the bound's sampling error at n = 20 000 is about 0.05).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import dpaudit
from dpaudit.auditors.core.answer import Evidence, Judged
from dpaudit.auditors.core.counting import FinalPlan, Stream, UnitGenerators
from dpaudit.auditors.core.procedure import Certified, Proposals, Reading, run_audit
from dpaudit.auditors.core.proposal import Proposal
from dpaudit.claims import PureDP
from dpaudit.engine.config import ExecutionConfig
from dpaudit.errors import InvalidArgumentError
from dpaudit.random import unit_rng
from dpaudit.results import AuditResult, register_detail
from dpaudit.results.audit import auditor_kind
from dpaudit.verdicts import Verdict

ONE = ExecutionConfig(workers=1)


@register_detail("median-split")
@dataclass(frozen=True)
class MedianSplitDetail:
    """What the median-split auditor saw: its threshold and the final counts."""

    threshold: float
    hits: tuple[int, int]


@dataclass(frozen=True)
class LaplaceDraw:
    """Laplace noise of scale ``scale`` on the input (a user's mechanism, drawn in blocks)."""

    scale: float

    def __call__(self, x: int, rows: int, rng: np.random.Generator) -> np.ndarray:
        return x + rng.laplace(0.0, self.scale, rows)


@dataclass(frozen=True)
class Above:
    """The event ``{output > threshold}``, a predicate on a block of outputs."""

    threshold: float

    def __call__(self, block: np.ndarray) -> np.ndarray:
        return block > self.threshold

    def describe(self) -> str:
        return f"output > {self.threshold:.4g}"


@dataclass(frozen=True)
class MedianSplitAuditor:
    """Proposes ``{y > t}`` on the pair (0, 1), ``t`` the median of pilot outputs of both."""

    samples: int = 20_000
    seed: int = 0
    kind = "median-split"

    def supports(self, mechanism: Any, claim: Any) -> bool:
        return isinstance(mechanism, LaplaceDraw) and isinstance(claim, PureDP)

    def propose(self, mechanism: Any, claim: Any, config: Any, execution: Any) -> Proposals:
        pilot = np.concatenate([mechanism(x, 500, unit_rng(self.seed, (1, x))) for x in (0, 1)])
        threshold = float(np.median(pilot))
        streams = (Stream(0, (2, 0)), Stream(1, (2, 1)))
        return Proposals(
            statements=(Proposal(0, False, Above(threshold), "best"),),
            plan=FinalPlan(mechanism, streams, self.samples, UnitGenerators(self.seed)),
            pair_streams=((0, 1),),
            chosen="The threshold is the median of 1 000 pilot outputs.",
            confidence=0.95,
            mechanism={"name": "user laplace", "params": {"scale": mechanism.scale}},
            seed=self.seed,
            samples={"pilot": 500, "final": self.samples},
            state=(threshold, claim.epsilon),
        )

    def read(self, proposals: Proposals, certified: Certified) -> Reading:
        (cert,), (counts,) = certified.certificates, certified.counts
        threshold, claimed = proposals.state
        bound = cert.lower_bound
        return Reading(
            judged=(Judged.of_bound(max(bound, 0.0), claimed),),
            evidence=Evidence(refuted=f"ε ≥ {bound:.4g}", held="the split shows no more"),
            bound=bound,
            witness=None,
            detail=MedianSplitDetail(threshold, (counts.hits_x, counts.hits_x_prime)),
        )

    def audit(self, mechanism: Any, claim: Any, config: Any, execution: Any) -> AuditResult:
        return run_audit(self, mechanism, claim, config, execution)


def test_a_user_auditor_runs_through_dpaudit_audit_with_its_own_kind() -> None:
    mech = LaplaceDraw(1.0)
    flagged = dpaudit.audit(mech, PureDP(0.5), method=MedianSplitAuditor(), execution=ONE)
    assert flagged.kind == "median-split"
    assert flagged.verdict is Verdict.VIOLATION and flagged.epsilon_lower_bound > 0.5
    assert isinstance(flagged.detail, MedianSplitDetail)
    assert flagged.confidence_statement.startswith("The threshold is the median")
    held = dpaudit.audit(mech, PureDP(1.0), method=MedianSplitAuditor(), execution=ONE)
    assert held.verdict is Verdict.NO_VIOLATION_FOUND


def test_its_result_reads_back_here_and_in_a_fresh_process(tmp_path: Path) -> None:
    result = dpaudit.audit(
        LaplaceDraw(1.0), PureDP(0.5), method=MedianSplitAuditor(), execution=ONE
    )
    data = result.to_dict()
    assert data["kind"] == "median-split" and data["detail_module"] == __name__
    assert AuditResult.from_dict(json.loads(result.to_json())) == result
    path = tmp_path / "result.json"
    path.write_text(result.to_json(), encoding="utf-8")
    here = Path(__file__).parent
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(here)!r})
        from dpaudit.results import AuditResult
        r = AuditResult.from_json(open({str(path)!r}, encoding="utf-8").read())
        print(r.kind, type(r.detail).__name__, r.detail.hits)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[:2] == ["median-split", "MedianSplitDetail"]


def test_unknown_and_malformed_kinds_are_refused_naming_what_is_allowed() -> None:
    with pytest.raises(InvalidArgumentError, match="register_detail"):
        auditor_kind("never-registered")
    with pytest.raises(InvalidArgumentError, match="a-z"):
        register_detail("Bad Kind")
    other = type("Other", (), {"__module__": "elsewhere"})
    with pytest.raises(InvalidArgumentError, match="not yet registered"):
        register_detail("median-split")(other)
    data = dpaudit.audit(
        LaplaceDraw(1.0), PureDP(1.0), method=MedianSplitAuditor(), execution=ONE
    ).to_dict()
    data["kind"], data["detail_module"] = "another-kind", "no.such.module"
    with pytest.raises(InvalidArgumentError, match="detail_module"):
        AuditResult.from_dict(data)
    # Built-in kinds still read back as the enum.
    assert auditor_kind("blackbox") is dpaudit.results.AuditorKind.BLACKBOX
