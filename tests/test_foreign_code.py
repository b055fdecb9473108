"""Code nobody here wrote: foreign random-number habits, declarations checked, no false alarms.

Every mechanism below is a *correct* or a deliberately *broken* Laplace in the
style of research code: ``f(x, n, rng)`` functions that seed their own
generator, draw from numpy's or Python's global generator, or from OS entropy,
and mechanism classes whose sampler contradicts their declared density or
transform.
"""

from __future__ import annotations

import dataclasses
import random
import textwrap
from pathlib import Path

import numpy as np
import pytest
from _cli import run_cli_quiet

from dpaudit.auditors.blackbox.auditor import AuditConfig, audit
from dpaudit.auditors.core.declarations import check_log_prob, check_transform
from dpaudit.auditors.core.guard import check_randomness, checked_sample
from dpaudit.auditors.sanity.check import sanity_check
from dpaudit.claims import Definition, InputDomain, PrivacyClaim
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.errors import MechanismError
from dpaudit.mechanisms import make_mechanism
from dpaudit.mechanisms.laplace import LaplaceMechanism
from dpaudit.mechanisms.output_grid import round_to_grid
from dpaudit.random import open_uniform
from dpaudit.testing import PrivacyViolationError, as_mechanism, assert_no_violation

EPS = 1.0
CLAIM = PrivacyClaim(Definition.PURE, EPS, InputDomain((1,), 0.0, 1.0))


# ------------------------------------------------------- foreign-style mechanisms
def self_seeded_laplace(x, n, rng):
    """Correct noise scale, but a fixed seed inside: every call repeats the same noise."""
    return x + np.random.default_rng(12345).laplace(0.0, 1.0 / EPS, size=(n, x.size))


def global_numpy_laplace(x, n, rng):
    """Correct, drawing from numpy's global generator (most research code)."""
    return round_to_grid(x + np.random.laplace(0.0, 1.0 / EPS, size=(n, x.size)), 1.0 / EPS)


def global_numpy_broken(x, n, rng):
    """Global generator, noise 4× too small: true ε = 4 against a claim of 1."""
    return x + np.random.laplace(0.0, 0.25 / EPS, size=(n, x.size))


def global_python_laplace(x, n, rng):
    """Correct, drawing from Python's ``random`` (signed exponential)."""
    draws = [random.expovariate(EPS) * random.choice((-1.0, 1.0)) for _ in range(n * x.size)]
    return round_to_grid(x + np.asarray(draws).reshape(n, x.size), 1.0 / EPS)


def os_entropy_laplace(x, n, rng):
    """Correct, unseedable: a fresh OS-seeded generator per call."""
    return round_to_grid(
        x + np.random.default_rng().laplace(0.0, 1.0 / EPS, size=(n, x.size)), 1.0 / EPS
    )


def constant_output(x, n, rng):
    """Deterministic (and not private): outputs x itself."""
    return np.repeat(x.reshape(1, -1), n, axis=0)


QUICK = {"samples": 20_000}


# ----------------------------------------------------------- (c) a fixed seed
def test_self_seeded_mechanism_is_refused_not_reported_as_a_violation() -> None:
    # Before: "violation: ε ≥ 6.46 > claimed 1" (the two inputs got identical noise).
    for seed in range(3):
        with pytest.raises(MechanismError, match="fixed seed") as info:
            assert_no_violation(self_seeded_laplace, CLAIM, seed=seed, **QUICK)
        assert not isinstance(info.value, PrivacyViolationError)
        assert "self_seeded_laplace" in str(info.value)
    mech = as_mechanism(self_seeded_laplace, CLAIM)
    with pytest.raises(MechanismError, match="fixed seed"):
        audit(mech, AuditConfig(samples=1000, final_samples=1000))


def test_deterministic_mechanism_is_audited_not_refused() -> None:
    mech = as_mechanism(constant_output, CLAIM)
    assert check_randomness(mech).kind == "deterministic"
    with pytest.raises(PrivacyViolationError):  # outputs x: ε = ∞, found
        assert_no_violation(mech, samples=2000)


# ---------------------------------------------------------- (b) global state
@pytest.mark.parametrize("fn", [global_numpy_laplace, global_python_laplace])
def test_global_rng_mechanism_is_seeded_per_unit_and_reproducible(fn) -> None:
    mech = as_mechanism(fn, CLAIM)
    assert check_randomness(mech).kind == "seeded"
    samples = 4000 if fn is global_python_laplace else 20_000
    first = assert_no_violation(fn, CLAIM, samples=samples)
    again = assert_no_violation(fn, CLAIM, samples=samples)
    assert first.reproducible and first.epsilon_lower_bound == again.epsilon_lower_bound
    assert first.witness == again.witness


def test_global_rng_results_are_bit_identical_for_any_worker_count() -> None:
    mech = as_mechanism(global_numpy_laplace, CLAIM)
    cfg = AuditConfig(samples=20_000, final_samples=40_000, train_samples=5000, seed=3)
    one = audit(mech, cfg, ExecutionConfig(workers=1))
    two = audit(mech, cfg, ExecutionConfig(workers=2))
    assert one.epsilon_lower_bound == two.epsilon_lower_bound
    assert one.witness == two.witness


