"""docs/settings.md is generated from the Settings model; it must not drift."""

from pathlib import Path

from ragline.bootstrap.settings_doc import render

DOC = Path(__file__).resolve().parents[1] / "docs" / "settings.md"


def test_settings_doc_is_current() -> None:
    assert DOC.read_text(encoding="utf-8") == render(), (
        "regenerate: .venv/bin/python -m ragline.bootstrap.settings_doc > docs/settings.md"
    )


def test_every_setting_is_described() -> None:
    assert all("|  |\n" not in line + "\n" for line in render().splitlines()[12:])
