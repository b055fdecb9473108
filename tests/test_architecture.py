"""The layout shows the design: arrows point one way, no cycles, no lazy imports, no god files.

Layers (each may import only what is listed for it, plus the basics)::

    cli, reproduce, testing on top (testing runs api)
    api                          the one audit entry: picks the auditors that support a claim
                                 (and reads text/ for a rewriter's default document)
    report                       renders run directories (basics only)
    auditors → engine, mechanisms, analysis
               auditors/core certifies; each auditor (auditors/blackbox, auditors/sanity,
               auditors/metric, auditors/sensitivity) imports auditors/core, never another auditor
    attacks  → text, mechanisms, analysis, engine
    adapters → mechanisms, analysis            (adapters sit above mechanisms)
    mechanisms → analysis, text                (mechanisms use the maths; the training
                                               mechanisms featurise their text records)
    engine, analysis, text       basics only
    basics: errors, validation, claims (every claim class lives there), random,
                                 serialization, io, progress, verdicts,
                                 witness, results (the typed audit result: a leaf that
                                 imports only basics), rundir (a run directory's file names
                                 and records, which hold typed results)

Imports are read with :mod:`ast` from the source, so the test fails as soon as
a file breaks a rule, whether or not that code path runs.
"""

from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "dpaudit"

BASICS = frozenset(
    {
        "errors",
        "validation",
        "claims",
        "domains",
        "random",
        "serialization",
        "io",
        "progress",
        "verdicts",
        "witness",
        "rundir",
        "results",
        "__init__",
    }
)
#: What each package may import besides itself and the basics.
ALLOWED: dict[str, frozenset[str]] = {
    "analysis": frozenset(),
    "text": frozenset(),
    "engine": frozenset(),
    "report": frozenset(),
    # text imports only basics, so a trainer's featuriser and bundled corpus form no cycle.
    "mechanisms": frozenset({"analysis", "text"}),
    "adapters": frozenset({"mechanisms", "analysis"}),
    "auditors": frozenset({"engine", "mechanisms", "analysis"}),
    "attacks": frozenset({"text", "mechanisms", "analysis", "engine"}),
    # Privacy tests for CI run the one entry, dpaudit.audit.
    "testing": frozenset({"api", "adapters", "auditors", "engine", "mechanisms", "analysis"}),
    # The one public audit entry: picks the auditors that support a claim, above all of them.
    # (and ``text`` for the default document a rewriter is audited on).
    "api": frozenset({"adapters", "auditors", "engine", "mechanisms", "analysis", "text"}),
    "reproduce": frozenset(
        {"auditors", "attacks", "text", "engine", "mechanisms", "analysis", "adapters", "report"}
    ),
}
#: Basics may import only these other basics (no cycles among them).
BASIC_ALLOWED: dict[str, frozenset[str]] = {
    "errors": frozenset(),
    "validation": frozenset({"errors"}),
    "claims": frozenset({"errors", "validation", "witness", "domains"}),
    "domains": frozenset({"errors"}),
    "random": frozenset({"errors", "validation"}),
    "serialization": frozenset({"errors"}),
    "io": frozenset({"errors"}),
    "progress": frozenset({"errors"}),
    "verdicts": frozenset(),
    "witness": frozenset(),
    # What an audit answers (AuditResult, its kind, declaration findings): a leaf that the run
    # directory, the report and every auditor read, importing only basics itself.
    "results": frozenset({"errors", "serialization", "verdicts", "witness"}),
    # A run directory's file names and its typed results.json records, which hold each
    # audit's typed result (read from results/, never from an auditor).
    "rundir": frozenset({"errors", "serialization", "verdicts", "witness", "results"}),
}
#: Single modules a package may import beyond its rules, with why.  The curve claims
#: (``claims/curves.py``: GDP, Rényi, zCDP, f-DP) answer their one question through the
#: conversions of ``analysis/privacy_conversions.py`` and the Gaussian maths of
#: ``analysis/gaussian.py``; both are leaves importing only basics
#: (test_claims_maths_modules_import_only_basics), so no cycle can form through them.
MODULE_EXCEPTIONS: dict[str, frozenset[str]] = {
    "claims": frozenset({"dpaudit.analysis.privacy_conversions", "dpaudit.analysis.gaussian"}),
}
#: Largest source file, in lines: a file longer than this holds more than one idea.
MAX_LINES = 600


