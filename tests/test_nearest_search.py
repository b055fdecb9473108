"""The certified nearest-word search: exact against a float64 brute force, with either screen.

"Exact" is the search's own definition: the ``k`` smallest float64 distances
from the float32 point, ties to the lower word index.  The brute force below
computes every distance in float64 and sorts stably, so any word the screen
wrongly discards, or any near-tie it orders by its own rounding, fails a test.
"""

from __future__ import annotations

import multiprocessing
import sys
import warnings

import numpy as np
import pytest

from dpaudit.analysis import bfloat16_screen
from dpaudit.analysis.bfloat16_screen import (
    SCREEN_ENV,
    BFloat16Screen,
    bfloat16_wanted,
    checked_bfloat16_screen,
)
from dpaudit.analysis.nearest_search import Float32Screen
from dpaudit.analysis.word_embedding import WordEmbedding
from dpaudit.errors import InvalidArgumentError

try:
    import torch  # noqa: F401

    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False
needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch (extra 'fast') not installed")


def embedding(v: int, d: int, seed: int) -> WordEmbedding:
    rng = np.random.default_rng(seed)
    # Uneven norms (a few long vectors) as in real embeddings: the bounds must hold for all.
    m = rng.normal(size=(v, d)) * rng.gamma(4.0, 0.25, size=(v, 1))
    return WordEmbedding(tuple(f"w{i}" for i in range(v)), m)


