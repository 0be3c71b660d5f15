"""No `Any` at an entry point, and no entry point that reaches the container by name.

The driving adapters (`adapters/inbound/**`: the CLI, the HTTP API, the task consumer) get
the typed `Entry` / `UseCases` from bootstrap, so mypy --strict checks every use case they
call. This reads their source with `ast` and refuses what would let a misspelt use case
through to run time: the name `Any` (in an annotation or anywhere else), `getattr` with a
computed name or on a container, a subscript or `.get`/`.provider` on a container or its
providers, any mention of a `container`, and the container's library.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

INBOUND = Path(__file__).resolve().parents[1] / "adapters" / "inbound"
CONTAINERISH = ("container", "providers")


def _mentions_container(node: ast.AST) -> bool:
    text = ast.unparse(node).lower()
    return any(word in text for word in CONTAINERISH)


def violations(source: str, name: str = "<source>") -> list[str]:
    """Each way `source` lets an untyped lookup into an entry point, as `name:line: why`."""
    found: list[str] = []

    def report(node: ast.AST, why: str) -> None:
        found.append(f"{name}:{getattr(node, 'lineno', 0)}: {why}")

    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "Any":
            report(node, "`Any`")
        elif isinstance(node, ast.Attribute) and node.attr == "Any":
            report(node, "`typing.Any`")
        elif isinstance(node, ast.alias) and node.name.split(".")[-1] == "Any":
            report(node, "imports `Any`")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            annotation = _string_annotation(node.value)
            if annotation is not None and any(
                isinstance(n, ast.Name) and n.id == "Any" for n in ast.walk(annotation)
            ):
                report(node, "`Any` in a string annotation")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                modules.append(node.module)
            if any(m.split(".")[0] == "dependency_injector" for m in modules):
                report(node, "imports dependency_injector (the container is bootstrap's)")
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in ("getattr", "setattr", "hasattr"):
                args = node.args
                if args and _mentions_container(args[0]):
                    report(node, f"`{func.id}` on a container")
                elif len(args) >= 2 and not (
                    isinstance(args[1], ast.Constant) and isinstance(args[1].value, str)
                ):
                    report(node, f"`{func.id}` with a computed name")
            elif (
                isinstance(func, ast.Attribute)
                and func.attr in ("get", "provider", "set_provider", "providers")
                and _mentions_container(func.value)
            ):
                report(node, f"`.{func.attr}(...)` on a container (a lookup by string)")
        elif isinstance(node, ast.Subscript) and _mentions_container(node.value):
            report(node, "a string-keyed lookup on a container or its providers")
        elif isinstance(node, ast.Attribute) and node.attr.lower() in CONTAINERISH:
            report(node, f"reaches `.{node.attr}`")
        elif isinstance(node, ast.Name) and node.id.lower() in CONTAINERISH:
            report(node, f"names `{node.id}`")
    return found


def _string_annotation(text: str) -> ast.expr | None:
    """`text` parsed as a type expression when it looks like one (`"dict[str, Any]"`)."""
    if "Any" not in text or len(text) > 200:
        return None
    try:
        return ast.parse(text, mode="eval").body
    except SyntaxError:
        return None


def _modules() -> list[Path]:
    return sorted(INBOUND.rglob("*.py"))


def test_the_entry_points_are_found() -> None:
    names = {p.relative_to(INBOUND).as_posix() for p in _modules()}
    assert {"cli/app.py", "http/app.py", "task_consumer/consumer.py", "entry.py"} <= names


@pytest.mark.parametrize("module", _modules(), ids=lambda p: p.relative_to(INBOUND).as_posix())
def test_no_any_and_no_lookup_by_name_at_an_entry_point(module: Path) -> None:
    assert violations(module.read_text(encoding="utf-8"), module.name) == []


@pytest.mark.parametrize(
    ("snippet", "why"),
    [
        ("from typing import Any\n", "imports `Any`"),
        ("def f(x: Any) -> None: ...\n", "`Any`"),
        ("def f() -> typing.Any: ...\n", "`typing.Any`"),
        ("x: 'dict[str, Any]' = {}\n", "`Any` in a string annotation"),
        ("use = getattr(request.app.state.container, name)\n", "`getattr` on a container"),
        ("use = getattr(cases, name)\n", "`getattr` with a computed name"),
        ("use = c.providers['list_runs']\n", "a string-keyed lookup"),
        ("use = container.providers.get('list_runs')\n", "on a container (a lookup by string)"),
        ("use = app.state.container.list_runs\n", "reaches `.container`"),
        ("from dependency_injector import providers\n", "imports dependency_injector"),
    ],
)
def test_the_check_sees_each_violation(snippet: str, why: str) -> None:
    assert any(why in found for found in violations(snippet)), violations(snippet)


def test_the_typed_face_passes_the_check() -> None:
    typed = (
        "async def get_run(cases: UseCasesDep) -> RunView:\n"
        "    runs = await cases.list_runs()\n"
        "    route = getattr(scope, 'route', None)\n"
    )
    assert violations(typed) == []
