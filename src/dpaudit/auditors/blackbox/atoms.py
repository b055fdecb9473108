"""Point masses ("atoms") in output columns, found from training samples and encoded as flags.

Mechanisms mix discrete symbols into numeric outputs: SVT releases ``-1`` for
"aborted" among ``0``/``1`` answers, or a noisy value when a query is above the
threshold and ``-1000.0``/``-2000.0`` for below/aborted; numerical SVT
releases ``0.0`` for below.  A linear score reads such a symbol as a number
(−1000 is "very small"), which is meaningless.  DP-Sniper (Bichsel et al., S&P
2021, §6) has the user declare these values and encodes each as a 0/1 flag
column, the value itself replaced by 0.  We find them without help: a value
that carries at least :data:`ATOM_SHARE` of a column's training outputs is an
atom (continuous noise repeats an exact float with probability ~0), and every
column holding an atom and more than two distinct values gets one flag per atom
(at most :data:`MAX_ATOMS`, the heaviest).  A column of two values is left as
it is: a linear score already weighs it freely.

The atoms are chosen on training outputs only and frozen into the score, so
they are part of the attack and cost the final bound nothing.  Imports nothing
above ``auditors/``.
"""

from __future__ import annotations

import numpy as np

#: Least share of a column's training outputs at one exact value for it to count as an atom.
ATOM_SHARE = 0.005
#: Most atoms flagged per column (the heaviest).
MAX_ATOMS = 8

#: Frozen atoms: ``((column, (value, ...)), ...)``.
Atoms = tuple[tuple[int, tuple[float, ...]], ...]


def find_atoms(X: np.ndarray, weights: np.ndarray) -> Atoms:
    """The atoms of every column of the feature matrix ``X`` (row multiplicities ``weights``)."""
    total = float(weights.sum())
    out = []
    for j in range(X.shape[1]):
        values, inverse = np.unique(X[:, j], return_inverse=True)
        if len(values) <= 2:
            continue
        mass = np.bincount(inverse.ravel(), weights=weights, minlength=len(values))
        heavy = np.nonzero(mass >= ATOM_SHARE * total)[0]
        if len(heavy) == 0:
            continue
        heavy = heavy[np.argsort(-mass[heavy], kind="stable")][:MAX_ATOMS]
        out.append((j, tuple(float(v) for v in np.sort(values[heavy]))))
    return tuple(out)


def encode_atoms(X: np.ndarray, atoms: Atoms) -> np.ndarray:
    """``X`` with one 0/1 flag column per atom appended and the atom values set to 0 (float32)."""
    if not atoms:
        return X
    X = np.array(X, dtype=np.float32, copy=True)
    flags = []
    for j, values in atoms:
        col = X[:, j]
        hit_any = np.zeros(len(X), dtype=bool)
        for v in values:
            hit = col == np.float32(v)
            flags.append(hit.astype(np.float32))
            hit_any |= hit
        col[hit_any] = 0.0
    return np.concatenate([X, np.stack(flags, axis=1)], axis=1)
