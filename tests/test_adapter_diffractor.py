"""The dp-diffractor adapter (``diffractor:geometric|tem``) on small cases.

Lists are built from GloVe 6B 50-d cut to the package's vocabulary, first
2000 (or 1000) words (``glove:2000``: the package's greedy walk takes ≈ 0.3 s).
Seeds are fixed.  Tolerances: a χ² goodness-of-fit test of draws against the
exact law passes at p > 1e-3 (a correct law fails with probability 1e-3; the
seed is fixed, so the test is deterministic) and a wrong law must give
p < 1e-6; sampled audits are judged by the auditor's own Clopper–Pearson
bounds (confidence 0.95); exact losses are compared to ε·d within 1e-9.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np
import pytest

from dpaudit.adapters._support import library_available

if not library_available("diffractor"):
    pytest.skip("dp-diffractor is not installed (extra 'diffractor')", allow_module_level=True)

from dpaudit.adapters import word_adapter
from dpaudit.adapters.diffractor import (
    DiffractorMechanism,
    embedding_file,
    import_diffractor,
    make_diffractor,
    package_manager,
)
from dpaudit.analysis.word_loss import pair_loss_of_laws
from dpaudit.auditors.core.goodness_of_fit import pooled_chi_square
from dpaudit.auditors.metric.auditor import VIOLATION, MetricAuditConfig, audit_metric
from dpaudit.engine.config import ExecutionConfig
from dpaudit.errors import InvalidArgumentError, UnknownNameError

SMALL = "glove:2000"


def _mech(method: str = "geometric", eps: float = 1.0, **kw: object) -> DiffractorMechanism:
    return DiffractorMechanism(epsilon=eps, method=method, embeddings=SMALL, **kw)  # type: ignore[arg-type]


def _adjacent(mech: DiffractorMechanism, word: str = "good") -> tuple[str, str]:
    """``word`` and its right neighbour on the first list (not a stopword)."""
    lst = mech.library().mgr.lists[0]
    i = lst.index(word)
    assert lst[i + 1] not in mech.library()._stop_words
    return word, lst[i + 1]


def _fit(mech: DiffractorMechanism, law: np.ndarray, word: str, n: int, seed: int) -> float:
    counts = np.bincount(
        mech.sample_codes(word, n, np.random.default_rng(seed)), minlength=len(law)
    )
    return pooled_chi_square(counts, law).p_value


@pytest.mark.parametrize("method", ["geometric", "TEM"])
def test_exact_law_matches_the_packages_draws(method: str) -> None:
    mech = _mech(method)
    law = mech.output_log_probs("good")
    assert law is not None and math.isclose(np.exp(law).sum(), 1.0, rel_tol=1e-9)
    assert _fit(mech, law, "good", 6000, seed=1) > 1e-3
    wrong = _mech(method, eps=3.0).output_log_probs("good")  # control: the law at ε = 3
    assert wrong is not None and _fit(mech, wrong, "good", 6000, seed=1) < 1e-6


def test_geometric_exact_loss_is_exactly_eps_d() -> None:
    # Interior positions: the two-sided geometric's ratio of adjacent words is e^ε exactly.
    mech = _mech(eps=1.0)
    w, wp = _adjacent(mech)
    laws = (mech.output_log_probs(w), mech.output_log_probs(wp))
    d = float(mech.claim.metric.distances([w], [wp])[0])
    assert d == 1.0
    assert pair_loss_of_laws(mech, w, wp, laws, d).loss == pytest.approx(1.0, abs=1e-9)


def test_stopwords_and_unknown_words_come_back_unchanged() -> None:
    mech = _mech()
    rng = np.random.default_rng(0)
    the = mech.vocabulary.index("the")
    assert set(mech.sample_codes("the", 50, rng)) == {the}  # a stopword is never replaced
    assert set(mech.sample_codes("The", 50, rng)) == {the}  # rewrite lower-cases first
    unknown = mech.sample_codes("qzxv", 20, rng)
    assert set(unknown) == {mech.vocabulary.size}  # UNCHANGED: not on any list
    assert math.isinf(mech.claim.metric.distances(["the"], ["good"])[0])


def test_reading_stopwords_once_changes_no_output() -> None:
    fast = _mech().sample_codes("good", 400, np.random.default_rng(5))
    slow = _mech(read_stopwords_once=False).sample_codes("good", 400, np.random.default_rng(5))
    assert np.array_equal(fast, slow)


def _audit(mech: DiffractorMechanism, pair: tuple[str, str]) -> object:
    cfg = MetricAuditConfig(samples=2000, final_samples=6000, pairs=(pair,), search=False)
    return audit_metric(mech, cfg, ExecutionConfig(workers=1)).detail.pairs[0]  # type: ignore[attr-defined]


def test_correct_default_is_not_flagged_and_a_wrong_sensitivity_is() -> None:
    good = _mech()
    pair = _adjacent(good)
    assert _audit(good, pair).verdict != VIOLATION
    # Control: sensitivity 0.5 makes the step ε/0.5-private while the claim stays ε·d.
    broken = _mech(sensitivity=0.5)
    row = _audit(broken, pair)
    assert row.verdict == VIOLATION and row.epsilon_lower_bound > 1.0


def test_two_lists_of_different_coverage_break_the_claim() -> None:
    # List 2 lacks the rarer word: its candidate for the frequent word lands where list 1
    # gives the rarer word (almost) nothing.  Exact loss far above ε·d = ε·1.
    mech = DiffractorMechanism(epsilon=1.0, embeddings="glove:2000,glove:1000")
    first, second = mech.library().mgr.lists
    on_two = set(second)
    stop = mech.library()._stop_words
    pair = next(
        (a, b)
        for a, b in itertools.pairwise(first)
        if a in on_two and b not in on_two and a not in stop and b not in stop
    )
    d = float(mech.claim.metric.distances([pair[0]], [pair[1]])[0])
    laws = (mech.output_log_probs(pair[0]), mech.output_log_probs(pair[1]))
    assert d == 1.0 and pair_loss_of_laws(mech, *pair, laws, d).loss > 5.0
    row = _audit(mech, pair)
    assert row.verdict == VIOLATION and row.epsilon_lower_bound > 1.0


def test_byoe_cleaning_always_raises(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # its Downloader makes ~/.cache/diffractor
    utils = import_diffractor().utils
    src = embedding_file(SMALL)
    with pytest.raises(UnboundLocalError):
        utils.prepare_custom_embeddings(src, str(tmp_path) + "/out.txt")
    monkeypatch.setattr(sys, "argv", ["diffractor-clean", src])
    with pytest.raises(TypeError):
        utils.prepare_custom_embeddings_cli()


def test_package_manager_matches_a_fresh_build() -> None:
    path = embedding_file("glove:300")
    cached = package_manager((path,))
    fresh = import_diffractor().utils.EmbeddingManager([path])
    assert cached.lists == fresh.lists and cached.word_to_idx == fresh.word_to_idx


_RELEASE = textwrap.dedent(
    """
    import json, sys
    from dpaudit.adapters.diffractor import embedding_file, import_diffractor
    pkg = import_diffractor()
    path = embedding_file("glove:2000")
    pkg.core.ensure_embeddings = lambda names=None: [path]
    df = pkg.Diffractor(pkg.DiffractorConfig(epsilon=1.0, verbose=False))  # seed 42
    out = df.rewrite(sys.argv[1:])
    pos = df.mgr.word_to_idx[0]
    df.close()
    print(json.dumps([out, [pos[o] - pos[w] for o, w in zip(out, sys.argv[1:])]]))
    """
)


def _fresh_release(words: list[str]) -> tuple[list[str], list[int]]:
    env = dict(os.environ, PYTHONHASHSEED="0")
    run = subprocess.run(
        [sys.executable, "-c", _RELEASE, *words],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    out, shift = json.loads(run.stdout.strip().splitlines()[-1])
    return out, shift


def test_default_seed_makes_every_fresh_instance_release_the_same_noise() -> None:
    # DiffractorConfig.seed = 42: the first text's noise is the same in every process, so
    # the released position minus that public offset is the input's position.
    first = _fresh_release(["good"])
    assert _fresh_release(["good"]) == first
    other = _fresh_release(["great"])  # far from the list's ends: nothing is clamped
    assert other[1] == first[1] and other[0] != first[0]  # the same offset, another input


@pytest.mark.slow
def test_a_second_pool_in_one_process_never_returns_a_rewrite() -> None:
    # close() then rewrite() starts a second mp.Pool; its workers' _identity is 2, 3, …, so
    # _worker_initializer's lists[_identity[0] - 1] raises IndexError in every new worker.
    # The pool replaces each one and rewrite waits forever, unless rewrite reaches starmap
    # while no worker is alive: then len(self._pool) is 0 and it dies of ZeroDivisionError
    # (seen in a fresh-clone CI run).  Either way no rewrite comes back.
    # Watched rather than waited out: three dead workers, or one and the process still
    # running 20 s later, show the endless wait.
    code = _RELEASE.replace("df.close()\n", "df.close()\ndf.rewrite(['good'])\n")
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [sys.executable, "-c", code, "good"], stderr=err, stdout=subprocess.PIPE
        )
        try:
            deadline, first = time.monotonic() + 120, None
            failures = 0
            while time.monotonic() < deadline and proc.poll() is None and failures < 3:
                time.sleep(0.25)
                err.seek(0)
                failures = err.read().count(b"IndexError")
                if failures and first is None:
                    first = time.monotonic()
                    deadline = min(deadline, first + 20)
            err.seek(0)
            text = err.read()
            tail = text[-1500:].decode(errors="replace")
            assert failures >= 1, f"no worker of the second pool failed as expected: {tail}"
            if proc.poll() is not None:  # it ended: only by the empty pool's crash
                assert proc.returncode != 0 and b"ZeroDivisionError" in text, tail
                assert proc.stdout is not None and proc.stdout.read() == b"", "a rewrite came back"
        finally:
            proc.kill()
            proc.wait()


def test_make_diffractor_parses_cli_parameters() -> None:
    mech = word_adapter("diffractor:tem")(epsilon="2", gamma="3", embeddings=SMALL)
    assert (mech.method, mech.epsilon, mech.gamma, mech.radius) == ("TEM", 2.0, 3, 3.0)
    assert "position" in mech.claim.describe()
    with pytest.raises(InvalidArgumentError, match="MECHANISM"):
        make_diffractor("diffractor:laplace", epsilon=1)
    with pytest.raises(UnknownNameError):
        make_diffractor("diffractor:geometric", epsilon=1, colour="red")
    with pytest.raises(InvalidArgumentError, match="epsilon"):
        make_diffractor("diffractor:geometric")
    with pytest.raises(InvalidArgumentError, match="embeddings"):
        make_diffractor("diffractor:geometric", epsilon=1, embeddings="glove:x")


def test_mechanism_pickles_small() -> None:
    import pickle

    mech = _mech()
    mech.library()
    blob = pickle.dumps(mech)
    assert len(blob) < 2000  # the configuration only; lists are rebuilt from the disk cache
    assert pickle.loads(blob).spec() == mech.spec()