def _source_files() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def _package(path: Path) -> str:
    rel = path.relative_to(SRC).parts
    return rel[0].removesuffix(".py")


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path) -> list[tuple[str, bool]]:
    """``(imported dpaudit module, at module level?)`` for every import outside TYPE_CHECKING."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, top: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child, top)
            return
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] == "dpaudit":
                for alias in node.names:
                    candidate = f"{node.module}.{alias.name}"
                    found.append((candidate if _is_module(candidate) else node.module, top))
        elif isinstance(node, ast.Import):
            found.extend((a.name, top) for a in node.names if a.name.split(".")[0] == "dpaudit")
        inner = top and not isinstance(
            node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
        )
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    for stmt in tree.body:
        visit(stmt, True)
    return found


def _is_module(name: str) -> bool:
    rel = Path(*name.split(".")[1:])
    return (SRC / rel).with_suffix(".py").is_file() or (SRC / rel / "__init__.py").is_file()


def _target_package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


@pytest.mark.parametrize("path", _source_files(), ids=lambda p: str(p.relative_to(SRC)))
def test_imports_follow_the_layers(path: Path) -> None:
    pkg = _package(path)
    if pkg == "cli" or pkg == "__init__":
        return  # the command line sits on top of everything
    allowed = BASIC_ALLOWED.get(pkg)
    if allowed is None:
        allowed = BASICS | ALLOWED[pkg]
    wrong = sorted(
        {
            module
            for module, _ in _imports(path)
            if (target := _target_package(module)) != pkg
            and target not in allowed
            and module not in MODULE_EXCEPTIONS.get(pkg, frozenset())
            and module != "dpaudit"  # __version__
        }
    )
    assert not wrong, f"{path.relative_to(SRC)} ({pkg}/) may not import {wrong}"


@pytest.mark.parametrize("module", sorted(MODULE_EXCEPTIONS["claims"]))
def test_claims_maths_modules_import_only_basics(module: str) -> None:
    """The two maths modules claims may import are leaves: basics only, and never claims."""
    path = (SRC / Path(*module.split(".")[1:])).with_suffix(".py")
    imported = {_target_package(m) for m, _ in _imports(path)} - {"analysis"}
    within = {m for m, _ in _imports(path) if _target_package(m) == "analysis"}
    assert imported <= BASICS - {"claims"}, f"{module} imports {sorted(imported)}"
    assert within <= MODULE_EXCEPTIONS["claims"], f"{module} imports {sorted(within)}"


#: What makes a class a claim: its name, or the methods of the Claim protocol
#: (``dpaudit.claims.protocol.Claim``).
CLAIM_METHODS = frozenset({"describe", "to_dict", "from_dict", "profile"})
CLAIMS_PACKAGE = SRC / "claims"


def _claim_classes(path: Path) -> list[str]:
    """Classes of ``path`` named ``...Claim`` or defining every method of the Claim protocol."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            methods = {
                item.name
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
            }
            if node.name.endswith("Claim") or methods >= CLAIM_METHODS:
                found.append(node.name)
    return found


@pytest.mark.parametrize("path", _source_files(), ids=lambda p: str(p.relative_to(SRC)))
def test_claims_live_in_one_package(path: Path) -> None:
    """Every claim class is in ``dpaudit/claims/``: one place to read what can be claimed."""
    if CLAIMS_PACKAGE in path.parents:
        return
    found = _claim_classes(path)
    assert not found, f"{path.relative_to(SRC)} defines claim classes {found}: move to claims/"


