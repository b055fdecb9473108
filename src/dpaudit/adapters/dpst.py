"""DP-ST (``dpst`` 0.3.9): what of it can run on a CPU-only offline machine, and its one
separable DP step, audited.

Paper: Meisenbacher, Chevli & Matthes, "Leveraging Semantic Triples for Private Document
Generation with Local Differential Privacy Guarantees", EMNLP 2025.  ``DPST.privatize``
(``dpst/core.py``): OpenIE triples of the document; each triple embedded (jina-v3),
assigned its nearest cluster centroid, and replaced by the **exponential mechanism**
(``DPST.exponential``: ``p ∝ exp(ε' u / 2)``, ``u = max(1 − cosine distance, 0) ∈ [0, 1]``,
sensitivity 1, ``np.random.choice`` on numpy's global generator) over *every* public
triple of that cluster (Weaviate ``near_vector``); ``ε' = ε / #triples``, so a document
is claimed ``ε``-LDP.  An LLM then writes text from the chosen triples (vLLM, greedy).

Why the package cannot run here (read from ``dpst/core.py`` 0.3.9):

* ``import dpst`` imports at module level ``weaviate`` (l. 28), ``openie.StanfordOpenIE``
  (l. 33, a Java CoreNLP server it downloads and starts), ``vllm`` (l. 35) and
  ``sentence_transformers``; it pins ``torch==2.10.0+cu128``, ``vllm==0.17.1``,
  ``flash-attn``, ``xformers``: CUDA builds, not installable on a CPU-only machine;
* ``DPST.__init__`` needs ``dpst/data/{mode}.json`` (not in the wheel; written by
  ``dpst setup``), ``weaviate.connect_to_local()`` (l. 77, a running Weaviate with the
  ``Triples`` collection), the CoreNLP server (l. 95), ``jinaai/jina-embeddings-v3`` and
  ``gpt2`` from the Hub (l. 120, 142) and a vLLM engine (l. 131, bfloat16, GPU memory);
* ``privatize`` calls CoreNLP (``get_triples_ie``), Weaviate (``query_db``) and vLLM.

What is run: ``DPST.exponential`` alone, compiled from the installed ``dpst/core.py``
(the function's own source, found with :mod:`ast`; nothing else of the file executes),
with numpy as its only global.  Its candidates and scores come from this module: a
public candidate set per cluster and a character-trigram cosine standing in for jina-v3
+ Weaviate, the cluster chosen, as ``privatize`` does, by the private triple's nearest
centroid.  The audit is black box, on the chosen triple.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dpaudit.adapters._support import library_available, seeded_global_random
from dpaudit.claims import TextClaim
from dpaudit.errors import InvalidArgumentError, MechanismError, OptionalDependencyError

SOURCE = "Meisenbacher et al., DP-ST, EMNLP 2025; dpst 0.3.9 DPST.exponential"
#: Services ``DPST`` needs, each with the call of ``dpst/core.py`` that needs it.
SERVICES = (
    "vLLM engine (LLM(...), l. 131; CUDA build pinned: torch==2.10.0+cu128, vllm==0.17.1)",
    "Weaviate at localhost with collection 'Triples' (weaviate.connect_to_local(), l. 77)",
    "Stanford CoreNLP OpenIE Java server (StanfordOpenIE(...), l. 95)",
    "Hub downloads jinaai/jina-embeddings-v3 (l. 120) and gpt2 (l. 142)",
    "cluster files dpst/data/{mode}.json written by `dpst setup` (l. 64-70)",
)
#: Two public clusters of triples (subject | property | object), with their centroids' text.
CLUSTERS: dict[str, tuple[str, ...]] = {
    "people": (
        "Alice | lives in | Paris",
        "Bob | works at | a bakery",
        "Carol | was born in | 1970",
        "Dan | is married to | Eve",
    ),
    "films": (
        "the film | was directed by | a newcomer",
        "the film | won | an award",
        "the sequel | was released in | 2001",
        "the film | runs for | two hours",
    ),
}
CENTROIDS = {"people": "person lives works born married", "films": "film directed award released"}


class DpstUnavailableError(OptionalDependencyError):
    """``dpst`` cannot be imported or run here; the message names the services it needs."""

    def __init__(self, reason: str) -> None:
        ImportError.__init__(
            self,
            f"dpst's DPST cannot run here ({reason}); it needs: " + "; ".join(SERVICES),
        )


def import_dpst_runtime() -> Any:
    """``dpst.DPST`` itself, or :class:`DpstUnavailableError` saying which service is missing."""
    missing = [m for m in ("vllm", "weaviate", "openie", "datasketch") if not library_available(m)]
    if missing:
        raise DpstUnavailableError(f"not importable: {', '.join(missing)}")
    try:
        module = importlib.import_module("dpst")
    except Exception as exc:  # a broken CUDA stack fails in many ways
        raise DpstUnavailableError(f"import dpst.core raised {type(exc).__name__}: {exc}") from exc
    return module.DPST


def package_exponential() -> Callable[..., Any]:
    """``DPST.exponential`` compiled alone from the installed ``dpst/core.py``.

    Raises:
        OptionalDependencyError: dpst is not installed (``pip install --no-deps dpst``).
    """
    spec = importlib.util.find_spec("dpst")
    if spec is None or not spec.submodule_search_locations:
        raise OptionalDependencyError("dpst", "text-packages", "the DP-ST adapter")
    path = Path(next(iter(spec.submodule_search_locations))) / "core.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = [
        node
        for cls in tree.body
        if isinstance(cls, ast.ClassDef) and cls.name == "DPST"
        for node in cls.body
        if isinstance(node, ast.FunctionDef) and node.name == "exponential"
    ]
    if len(found) != 1:
        raise MechanismError(f"{path}: no single DPST.exponential to audit")
    namespace: dict[str, Any] = {"np": np}
    exec(compile(ast.Module(body=found, type_ignores=[]), str(path), "exec"), namespace)
    return namespace["exponential"]


def _trigrams(text: str) -> dict[str, int]:
    padded = f"  {text.lower()} "
    counts: dict[str, int] = {}
    for i in range(len(padded) - 2):
        counts[padded[i : i + 3]] = counts.get(padded[i : i + 3], 0) + 1
    return counts


def similarity(a: str, b: str) -> float:
    """Character-trigram cosine in ``[0, 1]``: the stand-in for ``1 − cosine distance``."""
    u, v = _trigrams(a), _trigrams(b)
    dot = sum(c * v.get(g, 0) for g, c in u.items())
    norm = math.sqrt(sum(c * c for c in u.values()) * sum(c * c for c in v.values()))
    return dot / norm if norm else 0.0


@dataclass
class DpstSelection:
    """The package's exponential mechanism on one private triple, as ``f(text, n, rng)``.

    Attributes:
        epsilon: ``ε'`` per triple (a one-triple document's ``ε``).
        clusters: the public candidate triples per cluster.
        centroids: each cluster's centroid text; the private triple goes to the nearest.
    """

    epsilon: float = 10.0
    clusters: dict[str, tuple[str, ...]] | None = None
    centroids: dict[str, str] | None = None

    def __post_init__(self) -> None:
        if not (self.epsilon > 0 and math.isfinite(self.epsilon)):
            raise InvalidArgumentError("epsilon", self.epsilon, "a finite ε > 0")
        self._exponential = package_exponential()

    @property
    def claim(self) -> TextClaim:
        """``ε`` per document of one triple (``ε' = ε / #triples`` with one triple)."""
        return TextClaim(self.epsilon, unit="document", source=SOURCE)

    def candidates(self, triple: str) -> list[tuple[str, float]]:
        """The nearest cluster's triples with their scores, as ``query_db`` returns them."""
        clusters = self.clusters or CLUSTERS
        centroids = self.centroids or CENTROIDS
        nearest = max(centroids, key=lambda c: similarity(triple, centroids[c]))
        return [(t, max(similarity(triple, t), 0.0)) for t in clusters[nearest]]

    def __call__(self, text: str, n: int, rng: np.random.Generator) -> list[str]:
        """``n`` draws of ``DPST.exponential(candidates(text), ε)`` (numpy's global, seeded)."""
        if not isinstance(text, str):
            raise InvalidArgumentError("text", type(text).__name__, "a str")
        found: Sequence[tuple[str, float]] = self.candidates(text)
        with seeded_global_random(rng):
            return [str(self._exponential(None, found, self.epsilon)) for _ in range(n)]
