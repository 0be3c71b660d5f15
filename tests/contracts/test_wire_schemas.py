"""The checked-in JSON Schemas are what the models generate, and they accept the examples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ragline.contracts.wire import generate

ROOT = Path(__file__).resolve().parents[2] / "contracts"


def load(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def test_checked_in_schemas_match_the_models() -> None:
    assert generate.SCHEMA_DIR == ROOT / "schemas"
    assert generate.stale_schemas() == [], (
        "a wire model changed: run `python -m ragline.contracts.wire.generate` and commit"
    )


def test_a_model_change_makes_the_check_fail(tmp_path: Path) -> None:
    generate.write_schemas(tmp_path)
    assert generate.stale_schemas(tmp_path) == []
    schema = load(tmp_path / "parse_task.schema.json")
    schema["required"].remove("md_object_key")
    (tmp_path / "parse_task.schema.json").write_text(json.dumps(schema), encoding="utf-8")
    (tmp_path / "parse_result.schema.json").unlink()
    assert generate.stale_schemas(tmp_path) == [
        "parse_task.schema.json",
        "parse_result.schema.json",
    ]


def test_the_generator_check_mode_exit_codes(tmp_path: Path, monkeypatch: Any) -> None:
    assert generate.main(["--check"]) == 0
    monkeypatch.setattr(generate, "SCHEMA_DIR", tmp_path)
    assert generate.main(["--check"]) == 1


@pytest.mark.parametrize(
    ("schema", "example"),
    [
        ("parse_task", "parse_task.first_parse.json"),
        ("parse_task", "parse_task.retry.json"),
        ("parse_task", "parse_task.with_metadata.json"),
        ("parse_result", "parse_result.success.json"),
        ("parse_result", "parse_result.failed.json"),
    ],
)
def test_examples_validate_against_the_schemas(schema: str, example: str) -> None:
    validator = jsonschema.Draft202012Validator(load(ROOT / "schemas" / f"{schema}.schema.json"))
    validator.validate(load(ROOT / "examples" / example))


def test_the_schema_also_requires_previous_task_id_on_a_retry() -> None:
    validator = jsonschema.Draft202012Validator(load(ROOT / "schemas" / "parse_task.schema.json"))
    retry = load(ROOT / "examples" / "parse_task.retry.json")
    del retry["previous_task_id"]
    assert not validator.is_valid(retry)
    assert not validator.is_valid(retry | {"previous_task_id": None})
    assert validator.is_valid(retry | {"is_retry": False})