def test_claim_rule_catches_one(tmp_path: Path) -> None:
    path = tmp_path / "mechanism.py"
    path.write_text(
        "class BudgetClaim:\n    pass\n\n\n"
        "class Curve:\n"
        "    def describe(self): ...\n    def to_dict(self): ...\n"
        "    @classmethod\n    def from_dict(cls, data): ...\n"
        "    def profile(self, epsilons, x=None, x_prime=None): ...\n\n\n"
        "class Report:\n    def describe(self): ...\n    def to_dict(self): ...\n",
        encoding="utf-8",
    )
    assert _claim_classes(path) == ["BudgetClaim", "Curve"]


#: The auditors under ``auditors/``: each may import ``auditors/core`` but no other auditor.
AUDITORS = frozenset(
    {"blackbox", "sanity", "metric", "sensitivity", "profile", "rewriter", "training"}
)


def _audit_part(module_or_path: str | Path) -> str | None:
    """``core``, an auditor's folder, or None for what is not under ``auditors/``."""
    if isinstance(module_or_path, Path):
        parts = module_or_path.relative_to(SRC).parts
    else:
        parts = tuple(module_or_path.split(".")[1:])
    if len(parts) < 2 or parts[0] != "auditors":
        return None
    return parts[1].removesuffix(".py")


@pytest.mark.parametrize(
    "path", sorted(SRC.joinpath("auditors").rglob("*.py")), ids=lambda p: str(p.relative_to(SRC))
)
def test_auditors_import_only_the_core(path: Path) -> None:
    """Propose, then certify: auditors share ``auditors/core`` and nothing else of each other."""
    mine = _audit_part(path)
    wrong = sorted(
        module
        for module, _ in _imports(path)
        if (other := _audit_part(module)) is not None
        and other not in (mine, "__init__")
        and (other != "core" or mine == "core")
    )
    assert mine in AUDITORS | {"core", "__init__"}, f"unexpected folder auditors/{mine}"
    assert not wrong, f"{path.relative_to(SRC)} (auditors/{mine}) may not import {wrong}"


@pytest.mark.parametrize("path", _source_files(), ids=lambda p: str(p.relative_to(SRC)))
def test_no_hidden_lazy_imports(path: Path) -> None:
    """Imports inside functions hide arrows (and loops); only the CLI defers them (start-up)."""
    if _package(path) == "cli":
        return
    lazy = sorted({m for m, top in _imports(path) if not top and m != "dpaudit"})
    assert not lazy, f"{path.relative_to(SRC)} imports {lazy} inside a function"


