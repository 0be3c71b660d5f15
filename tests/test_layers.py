"""The domain imports only the standard library and attrs (the import-linter contracts cover
the arrows between layers; this covers third-party imports the linter cannot enumerate)."""

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ALLOWED = set(sys.stdlib_module_names) | {"attrs", "attr", "ragline", "__future__"}


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def test_domain_imports_only_stdlib_and_attrs() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in sorted((ROOT / "domain").rglob("*.py"))
        for name in _imports(path)
        if name.split(".")[0] not in ALLOWED
        or (name.startswith("ragline.") and not name.startswith("ragline.domain"))
    ]
    assert offenders == []


def test_purity_check_sees_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import sqlalchemy\nfrom ragline.adapters import cli\n", encoding="utf-8")
    assert _imports(bad) == ["sqlalchemy", "ragline.adapters"]
