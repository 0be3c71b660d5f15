"""Every package folder ships: pyproject lists packages explicitly (the layers are mapped
under `ragline.`), so a new subpackage missing from the list would vanish from the wheel."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("domain", "application", "adapters", "bootstrap", "contracts", "testing")


def _package_folders() -> set[str]:
    found = set()
    for layer in LAYERS:
        for init in (ROOT / layer).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT).as_posix().replace("/", ".")
            found.add(f"ragline.{relative}")
    return found


def test_every_package_folder_is_listed_in_pyproject() -> None:
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    assert sorted(_package_folders() - listed) == []
    assert sorted(listed - _package_folders()) == []


def test_top_level_layers_map_to_their_folders() -> None:
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-dir"
    ]
    assert mapping == {f"ragline.{layer}": layer for layer in LAYERS}
