"""The reproducible figures by name, in the order ``reproduce all`` runs them.

Each figure lives in its own module, which defines ``FIGURE``: a
:class:`FigureSpec` bundling how to compute it, draw it and describe it.
Modules are imported on first use so that listing figures stays cheap.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dpaudit.errors import UnknownNameError
from dpaudit.reproduce.common import FigureResult, FigureRun

#: Figure name → module in :mod:`dpaudit.reproduce` (or a full dotted module
#: path), in the order ``all`` runs them.
FIGURE_MODULES: dict[str, str] = {
    "habernal2021-fig1": "habernal2021_fig1",
    "habernal2022-fig2": "habernal2022_fig2",
    "hoho-fig1": "hoho_fig1",
    "hoho-fig2": "hoho_fig2",
    "mldp-lrec2024": "mldp_lrec2024",
    "lm-rewriters": "lm_rewriters",
    "whole-claims": "whole_claims",
    "dp-training": "dp_training",
}

#: The pseudo-figure that runs every figure.
ALL = "all"


#: ``compute(run) -> FigureResult``: the figure's computation for one :class:`FigureRun`.
ComputeFn = Callable[[FigureRun], FigureResult]


@dataclass(frozen=True)
class FigureSpec:
    """How to compute, draw and describe one figure.

    ``expected_seconds`` (per scale, work seconds on 2 idle cores; the ``quick`` ones are
    ``benchmarks/results/main_job.json``'s, measured 2026-12-01) weights the overall
    progress bar so its ETA spans every figure and tells a figure that falls behind; it
    never affects results.
    ``uses_data`` marks figures that read a text corpus (``--data``).
    """

    name: str
    title: str
    paper: str
    compute: ComputeFn
    plot: Callable[[FigureResult, Path], None]
    readme: Callable[[FigureResult], str]
    expected_seconds: Mapping[str, float] = field(default_factory=dict)
    uses_data: bool = False


def figure_names() -> list[str]:
    """Every figure name, in run order (without ``all``)."""
    return list(FIGURE_MODULES)


def resolve_figures(name: str) -> list[str]:
    """The figures ``name`` stands for: itself, or every figure for ``all``."""
    if name == ALL:
        return figure_names()
    if name not in FIGURE_MODULES:
        raise UnknownNameError("figure", name, [*FIGURE_MODULES, ALL])
    return [name]


def get_figure(name: str) -> FigureSpec:
    """The :class:`FigureSpec` of figure ``name``."""
    if name not in FIGURE_MODULES:
        raise UnknownNameError("figure", name, [*FIGURE_MODULES, ALL])
    module_name = FIGURE_MODULES[name]
    # A dotted name is a full module path (lets tests plug in their own figure).
    if "." not in module_name:
        module_name = f"dpaudit.reproduce.{module_name}"
    module = importlib.import_module(module_name)
    spec: FigureSpec = module.FIGURE
    return spec