def test_broken_global_rng_mechanism_is_caught() -> None:
    with pytest.raises(PrivacyViolationError) as info:
        assert_no_violation(global_numpy_broken, CLAIM, **QUICK)
    assert info.value.result.epsilon_lower_bound > EPS


def test_the_callers_global_generators_are_left_as_they_were() -> None:
    np.random.seed(7)
    random.seed(7)
    before_np, before_py = np.random.get_state(), random.getstate()
    mech = as_mechanism(global_numpy_laplace, CLAIM)
    checked_sample(mech, np.zeros(1), 100, np.random.default_rng(0))
    after_np = np.random.get_state()
    assert np.array_equal(before_np[1], after_np[1]) and before_np[2] == after_np[2]
    assert random.getstate() == before_py


def test_builtin_mechanisms_never_touch_the_global_generators() -> None:
    # Why guard.own_code may skip seeding them: sampling leaves both global states as they were.
    from dpaudit.auditors.core.guard import own_code
    from dpaudit.mechanisms import mechanism_names

    for name in mechanism_names("vector"):
        try:
            mech = make_mechanism(name, epsilon=1.0)
        except Exception:  # needs parameters or an optional library: not a plain built-in
            continue
        if not own_code(mech):
            continue
        x = np.full(
            mech.input_shape, mech.input_domain.low if np.isfinite(mech.input_domain.low) else 0.0
        )
        np.random.seed(11)
        random.seed(11)
        before_np, before_py = np.random.get_state(), random.getstate()
        mech.sample(x, 64, np.random.default_rng(0))
        after_np = np.random.get_state()
        assert np.array_equal(before_np[1], after_np[1]) and before_np[2] == after_np[2], name
        assert random.getstate() == before_py, name


def test_same_unit_stream_gives_same_global_draws_different_streams_differ() -> None:
    mech = as_mechanism(global_numpy_laplace, CLAIM)
    x = np.zeros(1)
    a = checked_sample(mech, x, 50, np.random.default_rng(1))
    b = checked_sample(mech, x, 50, np.random.default_rng(1))
    c = checked_sample(mech, x, 50, np.random.default_rng(2))
    assert np.array_equal(a, b) and not np.array_equal(a, c)


@pytest.mark.parametrize("fn", [global_numpy_laplace, global_python_laplace])
def test_consecutive_blocks_of_one_unit_stream_differ(fn) -> None:
    # A unit samples block after block from one generator; a mechanism that ignores it
    # must not get the same global seed for every block (identical blocks would make
    # n samples worth one block and the Clopper–Pearson bounds far too narrow).
    mech, x, rng = as_mechanism(fn, CLAIM), np.zeros(1), np.random.default_rng(1)
    first, second = checked_sample(mech, x, 50, rng), checked_sample(mech, x, 50, rng)
    assert not np.array_equal(first, second)
    again = np.random.default_rng(1)
    assert np.array_equal(checked_sample(mech, x, 50, again), first)  # still reproducible
    assert np.array_equal(checked_sample(mech, x, 50, again), second)


# ---------------------------------------------------------- (c) unseedable
def test_unseedable_mechanism_runs_with_a_reproducibility_warning() -> None:
    result = assert_no_violation(os_entropy_laplace, CLAIM, **QUICK)
    assert result.reproducible is False
    assert any("not reproducible" in note for note in result.notes)
    mech = make_mechanism("laplace", epsilon=1.0)
    assert audit(mech, AuditConfig(samples=5000, final_samples=5000)).reproducible


# ------------------------------------------------------- declarations checked
@dataclasses.dataclass(frozen=True)
class LeakyLaplace(LaplaceMechanism):
    """Declares the Laplace density; its sampler sends mass 3e-4 far left on input 0."""

    def _sample(self, x, n, rng):
        out = super()._sample(x, n, rng)
        if x[0] == 0.0:
            out[rng.random(n) < 3e-4, 0] = -1000.0
        return out


@dataclasses.dataclass(frozen=True)
class UnscaledLaplace(LaplaceMechanism):
    """Right transform (scale n/ε), wrong sampler: Lap(1/ε) per coordinate (DPText's bug class)."""

    def _sample(self, x, n, rng):
        return x + rng.laplace(0.0, 1.0 / self.epsilon, size=(n, self.dim))


def test_correct_declarations_pass_their_checks() -> None:
    for eps in (0.1, 1.0, 5.0):
        assert check_log_prob(make_mechanism("laplace", epsilon=eps)) is None
    assert check_log_prob(make_mechanism("gaussian", epsilon=1.0, delta=1e-5)) is None
    for name in ("laplace", "identity", "dptext"):
        assert check_transform(make_mechanism(name, epsilon=1.0, dim=8)) is None


