"""Regenerate the checked-in JSON Schemas: `python -m ragline.contracts.wire.generate`.

`--check` exits 1 (and names the stale files) instead of writing; tests call `stale_schemas()`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pydantic import BaseModel

from ragline.contracts.wire.parse_result import ParseResult
from ragline.contracts.wire.parse_task import ParseTask

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schemas"
MODELS: dict[str, type[BaseModel]] = {
    "parse_task.schema.json": ParseTask,
    "parse_result.schema.json": ParseResult,
}


def render(model: type[BaseModel]) -> str:
    """The schema text exactly as checked in (stable key order, trailing newline)."""
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema"}
    schema.update(model.model_json_schema(mode="validation"))
    return json.dumps(schema, indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def stale_schemas(directory: Path | None = None) -> list[str]:
    """File names whose checked-in text differs from what the models generate."""
    directory = SCHEMA_DIR if directory is None else directory
    stale = []
    for name, model in MODELS.items():
        path = directory / name
        if not path.exists() or path.read_text(encoding="utf-8") != render(model):
            stale.append(name)
    return stale


def write_schemas(directory: Path | None = None) -> list[Path]:
    directory = SCHEMA_DIR if directory is None else directory
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, model in MODELS.items():
        path = directory / name
        path.write_text(render(model), encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str]) -> int:
    if "--check" in argv:
        stale = stale_schemas()
        for name in stale:
            print(f"stale: {SCHEMA_DIR / name} (run python -m ragline.contracts.wire.generate)")
        return 1 if stale else 0
    for path in write_schemas():
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
