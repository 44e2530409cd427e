"""No import circle inside a package: the library's modules form a layered graph.

Every import counts, wherever it stands: at module level, inside a function (a lazy import that
only hides a circle) or under ``if TYPE_CHECKING:`` (a type-only import still ties two modules
together for a reader and for any tool that resolves it). Importing ``a.b`` runs ``a/__init__``
first; that implicit edge is not counted, so a package that re-exports its own submodules is not
a circle. The one circle ``hpo/`` once had was untied (selection, agnostic Bayes, evaluation,
ensembles, the ensemble rules and the optimizers' base module).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def module_name(path: Path, root: Path) -> str:
    """The dotted name of the module at ``path`` under ``root`` (a package is its folder)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module an ``ImportFrom`` names (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    base = module if is_package else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        base = base.rpartition(".")[0]
    return f"{base}.{node.module}" if node.module else base


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Module -> the modules of ``package`` it imports (any import statement, at any depth)."""
    paths = {module_name(p, root): p for p in sorted((root / package).rglob("*.py"))}

    def known(name: str) -> str | None:  # the longest prefix of ``name`` that is a module
        while name and name not in paths:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        targets: set[str | None] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets.update(known(alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(node, module, path.name == "__init__.py")
                for alias in node.names:  # ``from a import b``: b may be a submodule
                    full = f"{source}.{alias.name}"
                    targets.add(full if full in paths else known(source))
        graph[module] = {t for t in targets if t is not None and t != module}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


@pytest.mark.parametrize("package", ["hpo", "runfiles", "experiments", "analysis"])
def test_no_module_of_a_package_imports_one_that_imports_it_back(package: str) -> None:
    assert import_cycles(import_graph(REPO, package)) == []


def test_a_planted_lazy_circle_is_found(tmp_path: Path) -> None:
    """The guard sees a circle closed by a function-local import, or by a type-only one."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from pkg.low import Low\n")  # re-export: not a circle
    (package / "low.py").write_text("class Low: ...\n")
    (package / "rules.py").write_text("from pkg.low import Low\n\ndef make():\n    return Low\n")
    (package / "registry.py").write_text("from pkg import rules\n")
    assert import_cycles(import_graph(tmp_path, "pkg")) == []

    (package / "rules.py").write_text("def make():\n    from pkg.registry import rules\n")
    assert import_cycles(import_graph(tmp_path, "pkg")) == [["pkg.registry", "pkg.rules"]]

    (package / "rules.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .registry import rules\n"
    )
    assert import_cycles(import_graph(tmp_path, "pkg")) == [["pkg.registry", "pkg.rules"]]


def test_the_shared_records_import_nothing_of_the_library() -> None:
    assert import_graph(REPO, "hpo")["hpo.records"] == set()


def package_graph(graph: dict[str, set[str]], depth: int = 2) -> dict[str, set[str]]:
    """The graph between packages: ``hpo.a.b`` counts as ``hpo.a`` (``depth`` 2)."""
    packages: dict[str, set[str]] = {}

    def package(module: str) -> str:
        return ".".join(module.split(".")[:depth])

    for module, targets in graph.items():
        edges = packages.setdefault(package(module), set())
        edges.update(package(t) for t in targets if package(t) != package(module))
    return packages


def test_the_library_s_packages_form_layers() -> None:
    """Between the packages of ``hpo/`` (space, data, evaluation, learners, gp, optimizers,
    rules, ensembles, significance, cash) the imports point one way: a lower layer never
    imports a higher one, even through a module that no circle inside a package would show."""
    assert import_cycles(package_graph(import_graph(REPO, "hpo"))) == []


# The shared vocabulary of every layer; each imports nothing of the library but itself.
TOP_LEVEL_MODULES = {"hpo.records", "hpo.registry", "hpo.seeding", "hpo.tasks"}


def test_the_library_s_top_level_holds_only_the_shared_vocabulary() -> None:
    """Everything else of ``hpo/`` lives in the package of its concept (docs/architecture.md)."""
    graph = import_graph(REPO, "hpo")
    modules = {m for m in graph if m.count(".") == 1 and not (REPO / "hpo" / m[4:]).is_dir()}
    assert modules == TOP_LEVEL_MODULES
    for module in TOP_LEVEL_MODULES:
        assert graph[module] == set(), module


