"""The installed package maps the top-level folders under `ragline.`."""

import importlib

import pytest


@pytest.mark.parametrize(
    "name", ["domain", "application", "adapters", "bootstrap", "contracts", "testing"]
)
def test_layer_imports_under_ragline(name: str) -> None:
    module = importlib.import_module(f"ragline.{name}")
    assert module.__file__ is not None
    assert module.__file__.replace("\\", "/").endswith(f"/{name}/__init__.py")