def test_a_leaking_sampler_contradicts_its_declared_density() -> None:
    # At 2^19 rows the leak puts ~150 outputs of M(0) in a far-left set where M(1) puts
    # none, while the declaration bounds the ratio by e^1; the check flags a correct
    # declaration with probability ≤ α = 1e-3 (exact Clopper–Pearson, Bonferroni).
    finding = check_log_prob(LeakyLaplace(epsilon=1.0))
    assert finding is not None and finding.declaration == "log_prob"
    assert "declared density does not match the samples" in finding.summary
    result = audit(LeakyLaplace(epsilon=1.0), AuditConfig(samples=5000, final_samples=5000))
    assert [f.declaration for f in result.declaration_findings] == ["log_prob"]
    assert make_mechanism("laplace", epsilon=1.0).has_log_prob
    clean = audit(make_mechanism("laplace", epsilon=1.0), AuditConfig(samples=5000))
    assert clean.declaration_findings == ()


@dataclasses.dataclass(frozen=True)
class WideLaplace(LaplaceMechanism):
    """Declares Lap(b); samples Lap(1.2·b): more private than declared, but not as declared."""

    def _sample(self, x, n, rng):
        return x + rng.laplace(0.0, 1.2 * self.scale, size=(n, self.dim))


@pytest.mark.parametrize("eps", [0.1, 5.0])
def test_a_sampler_wider_than_its_declared_density_is_flagged(eps: float) -> None:
    finding = check_log_prob(WideLaplace(epsilon=eps))
    assert finding is not None and "ln p(y|x) − ln p(y|x') ≥" in finding.evidence


def test_sanity_check_default_path_flags_a_sampler_that_contradicts_its_transform() -> None:
    mech = UnscaledLaplace(epsilon=1.0, dim=8)
    result = sanity_check(mech, 200_000)
    assert result.detail.path == "generic"  # the declared transform was not trusted
    assert [f.declaration for f in result.declaration_findings] == ["noise_from_uniform"]
    assert result.violation  # true ε = 8 for n = 8; the real sampler is what ran
    correct = sanity_check(make_mechanism("laplace", epsilon=1.0, dim=8), 200_000)
    assert (
        correct.detail.path == "fused"
        and correct.declaration_findings == ()
        and not correct.violation
    )


@pytest.mark.parametrize(
    ("name", "params"), [("laplace", {}), ("gaussian", {"delta": 1e-5}), ("adept-acl22", {})]
)
def test_builtin_sampler_runs_its_declared_transform(name: str, params: dict) -> None:
    mech = make_mechanism(name, epsilon=1.0, dim=3, **params)
    x = np.full(3, 0.25)
    sampled = mech.sample(x, 1000, np.random.default_rng(5))
    noise = mech.noise_from_uniform(open_uniform(np.random.default_rng(5), (1000, 3)))
    fused = mech.round_output(noise + x)
    assert np.array_equal(sampled, fused)


# --------------------------------------------------------- command line, resume
USER_MODULE = textwrap.dedent(
    """
    import numpy as np
    from dpaudit import round_to_grid

    def self_seeded(x, n, rng):
        return x + np.random.default_rng(12345).laplace(0.0, 1.0, size=(n, x.size))

    def global_laplace(x, n, rng):
        return round_to_grid(x + np.random.laplace(0.0, 1.0, size=(n, x.size)), 1.0)
    """
)


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    name = f"dpa_foreign_{abs(hash(str(tmp_path))) % 10**8}"
    (tmp_path / f"{name}.py").write_text(USER_MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path / f"{name}.py"


AUDIT = [
    "audit",
    "--epsilon",
    "1",
    "--samples",
    "4000",
    "--final-samples",
    "4000",
    "--workers",
    "1",
    "--domain",
    "0,1",
]


def test_cli_refuses_a_fixed_seed_with_exit_2(capsys, user_module: Path) -> None:
    code, out, err = run_cli_quiet(capsys, *AUDIT, f"{user_module.stem}:self_seeded")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "fixed seed" in err


def test_cli_audits_a_global_rng_mechanism(capsys, user_module: Path) -> None:
    target = f"{user_module.stem}:global_laplace"
    code, out, err = run_cli_quiet(capsys, *AUDIT, target, "--json")
    assert code == 0, err
    assert '"reproducible": true' in out and '"violation": false' in out


def test_resume_after_a_code_change_is_refused(capsys, user_module: Path, tmp_path: Path) -> None:
    target = f"{user_module.stem}:global_laplace"
    out_dir = tmp_path / "run"
    code, _, err = run_cli_quiet(capsys, *AUDIT, target, "--out", str(out_dir))
    assert code == 0, err
    code, _, err = run_cli_quiet(capsys, *AUDIT, target, "--out", str(out_dir), "--resume")
    assert code == 0, err  # same code: resumes
    user_module.write_text(USER_MODULE.replace("1.0, size", "0.5, size"))
    code, out, err = run_cli_quiet(capsys, *AUDIT, target, "--out", str(out_dir), "--resume")
    assert code == 2 and out == ""
    assert "different mechanism code/dpaudit version" in err and "callable_module_sha256" in err
    assert len(err.strip().splitlines()) == 1
