"""The shape of the code, as checks anyone can run (issue 22): no import cycle between packages
of ragline, no module over 500 lines in the product's layers, and tests, benchmarks and
campaigns apart (what two of them share lives under `ragline.testing`; nothing imports a
`__main__`).

A cycle "between packages" is one among the sibling packages of one parent: `a -> b` when any
module under `a` imports any module under `b`. A package's own `__init__` importing its
children (registration, re-exports) is containment, not a cycle, and a module importing a
sibling module of the same package is not a package cycle either. The import graph is grimp's,
the library import-linter builds its graph with.
"""

from __future__ import annotations

import ast
import itertools
import sys
from collections.abc import Iterator, Mapping, Set
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 500
SIZED_LAYERS = ("domain", "application", "adapters", "bootstrap")
# Modules allowed over the limit (none: add one only with the issue that will split it).
KNOWN_LONG: set[str] = set()
# Package cycles that exist today, each as the sorted packages of its strongly connected
# component (a cycle among some of them passes too); none today. Add one only with the
# issue that will break it.
KNOWN_CYCLES: set[tuple[str, ...]] = set()

Edges = Mapping[str, Mapping[str, tuple[str, str]]]


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    sys.path.insert(0, str(ROOT / ".layers"))  # `ragline` as a real tree, as lint-layers has it
    try:
        return grimp.build_graph("ragline", cache_dir=None)
    finally:
        sys.path.remove(str(ROOT / ".layers"))


def sibling_edges(graph: grimp.ImportGraph, parent: str, packages: Set[str]) -> Edges:
    """`child -> other child` of `parent` (packages only), each with one import behind it."""
    children = sorted(child for child in graph.find_children(parent) if child in packages)
    edges: dict[str, dict[str, tuple[str, str]]] = {}
    for child in children:
        for module in sorted({child, *graph.find_descendants(child)}):
            for imported in sorted(graph.find_modules_directly_imported_by(module)):
                target = _child_holding(parent, imported)
                if target in packages and target in children and target != child:
                    edges.setdefault(child, {}).setdefault(target, (module, imported))
    return edges


def _child_holding(parent: str, module: str) -> str | None:
    if not module.startswith(parent + "."):
        return None
    return f"{parent}.{module[len(parent) + 1 :].split('.')[0]}"