def brute_force(emb: WordEmbedding, pts: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(pts, dtype=np.float32).astype(np.float64)
    m = emb.matrix.astype(np.float64)
    out_i, out_d = [], []
    for s in range(0, len(p), 200):
        diff = p[s : s + 200, None, :] - m[None, :, :]
        dist = np.einsum("ijk,ijk->ij", diff, diff)
        idx = np.argsort(dist, axis=1, kind="stable")[:, :k]
        out_i.append(idx)
        out_d.append(np.sqrt(np.take_along_axis(dist, idx, axis=1)))
    return np.vstack(out_i), np.vstack(out_d)


def points_around(emb: WordEmbedding, n: int, seed: int) -> np.ndarray:
    """Points at a word, near it, between words and far from all (scales 0 … 30)."""
    rng = np.random.default_rng(seed)
    base = emb.matrix[rng.integers(0, emb.size, size=n)].astype(np.float64)
    scale = rng.choice([0.0, 0.01, 0.3, 1.0, 3.0, 30.0], size=(n, 1))
    return base + scale * rng.normal(size=base.shape)


def near_ties(n: int, d: int, seed: int) -> tuple[WordEmbedding, np.ndarray, np.ndarray]:
    """Pairs of words whose distances to a point differ by ≈ 1e-6, far below float32's grain.

    Pairs sit 10 from the origin in random directions (≈ 14 apart), each point
    3 from its pair.  Word ``b`` is word ``a`` moved by 1e-4 at right angles to
    ``p − a``; after rounding to float32, ``|D_b − D_a| ≈ 1e-6``, while the
    scores ``‖e‖² − 2p·e ≈ 200`` have a float32 grain of ≈ 1.5e-5: float32
    cannot tell the two apart, float64 can.  The truly nearer word has the
    higher index in half of the pairs, so ranking by float32 scores is often
    wrong.  Returns the embedding, one point per pair, and each pair's nearer word.
    """
    rng = np.random.default_rng(seed)
    words, pts, nearer = [], [], []
    for i in range(n):
        a = rng.normal(size=d)
        a = (10.0 * a / np.linalg.norm(a)).astype(np.float32)
        step = rng.normal(size=d)
        p = (a + 3.0 * step / np.linalg.norm(step)).astype(np.float32)
        u = rng.normal(size=d)
        w = (p - a).astype(np.float64)
        u -= (u @ w) / (w @ w) * w
        b = (a + 1e-4 * u / np.linalg.norm(u)).astype(np.float32)
        da = np.sum((a.astype(np.float64) - p.astype(np.float64)) ** 2)
        db = np.sum((b.astype(np.float64) - p.astype(np.float64)) ** 2)
        first, second = (a, b) if da <= db else (b, a)  # ``first`` is truly nearer in float64
        if i % 2:
            words += [second, first]
            nearer.append(2 * i + 1)
        else:
            words += [first, second]
            nearer.append(2 * i)
        pts.append(p)
    emb = WordEmbedding(tuple(f"w{i}" for i in range(2 * n)), np.array(words))
    return emb, np.array(pts), np.array(nearer)


@pytest.mark.parametrize(
    ("v", "d", "k"),
    [
        # The largest vocabulary with k = 2 and 3 is slow: full suite only (k = 1 stays quick).
        pytest.param(v, d, k, marks=[pytest.mark.slow] * (v == 3000 and k > 1))
        for v, d in [(7, 3), (500, 6), (3000, 50)]
        for k in (1, 2, 3)
    ],
)
def test_float32_search_equals_the_float64_brute_force(
    v: int, d: int, k: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SCREEN_ENV, "float32")
    emb = embedding(v, d, seed=v + d)
    pts = points_around(emb, 1500, seed=k)
    got_i, got_d = emb.nearest(pts, k=k)
    want_i, want_d = brute_force(emb, pts, k)
    np.testing.assert_array_equal(got_i, want_i)
    np.testing.assert_allclose(got_d, want_d, rtol=1e-12)
    centre = 3 % v
    local = emb.matrix[centre].astype(np.float64) + 0.3 * np.random.default_rng(5).normal(
        size=(1500, d)
    )
    np.testing.assert_array_equal(
        emb.nearest_from(centre, local, k=k)[0], brute_force(emb, local, k)[0]
    )


@pytest.mark.parametrize("screen", ["float32", pytest.param("bfloat16", marks=needs_torch)])
def test_near_ties_are_ranked_in_float64_not_by_the_screen(
    screen: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SCREEN_ENV, screen)
    emb, pts, nearer = near_ties(300, 20, seed=1)
    got, _ = emb.nearest(pts, k=1)
    np.testing.assert_array_equal(got[:, 0], nearer)
    np.testing.assert_array_equal(got, brute_force(emb, pts, 1)[0])
    # The test has teeth: ranking by float32 scores gets some of these wrong.
    aug = np.hstack([pts.astype(np.float32), np.ones((len(pts), 1), np.float32)])
    by_float32 = np.argmin(aug @ emb._float32_screen.augmented, axis=1)
    assert np.sum(by_float32 != nearer) > 10


def test_exact_ties_go_to_the_lower_index() -> None:
    # Words at ±e_j: the origin is at distance exactly 1 from all of them.
    d = 5
    m = np.vstack([np.eye(d), -np.eye(d), 3.0 * np.ones((1, d))])
    emb = WordEmbedding(tuple(f"w{i}" for i in range(len(m))), m)
    idx, dist = emb.nearest(np.zeros((4, d)), k=3)
    np.testing.assert_array_equal(idx, [[0, 1, 2]] * 4)
    np.testing.assert_array_equal(dist, 1.0)


def test_float32_bound_covers_the_products_rounding() -> None:
    """|fl32 score − exact score| ≤ B_p for every word and point, incl. far points."""
    emb = embedding(2000, 50, seed=3)
    screen = Float32Screen.build(emb.matrix)
    pts = points_around(emb, 400, seed=4).astype(np.float32)
    aug = np.hstack([pts, np.ones((len(pts), 1), np.float32)])
    got = (aug @ screen.augmented).astype(np.float64)
    m = emb.matrix.astype(np.float64)
    exact = np.einsum("ij,ij->i", m, m)[None, :] - 2.0 * pts.astype(np.float64) @ m.T
    err = np.abs(got - exact)
    bound = screen.bound(pts)[:, None]
    assert np.all(err <= bound)
    assert err.max() > bound.max() * 1e-3  # the bound is not vacuous by orders of magnitude


def test_non_finite_points_are_refused() -> None:
    emb = embedding(50, 4, seed=0)
    with pytest.raises(InvalidArgumentError, match="points"):
        emb.nearest(np.array([[0.0, np.nan, 0.0, 0.0]]))


def test_the_screen_choice_is_validated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SCREEN_ENV, "fp8")
    with pytest.raises(InvalidArgumentError, match=SCREEN_ENV):
        bfloat16_wanted(20_000, 1)
    monkeypatch.setenv(SCREEN_ENV, "float32")
    assert not bfloat16_wanted(20_000, 1)
    monkeypatch.setenv(SCREEN_ENV, "bfloat16")
    assert not bfloat16_wanted(20_000, bfloat16_screen.BF16_MAX_K + 1)

    def no_torch() -> None:
        raise ImportError("torch")

    monkeypatch.setattr(bfloat16_screen, "_torch", no_torch)
    with pytest.raises(InvalidArgumentError, match="fast"):
        bfloat16_wanted(20_000, 1)
    monkeypatch.setenv(SCREEN_ENV, "auto")
    bfloat16_screen.bfloat16_hardware.cache_clear()
    try:
        assert not bfloat16_wanted(20_000, 1)  # auto without PyTorch: float32, no error
    finally:
        bfloat16_screen.bfloat16_hardware.cache_clear()