def write_tree(root: Path, files: dict[str, str]) -> None:
    """Write ``files`` (path below ``root``: text), making their folders."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_a_planted_circle_between_packages_is_found(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/low/__init__.py": "",
            "pkg/low/a.py": "X = 1\n",
            "pkg/high/__init__.py": "",
            "pkg/high/b.py": "from pkg.low.a import X\n",
        },
    )
    assert import_cycles(package_graph(import_graph(tmp_path, "pkg"))) == []
    (tmp_path / "pkg/low/c.py").write_text("from pkg.high.b import X\n")
    assert import_cycles(package_graph(import_graph(tmp_path, "pkg"))) == [["pkg.high", "pkg.low"]]


# The repository's layers, bottom up, and the packages each may import (docs/architecture.md):
# the library knows no run's configuration (Hydra), files of results or reports; a run's files
# (where they live, their columns, atomic writing and reading) are below both the analysis,
# which reads them and knows no way of running them, and the experiments, which run and write
# them.
LAYERS: dict[str, set[str]] = {
    "hpo": set(),
    "runfiles": {"hpo"},
    "analysis": {"hpo", "runfiles"},
    "experiments": {"hpo", "runfiles", "analysis"},
}


# experiments/ by concept, bottom up (docs/architecture.md): what a run is, one run, the tasks as
# objectives and Auto-WEKA's additions, SLURM's sizing, sweeps of runs, and the commands on top.
_BELOW_SWEEPS = {"experiments.configuration", "experiments.run", "experiments.cluster"}
EXPERIMENT_LAYERS: dict[str, set[str]] = {
    "experiments.configuration": set(),
    "experiments.run": {"experiments.configuration"},
    "experiments.objectives": {"experiments.configuration"},
    "experiments.carps_tasks": {"experiments.configuration", "experiments.objectives"},
    "experiments.autoweka": {"experiments.configuration"},
    "experiments.cluster": {"experiments.configuration"},
    "experiments.sweep": _BELOW_SWEEPS,
    **{
        f"experiments.{command}": {*_BELOW_SWEEPS, "experiments.sweep"}
        for command in ("demo", "reproduce", "figures_chapter2")
    },
}


def layer_of(name: str, layers: dict[str, set[str]]) -> str | None:
    """The layer (a package or module, dotted) that module ``name`` belongs to, if any."""
    found = [layer for layer in layers if name == layer or name.startswith(layer + ".")]
    return max(found, key=len) if found else None


def upward_imports(root: Path, layers: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(module, imported layer) for every import of a layer's module that names a layer of
    ``layers`` it may not import (any import statement, at any depth, lazy or type-only)."""
    found = []
    for layer, allowed in layers.items():
        base = root / layer.replace(".", "/")
        paths = sorted(base.rglob("*.py")) if base.is_dir() else [base.with_suffix(".py")]
        for path in (p for p in paths if p.exists()):
            module = module_name(path, root)
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and not node.level:
                    names = [node.module or ""]
                else:
                    continue
                for name in names:
                    target = layer_of(name, layers)
                    if target not in (None, layer) and target not in allowed:
                        found.append((module, target))
    return found


def test_every_layer_imports_only_the_layers_below_it() -> None:
    assert upward_imports(REPO, LAYERS) == []


def test_a_planted_upward_import_is_found(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "hpo/__init__.py": "",
            "hpo/a.py": "X = 1\n",
            "analysis/__init__.py": "",
            "analysis/b.py": "from hpo.a import X\n",
            "experiments/__init__.py": "",
        },
    )
    assert upward_imports(tmp_path, LAYERS) == []
    (tmp_path / "hpo/c.py").write_text("def f():\n    import experiments.sweep\n")
    assert upward_imports(tmp_path, LAYERS) == [("hpo.c", "experiments")]
    (tmp_path / "runfiles").mkdir()
    (tmp_path / "runfiles/d.py").write_text("from analysis.b import X\n")  # files below analysis
    assert ("runfiles.d", "analysis") in upward_imports(tmp_path, LAYERS)


def test_experiments_concepts_import_only_the_concepts_below_them() -> None:
    assert upward_imports(REPO, EXPERIMENT_LAYERS) == []


def test_a_planted_upward_import_inside_experiments_is_found(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "experiments/__init__.py": "",
            "experiments/configuration/__init__.py": "",
            "experiments/configuration/spec.py": "X = 1\n",
            "experiments/run/__init__.py": "",
            "experiments/run/runner.py": "from experiments.configuration.spec import X\n",
        },
    )
    assert upward_imports(tmp_path, EXPERIMENT_LAYERS) == []
    (tmp_path / "experiments/configuration/config.py").write_text(
        "def f():\n    from experiments.run.runner import X\n"
    )
    assert upward_imports(tmp_path, EXPERIMENT_LAYERS) == [
        ("experiments.configuration.config", "experiments.run")
    ]
