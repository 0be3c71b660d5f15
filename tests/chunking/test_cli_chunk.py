"""`ragline chunk FILE [--plan NAME] [--json]` through the real wiring (bootstrap container)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ragline.adapters.inbound.cli import build_cli
from ragline.bootstrap.cli import _entry

MD = "# Guide\n\nIntro text. 中文句子。\n\n## Part\n\n" + "Words and more words. " * 40 + "\n"


def run(tmp_path: Path, *args: str) -> tuple[int, str]:
    app = build_cli(_entry)
    result = CliRunner().invoke(app, ["--data-dir", str(tmp_path / "data"), "chunk", *args])
    return result.exit_code, result.stdout + (result.stderr if result.stderr_bytes else "")


def test_json_preview_has_the_documented_shape(tmp_path: Path) -> None:
    doc = tmp_path / "guide.md"
    doc.write_text(MD, encoding="utf-8")
    code, out = run(tmp_path, str(doc), "--json")
    assert code == 0, out
    data = json.loads(out)
    assert set(data) == {"markdown", "parents"}
    assert data["markdown"] == MD
    assert len(data["parents"]) == 2
    for p in data["parents"]:
        assert set(p) == {"text", "span", "section_path", "source_type", "children"}
        s, e = p["span"]
        assert MD[s:e] == p["text"]
        for c in p["children"]:
            assert set(c) == {"text", "span", "source_type"}
            cs, ce = c["span"]
            assert MD[cs:ce] == c["text"] and s <= cs <= ce <= e
    assert data["parents"][1]["section_path"] == ["Guide", "Part"]
    assert len(data["parents"][1]["children"]) > 1


def test_plans_change_the_cut_and_unknown_plans_are_refused(tmp_path: Path) -> None:
    doc = tmp_path / "guide.md"
    doc.write_text(MD, encoding="utf-8")
    fine = json.loads(run(tmp_path, str(doc), "--plan", "fine", "--json")[1])
    coarse = json.loads(run(tmp_path, str(doc), "--plan", "coarse", "--json")[1])
    count = lambda d: sum(len(p["children"]) for p in d["parents"])  # noqa: E731
    assert count(fine) > count(coarse)
    code, out = run(tmp_path, str(doc), "--plan", "nope")
    assert code != 0 and "known" in out


def test_table_output_and_unsupported_formats(tmp_path: Path) -> None:
    doc = tmp_path / "guide.md"
    doc.write_text(MD, encoding="utf-8")
    code, out = run(tmp_path, str(doc))
    assert code == 0 and "Guide / Part" in out
    pdf = tmp_path / "x.pdf"
    pdf.write_bytes(b"%PDF-1.4")
    code, out = run(tmp_path, str(pdf))
    assert code != 0 and "parser" in out


SAMPLES = Path(__file__).resolve().parents[2] / "examples" / "docs"
# sample -> a section path its preview must show (the format's own structure)
FORMAT_SECTIONS = {
    "composting-at-home.pptx": ["Greens and Browns", "Speaker notes"],
    "bicycle-maintenance.xlsx": ["Tyre Pressure"],
    "houseplant-care.csv": [],
    "sailing-knots.tsv": [],
    "lighthouse-keeper.epub": ["Fog Signals"],
    "office-move.eml": [
        "Office move to the fourth floor",
        "Attachment: parking-during-the-move.txt",
    ],
}


def test_json_preview_of_every_new_format(tmp_path: Path) -> None:
    for name, section_path in FORMAT_SECTIONS.items():
        code, out = run(tmp_path, str(SAMPLES / name), "--json")
        assert code == 0, (name, out)
        data = json.loads(out)
        md = data["markdown"]
        assert data["parents"], name
        assert section_path in [p["section_path"] for p in data["parents"]], (name, data)
        for p in data["parents"]:
            s, e = p["span"]
            assert md[s:e] == p["text"]


def test_an_unknown_type_is_still_refused(tmp_path: Path) -> None:
    odd = tmp_path / "notes.xyz"
    odd.write_text("some text\n", encoding="utf-8")
    code, out = run(tmp_path, str(odd))
    assert code != 0 and "UNSUPPORTED_FILE_TYPE" in out, out
