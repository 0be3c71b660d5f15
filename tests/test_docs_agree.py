"""The hand-written docs agree with the code: every setting they name exists, every default
they state is the setting's default, and the README names every install extra."""

from __future__ import annotations

import re
import tomllib
from enum import Enum
from pathlib import Path

import click
import typer.main

from ragline.adapters.inbound.cli import build_cli
from ragline.bootstrap.cli import _entry
from ragline.bootstrap.settings_doc import names_of, variables

ROOT = Path(__file__).resolve().parents[1]
GENERATED = {"settings.md", "http-api.md"}
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md"))]
HAND_WRITTEN = [p for p in PAGES if p.name not in GENERATED]
HARNESS_VARIABLES = {"RAGLINE_CAMPAIGN", "RAGLINE_CAMPAIGN_JSON"}
"""Variables the test and campaign harnesses read, not ragline itself."""

NAME = r"(?:RAGLINE_[A-Z0-9_]*[A-Z0-9]|MQ_VENDOR|PARSE_TASK_TOPIC|PARSE_RESULT_TOPIC|KAFKA_[A-Z_]+)"
VALUE = r"(?P<value>`[^`]+`|\d[\d_.]*)"
CLAIMS = [
    # `RAGLINE_X` (default V) / (`RAGLINE_X`, default V) / `RAGLINE_X` a few words (default V
    re.compile(rf"`(?P<name>{NAME})`[^`()]{{0,25}}?[(,]\s*default:?\s+{VALUE}"),
    # `MQ_VENDOR=kafka`, default / `NAME=value` (default)
    re.compile(rf"`(?P<name>{NAME})=(?P<value>[^`]+)`,?\s*\(?default\b"),
    # NAME=value   # default (in a code block)
    re.compile(rf"^(?P<name>{NAME})=(?P<value>\S+)\s+#\s*default\b", re.MULTILINE),
]


def _setting_defaults() -> dict[str, object]:
    """Every environment name a setting answers to -> its default."""
    defaults: dict[str, object] = {}
    for path, field in variables():
        for name in {"RAGLINE_" + "_".join(path).upper(), *names_of(path)}:
            defaults[name] = field.default
    return defaults


def _cli_variables() -> set[str]:
    command = typer.main.get_command(build_cli(_entry))
    found: set[str] = set()

    def walk(cmd: click.Command) -> None:
        for param in cmd.params:
            envvar = getattr(param, "envvar", None)
            found.update([envvar] if isinstance(envvar, str) else envvar or [])
        for sub in getattr(cmd, "commands", {}).values():
            walk(sub)

    walk(command)
    return found


def _same(stated: str, default: object) -> bool:
    value = default.value if isinstance(default, Enum) else default
    text = stated.strip("`").rstrip(".,;:")
    if isinstance(value, bool):
        return text.lower() == str(value).lower()
    if isinstance(value, int | float):
        try:
            return float(text.replace("_", "")) == float(value)
        except ValueError:
            return False
    return text == str(value)


def test_every_variable_the_docs_name_exists() -> None:
    known = set(_setting_defaults()) | _cli_variables() | HARNESS_VARIABLES
    unknown = {
        f"{page.name}: {match.group(0)}"
        for page in PAGES
        for match in re.finditer(rf"\b{NAME}\b(?!\*|_\*)", page.read_text(encoding="utf-8"))
        if match.group(0) not in known and match.group(0) != "RAGLINE_X"  # a placeholder
    }
    assert sorted(unknown) == []


def test_every_default_the_docs_state_is_the_settings_default() -> None:
    defaults = _setting_defaults()
    claims = [
        (page.name, match.group("name"), match.group("value"))
        for page in HAND_WRITTEN
        for pattern in CLAIMS
        for match in pattern.finditer(page.read_text(encoding="utf-8"))
    ]
    assert len(claims) >= 8  # the patterns still find the docs' claims
    wrong = [
        f"{page}: {name} default {value} (settings: {defaults.get(name)!r})"
        for page, name, value in claims
        if name not in defaults or not _same(value, defaults[name])
    ]
    assert wrong == []


def test_the_readme_names_every_extra() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = re.search(r"the\s+adapter\s+families\s+are\s+extras\s+\(([^)]*)\)", readme)
    assert listed is not None
    named = set(re.findall(r"`([a-z0-9-]+)`", listed.group(1)))
    assert sorted(set(extras) - named) == []
    assert sorted(named - set(extras)) == []