def test_no_import_cycles_between_modules() -> None:
    graph: dict[str, set[str]] = {}
    for path in _source_files():
        name = _module_name(path)
        graph[name] = {m for m, _ in _imports(path) if m != name}
    # A package __init__ importing its own submodules is not a cycle: the
    # submodule importing the package *is* (it would see it half-initialised).
    state: dict[str, int] = {}
    stack: list[str] = []

    def dfs(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in graph:
                continue
            if state.get(nxt) == 1:
                cycle = [*stack[stack.index(nxt) :], nxt]
                if not all(b.startswith(a + ".") for a, b in itertools.pairwise(cycle)):
                    pytest.fail("import cycle: " + " -> ".join(cycle))
            elif nxt not in state:
                dfs(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            dfs(node)


def test_layer_rules_catch_a_violation(tmp_path: Path) -> None:
    """The checker itself: a mechanism importing the audit layer is found."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from dpaudit.auditors.blackbox.auditor import audit\n\n"
        "def f():\n    import dpaudit.engine\n"
    )
    found = _imports(bad)
    assert ("dpaudit.auditors.blackbox.auditor", True) in found
    assert ("dpaudit.engine", False) in found
    assert (
        _target_package("dpaudit.auditors.blackbox.auditor") not in BASICS | ALLOWED["mechanisms"]
    )


@pytest.mark.parametrize("path", _source_files(), ids=lambda p: str(p.relative_to(SRC)))
def test_no_god_files(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, (
        f"{path.relative_to(SRC)} has {lines} lines (> {MAX_LINES}): split it"
    )


@pytest.mark.parametrize("path", _source_files(), ids=lambda p: str(p.relative_to(SRC)))
def test_every_module_says_what_it_is_for(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert ast.get_docstring(tree), f"{path.relative_to(SRC)} has no module docstring"


#: Longest function or method allowed, in lines (``def`` to its last line, docstring included).
MAX_FUNCTION_LINES = 80


def _long_functions(path: Path) -> list[str]:
    """``name (N lines, line L)`` for each function or method of ``path`` over the limit."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            assert node.end_lineno is not None
            length = node.end_lineno - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                found.append(f"{node.name} ({length} lines, line {node.lineno})")
    return found


def test_no_long_functions() -> None:
    offenders = [
        f"{path.relative_to(SRC)}: {name}"
        for path in _source_files()
        for name in _long_functions(path)
    ]
    assert not offenders, (
        f"functions longer than {MAX_FUNCTION_LINES} lines (split them into well-named "
        "helpers):\n  " + "\n  ".join(offenders)
    )


def test_long_function_rule_catches_one(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    path = tmp_path / "long.py"
    path.write_text(f"def short():\n    return 1\n\n\ndef long():\n{body}\n", encoding="utf-8")
    assert _long_functions(path) == [f"long ({MAX_FUNCTION_LINES + 1} lines, line 5)"]


#: A run directory's file and folder names (``dpaudit.rundir.layout``), and the one place
#: allowed to spell them out.  ``checkpoint`` and ``units`` are common words, so only a
#: string that is exactly one of them (a path part) counts.
LAYOUT_MODULE = SRC / "rundir" / "layout.py"
RUN_FILE_NAMES = ("run-status.json", "report.md", "report.html", "results.json", "results.csv",
                  "figure.png", "figure.svg", "README.md", "config.json", "result.json",
                  "manifest.json", ".npz")  # fmt: skip
RUN_FOLDER_NAMES = ("checkpoint", "units")
#: Files that name another program's file of the same name, with why.
NOT_A_RUN_DIRECTORY = {
    SRC / "text" / "models" / "loading.py": "config.json of a Hugging Face model directory",
    SRC / "claims" / "text.py": "errors name the keyword argument units (units released)",
}


def _string_constants(path: Path) -> list[tuple[int, str]]:
    """``(line, text)`` of every string constant but docstrings and dict keys (f-strings' too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    # A dict key is a field name (the manifest's "units" count), not a path.
    keys = {id(k) for node in ast.walk(tree) if isinstance(node, ast.Dict) for k in node.keys}
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        and id(node) not in docstrings | keys
    ]  # fmt: skip


def _spelled_run_names(path: Path) -> list[str]:
    """Where ``path`` spells out a run directory's file or folder name instead of importing it."""
    found = []
    for line, text in _string_constants(path):
        for name in RUN_FILE_NAMES:
            # A whole name, not part of another one (``acl2022_results.json`` is package data).
            if re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", text):
                found.append(f"line {line}: {name!r} in {text[:60]!r}")
        stripped = text.strip("/")
        if stripped in RUN_FOLDER_NAMES:
            found.append(f"line {line}: folder {stripped!r}")
    return found


@pytest.mark.parametrize("path", _source_files(), ids=lambda p: str(p.relative_to(SRC)))
def test_run_directory_names_are_defined_once(path: Path) -> None:
    """Writers and readers of a run directory import its names from ``dpaudit.rundir.layout``."""
    if path == LAYOUT_MODULE or path in NOT_A_RUN_DIRECTORY:
        return
    spelled = _spelled_run_names(path)
    assert not spelled, f"{path.relative_to(SRC)} spells out run-directory names: {spelled}"


def test_run_directory_name_rule_catches_one(tmp_path: Path) -> None:
    path = tmp_path / "writer.py"
    path.write_text(
        '"""Docstrings may say results.json."""\n'
        'OUT = "results.json"\n'
        'page = f"{figure}/figure.png"\n'
        'folder = "checkpoint"\n'
        'data = "acl2022_results.json"\n',
        encoding="utf-8",
    )
    lines = sorted(s.split(":")[0] for s in _spelled_run_names(path))
    assert lines == ["line 2", "line 3", "line 4"]


#: Auditor folders that audit no claim (the sensitivity simulation estimates a sensitivity).
NOT_CLAIM_AUDITORS = {"sensitivity": "simulates a sensitivity; it certifies no privacy claim"}


def _auditor_classes(folder: Path) -> list[str]:
    """Classes under ``folder`` that state the Auditor protocol: ``kind = AuditorKind.…``,
    ``supports`` and ``audit``."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            methods = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
            kinds = [
                n
                for n in node.body
                if isinstance(n, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "kind" for t in n.targets)
                and isinstance(n.value, ast.Attribute)
                and isinstance(n.value.value, ast.Name)
                and n.value.value.id == "AuditorKind"
            ]
            if kinds and {"supports", "audit"} <= methods:
                found.append(node.name)
    return found


@pytest.mark.parametrize("auditor", sorted(AUDITORS - set(NOT_CLAIM_AUDITORS)))
def test_every_auditor_implements_the_protocol(auditor: str) -> None:
    """Each auditor declares its kind, answers ``supports`` and runs ``audit`` (core protocol)."""
    assert _auditor_classes(SRC / "auditors" / auditor), (
        f"auditors/{auditor} has no class with kind = AuditorKind.…, supports() and audit()"
    )


def test_auditor_protocol_rule_catches_one(tmp_path: Path) -> None:
    (tmp_path / "good.py").write_text(
        "class A:\n    kind = AuditorKind.METRIC\n"
        "    def supports(self, m, c):\n        return True\n"
        "    def audit(self, m, c, cfg, ex):\n        return None\n",
        encoding="utf-8",
    )
    (tmp_path / "bad.py").write_text(
        "class B:\n    kind = AuditorKind.METRIC\n"
        "    def audit(self, m, c, cfg, ex):\n        pass\n",
        encoding="utf-8",
    )
    assert _auditor_classes(tmp_path) == ["A"]


def _proposing_classes(folder: Path) -> dict[str, set[str]]:
    """Auditor classes under ``folder`` (:func:`_auditor_classes`) and their methods."""
    found: dict[str, set[str]] = {}
    names = set(_auditor_classes(folder))
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.name in names:
                found[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
    return found


def _audit_bodies_delegating(folder: Path) -> dict[str, bool]:
    """Per proposing class: whether its ``audit`` only calls ``run_audit``."""
    out = {}
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            for f in node.body:
                if isinstance(f, ast.FunctionDef) and f.name == "audit":
                    calls = [
                        n.func.id
                        for n in ast.walk(f)
                        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                    ]
                    out[node.name] = calls == ["run_audit"]
    return out


def test_auditors_propose_and_the_core_runs_the_procedure() -> None:
    """Every auditor class has ``propose`` and ``read``, and its ``audit`` is the core's
    procedure (``core.procedure.run_audit``: the final draws, certification, the result)."""
    problems = []
    for folder in sorted(AUDITORS - set(NOT_CLAIM_AUDITORS)):
        classes = _proposing_classes(SRC / "auditors" / folder)
        delegating = _audit_bodies_delegating(SRC / "auditors" / folder)
        for name, methods in classes.items():
            if not ({"propose", "read"} <= methods and delegating.get(name, False)):
                problems.append(f"{folder}/{name}: no propose/read, or audit is not run_audit")
    assert not problems, problems


def _answer_calls(path: Path) -> list[int]:
    """Lines of ``path`` that call the core's ``answer`` (by that name)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and _dotted(n.func) in ("answer", "answer.answer")
    ]


def test_only_the_procedure_answers() -> None:
    """One place turns a reading into a result: ``core.procedure.conclude``."""
    calls = {str(p.relative_to(SRC)): lines for p in _source_files() if (lines := _answer_calls(p))}
    assert set(calls) == {"auditors/core/procedure.py"}, calls
    assert len(calls["auditors/core/procedure.py"]) == 1


def test_procedure_rule_catches_one(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        "class Good:\n    kind = AuditorKind.METRIC\n"
        "    def supports(self, m, c):\n        return True\n"
        "    def propose(self, m, c, cfg, ex):\n        return None\n"
        "    def read(self, p, c):\n        return None\n"
        "    def audit(self, m, c, cfg, ex):\n        return run_audit(self, m, c, cfg, ex)\n"
        "class Own:\n    kind = AuditorKind.METRIC\n"
        "    def supports(self, m, c):\n        return True\n"
        "    def audit(self, m, c, cfg, ex):\n        return certify_and_answer(m)\n",
        encoding="utf-8",
    )
    assert _audit_bodies_delegating(tmp_path) == {"Good": True, "Own": False}
    assert set(_proposing_classes(tmp_path)) == {"Good", "Own"}


#: The auditors' own audit functions: the CLI reaches an auditor only through the one entry,
#: ``dpaudit.api.audit`` (with an auditor object as ``method`` where it needs its own
#: inputs); their config classes and helpers it may import.
AUDIT_FUNCTIONS = frozenset(
    {
        "audit",
        "audit_profile",
        "audit_metric",
        "sanity_check",
        "audit_rewriter",
        "audit_text_mechanism",
        "propose_dpsniper",
        "run_audit",
        "run_audits",
    }
)


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` of a chain of attributes on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _auditor_function_uses(path: Path) -> list[str]:
    """``line N: module.function`` wherever ``path`` imports or calls an auditor's audit
    function, TYPE_CHECKING blocks and function bodies included."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    modules: dict[str, str] = {}  # local name -> the auditors' module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("dpaudit.auditors"):
            for alias in node.names:
                if alias.name in AUDIT_FUNCTIONS:
                    found.append(f"line {node.lineno}: {node.module}.{alias.name}")
                elif _is_module(f"{node.module}.{alias.name}"):
                    modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("dpaudit.auditors"):
                    local = alias.asname or alias.name.split(".")[0]
                    modules[local] = alias.name if alias.asname else local
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr in AUDIT_FUNCTIONS):
            continue
        chain = _dotted(node.value)
        if chain is None:
            continue
        head, _, rest = chain.partition(".")
        target = ".".join(p for p in (modules.get(head, head), rest) if p)
        if head in modules and target.startswith("dpaudit.auditors"):
            found.append(f"line {node.lineno}: {target}.{node.attr}")
    return sorted(found)


@pytest.mark.parametrize(
    "path", sorted(SRC.joinpath("cli").rglob("*.py")), ids=lambda p: str(p.relative_to(SRC))
)
def test_cli_reaches_auditors_only_through_the_entry(path: Path) -> None:
    """One entry: every command audits through ``dpaudit.api.audit``, never an auditor's own
    function, so what the entry decides (which auditor, one error budget) holds for it too."""
    used = _auditor_function_uses(path)
    assert not used, (
        f"{path.relative_to(SRC)} calls auditors' audit functions {used}: go through "
        "dpaudit.api.audit (an auditor object as method= where it needs its own inputs)"
    )


def test_entry_rule_catches_a_direct_call(tmp_path: Path) -> None:
    path = tmp_path / "cmd_bad.py"
    path.write_text(
        "from typing import TYPE_CHECKING\n"
        "import dpaudit.auditors.metric.auditor\n"
        "import dpaudit.auditors.sanity.check as check\n"
        "from dpaudit.api import audit\n"
        "from dpaudit.auditors.profile import ProfileAuditConfig, auditor\n"
        "from dpaudit.auditors.blackbox.scores import LikelihoodRatioScore\n"
        "if TYPE_CHECKING:\n"
        "    from dpaudit.auditors.blackbox.dpsniper import propose_dpsniper\n\n\n"
        "def run(m, c):\n"
        "    from dpaudit.auditors.blackbox.auditor import audit as blackbox_audit\n"
        "    auditor.audit_profile(m, c)\n"
        "    check.sanity_check(m)\n"
        "    dpaudit.auditors.metric.auditor.audit_metric(m)\n"
        "    return audit(m, c, config=ProfileAuditConfig()), LikelihoodRatioScore\n",
        encoding="utf-8",
    )
    assert _auditor_function_uses(path) == [
        "line 12: dpaudit.auditors.blackbox.auditor.audit",
        "line 13: dpaudit.auditors.profile.auditor.audit_profile",
        "line 14: dpaudit.auditors.sanity.check.sanity_check",
        "line 15: dpaudit.auditors.metric.auditor.audit_metric",
        "line 8: dpaudit.auditors.blackbox.dpsniper.propose_dpsniper",
    ]


#: The one module that assembles audit results (the verdict rule, its sentence, the fields).
ANSWER_MODULE = "auditors/core/answer.py"


#: Fields only an audit result has: a ``replace`` that sets one patches a finished result.
RESULT_ONLY_FIELDS = frozenset(
    {
        "verdict",
        "verdict_text",
        "epsilon_lower_bound",
        "confidence_statement",
        "witness",
        "declaration_findings",
        "reproducible",
        "claimed_epsilon",
    }
)


def _result_constructions(path: Path) -> list[str]:
    """Calls that build or patch an :class:`AuditResult` in ``path``: ``AuditResult(...)``, or
    ``replace`` setting a field only a result has (:data:`RESULT_ONLY_FIELDS`), or setting
    ``detail`` on a value named ``result``."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        if name is not None and name.split(".")[-1] == "AuditResult":
            out.append(f"line {node.lineno}: AuditResult(...)")
        elif name in ("replace", "dataclasses.replace") and node.args:
            keys = {k.arg for k in node.keywords}
            first = node.args[0]
            named = isinstance(first, ast.Name) and first.id == "result"
            if keys & RESULT_ONLY_FIELDS or (named and "detail" in keys):
                out.append(f"line {node.lineno}: replace(..., {', '.join(sorted(keys))})")
    return out


@pytest.mark.parametrize("path", _source_files(), ids=lambda p: str(p.relative_to(SRC)))
def test_audit_results_are_assembled_in_one_module(path: Path) -> None:
    """Only the core's answer module builds a result; auditors hand it what they certified."""
    if str(path.relative_to(SRC)) in (ANSWER_MODULE, "results/audit.py"):
        return
    assert _result_constructions(path) == [], f"{path.relative_to(SRC)} assembles a result"


def test_result_assembly_rule_catches_one(tmp_path: Path) -> None:
    path = tmp_path / "auditor.py"
    path.write_text(
        "import dataclasses\n"
        "from dpaudit.results import AuditResult\n"
        "r = AuditResult(kind='blackbox')\n"
        "s = dataclasses.replace(chosen, verdict_text='', notes=())\n"
        "t = dataclasses.replace(result, detail=None)\n"
        "u = dataclasses.replace(config, seed=1)\n",
        encoding="utf-8",
    )
    assert _result_constructions(path) == [
        "line 3: AuditResult(...)",
        "line 4: replace(..., notes, verdict_text)",
        "line 5: replace(..., detail)",
    ]


def _class_names(paths: list[Path], root: Path) -> dict[str, list[str]]:
    """Every class name defined in ``paths`` (at any depth), with the files (under ``root``)
    defining it."""
    found: dict[str, list[str]] = {}
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                found.setdefault(node.name, []).append(path.relative_to(root).as_posix())
    return found


#: Shared class names, with why (none: keep it so).
SHARED_CLASS_NAMES: dict[str, frozenset[str]] = {}


def test_no_two_classes_share_a_name() -> None:
    """One name, one class: a reader (or an import) never has to ask which ``CertifiedSet``."""
    shared = {
        n: p
        for n, p in _class_names(_source_files(), SRC).items()
        if len(p) > 1 and frozenset(p) != SHARED_CLASS_NAMES.get(n)
    }
    assert not shared, f"class names defined more than once: {shared}"


def test_shared_class_name_rule_catches_one(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.py").write_text("class Record:\n    pass\n", encoding="utf-8")
    (tmp_path / "a" / "two.py").write_text(
        "def f():\n    class Record:\n        pass\n", encoding="utf-8"
    )
    names = _class_names(sorted(tmp_path.rglob("*.py")), tmp_path)
    assert names["Record"] == ["a/one.py", "a/two.py"]
