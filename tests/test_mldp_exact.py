"""mldp-text's TEM law read from the library's own code: exact, checked against its sampler.

Runs in ``.venv-mldp`` (mldp-text pins numpy < 2); skipped elsewhere, where
``tests/test_mldp_env.py`` runs it by subprocess.  TEM draws ≈ 10 words/s, so
the sampled checks use few draws: the χ² test pools outcomes into bins that
expect ≥ 5 draws each (:mod:`dpaudit.auditors.core.goodness_of_fit`).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.adapters._support import library_available

if not library_available("mldp_text"):  # checked without importing it (its import may download)
    pytest.skip("mldp-text is not installed (extra 'mldp')", allow_module_level=True)

from dpaudit.adapters.mldp import import_mldp, make_mldp
from dpaudit.adapters.mldp_exact import library_output_law
from dpaudit.analysis.word_loss import pair_loss
from dpaudit.auditors.core.declarations import DECLARATION_ALPHA
from dpaudit.auditors.core.goodness_of_fit import pooled_chi_square
from dpaudit.auditors.metric.auditor import INCONCLUSIVE, MetricAuditConfig, audit_metric
from dpaudit.engine.config import ExecutionConfig
from dpaudit.mechanisms.word.base import N_SPECIAL
from dpaudit.random import unit_rng


def _tem_law_by_hand(mech, word: str) -> np.ndarray:
    """mldp-text 0.1.2's TEM (mechanisms.py, TEM.replace_word) written out independently.

    Scores ``−‖v_y − v_w‖`` within ``round(2/ε·ln((1−β)·|E|/β), 1)`` (β = 0.001, |E| the
    embedding's size), ``⊥ = −threshold + 2·ln(|VOCAB|/|L_w|)/ε`` (|VOCAB| from the
    package's vocab.txt), Gumbel(0, 2/ε) noise: a softmax of ε·score/2; ⊥ spread over
    the words outside.
    """
    lib = mech.library()
    vecs = lib.embedding_matrix.vectors
    d = np.linalg.norm(vecs - lib.embedding_matrix[word], axis=1)
    eps = mech.epsilon
    thr = round(2 / eps * math.log(((1 - 0.001) * len(lib.embedding_matrix)) / 0.001), 1)
    inside = d <= thr
    bottom = -thr + 2 * np.log(lib.vocab_size / inside.sum()) / eps
    logits = np.concatenate([-d[inside], [bottom]]) * eps / 2
    logits -= np.logaddexp.reduce(logits)
    out = np.full(len(d) + N_SPECIAL, -np.inf)
    out[np.flatnonzero(inside)] = logits[:-1]
    out[np.flatnonzero(~inside)] = logits[-1] - math.log(max((~inside).sum(), 1))
    return out


@pytest.mark.parametrize(("epsilon", "word"), [("3", "three"), ("5", "four")])
def test_recorded_law_is_the_librarys_own(epsilon: str, word: str) -> None:
    mech = make_mldp("mldp:tem", epsilon=epsilon)
    law = mech.output_log_probs(word)
    assert law is not None and law.shape == (mech.n_codes,)
    assert float(np.logaddexp.reduce(law)) == pytest.approx(0.0, abs=1e-9)
    want = _tem_law_by_hand(mech, word)
    assert np.array_equal(np.isfinite(law), np.isfinite(want))
    both = np.isfinite(law)
    np.testing.assert_allclose(law[both], want[both], rtol=1e-6, atol=1e-6)
    # The library object is left as it was: its module's np and max are restored.
    module = import_mldp().mechanisms
    assert module.np is np and "max" not in vars(module)


def test_the_law_fits_the_real_sampler_and_a_wrong_one_does_not() -> None:
    """60 real draws of TEM (ε = 3, 'three'); χ² at the declaration error 10⁻³.

    A correct law is rejected with probability ≤ 10⁻³ (fixed seed); the law of
    ε = 2 (top word 0.055 instead of 0.51) must be rejected by the same draws.
    """
    mech = make_mldp("mldp:tem", epsilon="3")
    codes = mech.sample_codes("three", 60, unit_rng(0, (5, 1)))
    counts = np.bincount(codes, minlength=mech.n_codes)
    fit = pooled_chi_square(counts, mech.output_log_probs("three"))
    assert fit.p_value >= DECLARATION_ALPHA and fit.impossible == 0 and fit.dof >= 2
    wrong = make_mldp("mldp:tem", epsilon="2").output_log_probs("three")
    assert pooled_chi_square(counts, wrong).p_value < DECLARATION_ALPHA


def test_exact_violation_beside_an_audit_that_cannot_see_it() -> None:
    """TEM at ε = 5 on ('three', 'four'): exact loss 8.64 > ε·d = 6.35, on an output of
    mass ~10⁻⁷; a 16-draw audit is inconclusive (never "no violation found") and
    reports the exact loss and the law check beside it."""
    mech = make_mldp("mldp:tem", epsilon="5")
    exact = pair_loss(mech, "three", "four")
    assert exact.violates and exact.loss == pytest.approx(8.642, abs=2e-3)
    cfg = MetricAuditConfig(
        samples=8, final_samples=16, search=False, pairs=(("three", "four"),), seed=0
    )
    res = audit_metric(mech, cfg, ExecutionConfig(workers=1))
    (p,) = res.detail.pairs
    assert p.verdict == INCONCLUSIVE and p.exact_loss == pytest.approx(exact.loss)
    assert res.detail.law_check["mismatches"] == {}
    assert any("exact loss exceeds ε·d" in n for n in res.notes)


def test_mechanisms_with_continuous_noise_have_no_exact_law() -> None:
    mech = make_mldp("mldp:vickrey", epsilon="5", use_faiss="false")
    assert mech.output_log_probs("three") is None


def test_a_deterministic_call_is_a_point_mass() -> None:
    mech = make_mldp("mldp:tem", epsilon="5")
    law = library_output_law(mech.library(), "notaword_xyz", mech.vocabulary)
    assert law is not None and np.isfinite(law).sum() == 1  # returned unchanged
    assert float(law.max()) == 0.0