def cycles(edges: Edges) -> list[list[str]]:
    """The strongly connected components with more than one member (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in edges.get(node, {}):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(found)


def cycle_path(edges: Edges, component: list[str]) -> str:
    """One closed path through the component, each step with the import that makes it."""
    start, members = component[0], set(component)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier and start not in previous:  # breadth first, back to `start`
        following = []
        for node in frontier:
            for target in edges.get(node, {}):
                if target in members and target not in previous:
                    previous[target] = node
                    following.append(target)
        frontier = following
    path = [start]
    while True:
        path.append(previous[path[-1]])
        if path[-1] == start:
            break
    path.reverse()
    steps = [f"{a} -> {b} ({' imports '.join(edges[a][b])})" for a, b in itertools.pairwise(path)]
    return "\n    ".join(steps)


def package_cycles(graph: grimp.ImportGraph) -> dict[tuple[str, ...], str]:
    packages = {module for module in graph.modules if graph.find_children(module)}
    found = {}
    for parent in sorted(packages):
        edges = sibling_edges(graph, parent, packages)
        for component in cycles(edges):
            found[tuple(component)] = cycle_path(edges, component)
    return found


def test_no_import_cycle_between_packages(graph: grimp.ImportGraph) -> None:
    found = package_cycles(graph)
    new = {  # a known cycle that shrank (part of it fixed) is still known
        component: path
        for component, path in found.items()
        if not any(set(component) <= set(known) for known in KNOWN_CYCLES)
    }
    assert new == {}, "import cycles between packages:\n" + "\n".join(
        f"  {', '.join(component)}:\n    {path}" for component, path in new.items()
    )


def test_the_cycle_check_finds_and_reports_a_cycle() -> None:
    edges = {
        "p.a": {"p.b": ("p.a.x", "p.b.y")},
        "p.b": {"p.c": ("p.b.y", "p.c.z")},
        "p.c": {"p.a": ("p.c.z", "p.a")},
        "p.d": {"p.a": ("p.d", "p.a.x")},
    }
    assert cycles(edges) == [["p.a", "p.b", "p.c"]]
    assert cycle_path(edges, ["p.a", "p.b", "p.c"]) == (
        "p.a -> p.b (p.a.x imports p.b.y)\n"
        "    p.b -> p.c (p.b.y imports p.c.z)\n"
        "    p.c -> p.a (p.c.z imports p.a)"
    )
    assert cycles({"p.a": {"p.b": ("p.a", "p.b")}}) == []


def _graph(imports: list[tuple[str, str]]) -> grimp.ImportGraph:
    graph = grimp.ImportGraph()
    for module in ("p", "p.a", "p.a.x", "p.b", "p.b.y", "p.c"):
        graph.add_module(module)
    for importer, imported in imports:
        graph.add_import(importer=importer, imported=imported)
    return graph


def test_registration_in_a_package_init_is_not_a_cycle() -> None:
    registration = [("p", "p.a.x"), ("p", "p.b.y"), ("p.a.x", "p"), ("p.a.x", "p.c")]
    graph = _graph(registration)
    assert package_cycles(graph) == {}
    graph = _graph([*registration, ("p.a.x", "p.b.y"), ("p.b.y", "p.a")])
    assert list(package_cycles(graph)) == [("p.a", "p.b")]


# -- no module over 500 lines ------------------------------------------------------------


def long_modules(root: Path) -> dict[str, int]:
    found = {}
    for layer in SIZED_LAYERS:
        for path in sorted((root / layer).rglob("*.py")):
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > MAX_LINES:
                found[path.relative_to(root).as_posix()] = lines
    return found


def test_no_module_over_500_lines() -> None:
    over = {path: lines for path, lines in long_modules(ROOT).items() if path not in KNOWN_LONG}
    assert over == {}


def test_the_size_check_counts_lines(tmp_path: Path) -> None:
    (tmp_path / "adapters" / "vendor").mkdir(parents=True)
    (tmp_path / "adapters" / "vendor" / "long.py").write_text("x = 1\n" * 501)
    (tmp_path / "adapters" / "vendor" / "fits.py").write_text("x = 1\n" * 500)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "long_test.py").write_text("x = 1\n" * 900)  # not a sized layer
    assert long_modules(tmp_path) == {"adapters/vendor/long.py": 501}


# -- tests, benchmarks and campaigns apart --------------------------------------------------

# who may not import whom: benchmarks and tests share only ragline (and campaigns, which
# import neither); the product's layers import none of the three
FORBIDDEN = {
    "tests": {"benchmarks"},
    "benchmarks": {"tests"},
    "campaigns": {"tests", "benchmarks"},
    **{layer: {"tests", "benchmarks", "campaigns"} for layer in (*SIZED_LAYERS, "contracts")},
    "testing": {"tests", "benchmarks", "campaigns"},
}


def imported_names(path: Path) -> Iterator[tuple[int, str]]:
    """Every absolute module name `path` imports (function-local imports included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.level:
                yield node.lineno, "." * node.level + node.module
                continue
            yield node.lineno, node.module
            for alias in node.names:
                yield node.lineno, f"{node.module}.{alias.name}"


def wrong_imports(root: Path) -> list[str]:
    found = []
    for folder, forbidden in FORBIDDEN.items():
        for path in sorted((root / folder).rglob("*.py")):
            for line, name in imported_names(path):
                parts = name.lstrip(".").split(".")
                where = f"{path.relative_to(root).as_posix()}:{line}"
                if parts[0] in forbidden:
                    found.append(f"{where} imports {name}")
                elif "__main__" in parts:
                    found.append(f"{where} imports a __main__: {name}")
    return sorted(set(found))


def test_tests_and_benchmarks_never_import_each_other_nor_a_main() -> None:
    assert wrong_imports(ROOT) == []


def test_the_import_check_sees_each_kind_of_wrong_import(tmp_path: Path) -> None:
    for folder, text in {
        "tests": "from benchmarks.campaigns import servers\n",
        "benchmarks": "def f():\n    import tests.services.fixtures\n",
        "campaigns": "from benchmarks.ingest import fake\n",
        "testing": "from benchmarks.chunking.__main__ import main\n",
        "domain": "from campaigns import crash\n",
    }.items():
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "bad.py").write_text(text, encoding="utf-8")
    (tmp_path / "application").mkdir()
    (tmp_path / "application" / "main_user.py").write_text(
        "from ragline.bootstrap.__main__ import run\n", encoding="utf-8"
    )
    assert wrong_imports(tmp_path) == [
        "application/main_user.py:1 imports a __main__: ragline.bootstrap.__main__",
        "application/main_user.py:1 imports a __main__: ragline.bootstrap.__main__.run",
        "benchmarks/bad.py:2 imports tests.services.fixtures",
        "campaigns/bad.py:1 imports benchmarks.ingest",
        "campaigns/bad.py:1 imports benchmarks.ingest.fake",
        "domain/bad.py:1 imports campaigns",
        "domain/bad.py:1 imports campaigns.crash",
        "testing/bad.py:1 imports benchmarks.chunking.__main__",
        "testing/bad.py:1 imports benchmarks.chunking.__main__.main",
        "tests/bad.py:1 imports benchmarks.campaigns",
        "tests/bad.py:1 imports benchmarks.campaigns.servers",
    ]