@needs_torch
@pytest.mark.parametrize("k", [1, 2, 5])
@pytest.mark.parametrize(("v", "d"), [(300, 6), (1100, 50)])
def test_bfloat16_search_equals_the_float64_brute_force(v: int, d: int, k: int) -> None:
    """1 100 words: 16 interleaved groups and padding columns are used (300: one group)."""
    emb = embedding(v, d, seed=v + k)
    screen = BFloat16Screen.build(emb.matrix)
    assert screen.groups == (16 if v >= 1024 else 1)
    assert screen.self_check()
    pts = points_around(emb, 1200, seed=k).astype(np.float32)
    got_i, got_d = [], []
    for s in range(0, len(pts), 256):
        i, dd = screen.search(pts[s : s + 256], k)
        got_i.append(i)
        got_d.append(dd)
    want_i, want_d = brute_force(emb, pts, k)
    np.testing.assert_array_equal(np.vstack(got_i), want_i)
    np.testing.assert_allclose(np.vstack(got_d), want_d, rtol=1e-12)


@needs_torch
def test_both_screens_give_the_same_words_and_distances(monkeypatch: pytest.MonkeyPatch) -> None:
    emb = embedding(5000, 50, seed=11)
    pts = points_around(emb, 2000, seed=12)
    results = {}
    for screen in ("float32", "bfloat16"):
        monkeypatch.setenv(SCREEN_ENV, screen)
        results[screen] = (emb.nearest(pts, k=2), emb.nearest_from(7, pts, k=1))
    (a2, da2), (a1, da1) = results["float32"]
    (b2, db2), (b1, db1) = results["bfloat16"]
    np.testing.assert_array_equal(a2, b2)
    np.testing.assert_array_equal(da2, db2)
    np.testing.assert_array_equal(a1, b1)
    np.testing.assert_array_equal(da1, db1)


@needs_torch
def test_a_bfloat16_product_outside_its_bound_disables_the_screen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A library whose bfloat16 product is less accurate than assumed is not trusted."""
    emb = embedding(600, 8, seed=2)
    real = BFloat16Screen._scores

    def sloppy(self: BFloat16Screen, torch_mod: object, qb: object) -> object:
        out = real(self, torch_mod, qb)
        out[:, ::7] -= 0.5 * out[:, ::7].abs() + 1.0  # errors far above the stated bound
        return out

    def sloppy_single_rows(self: BFloat16Screen, torch_mod: object, qb: object) -> object:
        out = real(self, torch_mod, qb)
        if out.shape[0] == 1:  # another kernel for one-row products, say
            out -= 0.5 * out.abs() + 1.0
        return out

    assert BFloat16Screen.build(emb.matrix).self_check()
    monkeypatch.setattr(BFloat16Screen, "_scores", sloppy_single_rows)
    assert not BFloat16Screen.build(emb.matrix).self_check()
    monkeypatch.setattr(BFloat16Screen, "_scores", sloppy)
    assert not BFloat16Screen.build(emb.matrix).self_check()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert checked_bfloat16_screen(emb.matrix) is None
    assert any("bfloat16" in str(w.message) for w in caught)


def _search_in_child(args: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    matrix, pts = args
    return BFloat16Screen.build(matrix).search(pts, 1)[0]


@needs_torch
@pytest.mark.skipif(sys.platform == "darwin", reason="the audit does not fork on macOS")
def test_forked_workers_after_a_bfloat16_search_do_not_hang() -> None:
    """GNU OpenMP hangs a child forked after its thread pool started; the screen runs one thread."""
    emb = embedding(2000, 16, seed=6)
    pts = points_around(emb, 300, seed=7).astype(np.float32)
    parent = BFloat16Screen.build(emb.matrix).search(pts, 1)[0]
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2) as pool:
        result = pool.map_async(_search_in_child, [(emb.matrix, pts)] * 2)
        children = result.get(timeout=120)
    for child in children:
        np.testing.assert_array_equal(child, parent)
