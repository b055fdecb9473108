"""One PyTorch thread for the tiny-model tests.

Their forward passes take microseconds of arithmetic; with PyTorch's default of
one OpenMP thread per core they spend up to 20× longer waiting for each other
whenever the machine's other core is busy (measured: 13.7 s against 0.64 s for
the same audit on this 2-core machine under load).
"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
