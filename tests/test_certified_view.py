"""Every auditor that certifies sets shows them as one record, ``detail.certified``.

The black box and the profile auditor store :class:`~dpaudit.results.CertifiedStatement`
values; the metric and rewriter auditors keep their own statement types and give the same
record as a view of them.  Each view must say what its own statements say: the counts, the
one-sided bounds, their error and the bound on ε.
"""

from __future__ import annotations

import numpy as np

from dpaudit.analysis.word_embedding import WordEmbedding
from dpaudit.auditors.metric.auditor import MetricAuditConfig, audit_metric
from dpaudit.auditors.rewriter import RewriterAuditConfig, audit_rewriter
from dpaudit.engine.config import ExecutionConfig
from dpaudit.mechanisms.registry import make_word_mechanism
from dpaudit.mechanisms.rewriters.candidates import CandidateRewriter
from dpaudit.results import CertifiedStatement


def test_the_metric_audits_pairs_read_as_certified_statements() -> None:
    rng = np.random.default_rng(0)
    embedding = WordEmbedding(tuple(f"w{i}" for i in range(30)), rng.normal(size=(30, 4)))
    mech = make_word_mechanism("cmp", embedding, epsilon=3.0)
    config = MetricAuditConfig(seed=0, samples=20_000, final_samples=50_000, max_pairs=4)
    detail = audit_metric(mech, config, ExecutionConfig(workers=1)).detail
    assert len(detail.certified) == len(detail.pairs) > 0
    for i, (pair, statement) in enumerate(zip(detail.pairs, detail.certified, strict=True)):
        assert isinstance(statement, CertifiedStatement) and statement.pair_index == i
        assert (statement.p1_hits, statement.p2_hits) == (pair.p1.hits, pair.p2.hits)
        assert statement.p1_lower == pair.p1.bound and statement.p2_upper == pair.p2.bound
        assert statement.epsilon_lower_bound == pair.epsilon_lower_bound
        assert statement.forward == (pair.numerator == pair.w)


def test_the_rewriter_audits_statements_read_as_certified_statements() -> None:
    public = ("a good film", "a bad film", "a quiet story")
    em = CandidateRewriter("em", public, lambda x, c: float(c.split()[1] in x), (0.0, 1.0), 2.0)
    pairs = [("good", "bad", "one word"), ("good", "quiet", "another")]
    detail = audit_rewriter(em, pairs, RewriterAuditConfig(samples=50, final_samples=200)).detail
    assert len(detail.certified) == len(detail.statements) == 4  # two directions per pair
    assert [s.pair_index for s in detail.certified] == [0, 0, 1, 1]
    assert [s.forward for s in detail.certified] == [True, False, True, False]
    for statement, own in zip(detail.certified, detail.statements, strict=True):
        c = own.certificate
        assert (statement.p1_hits, statement.p1_samples) == (c.p1.hits, c.p1.samples)
        assert (statement.p2_hits, statement.p2_samples) == (c.p2.hits, c.p2.samples)
        assert statement.error == c.p1.bound_error and statement.role == "likelihood ratio"
        assert statement.epsilon_lower_bound == c.lower_bound
