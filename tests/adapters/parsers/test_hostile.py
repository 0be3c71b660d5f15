"""Every hostile file gets its verdict from the sandbox, and the next file still parses."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline.adapters.parser.builtin.sandbox import SandboxedParser
from ragline.application.ports.parser import (
    InvalidFileContent,
    NoTextLayer,
    ParseEngineFailed,
    ParseError,
    ParseOptions,
    UnsupportedFileType,
)
from ragline.testing.files.hostile import EXPECTED, write_hostile_files

VERDICTS: dict[str, type[ParseError] | None] = {
    "ok": None,
    "unsupported": UnsupportedFileType,
    "invalid": InvalidFileContent,
    "engine": ParseEngineFailed,
    "no_text": NoTextLayer,
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_hostile_file_verdict(
    sandbox: SandboxedParser, hostile_files: dict[str, Path], name: str, tmp_path: Path
) -> None:
    source = hostile_files[name]
    options = ParseOptions()  # default backend (auto) and default limits, as the pipeline runs
    expected = VERDICTS[EXPECTED[name]]
    if expected is None:
        parsed = sandbox.parse(source, source.suffix[1:], options)
        assert parsed.markdown == "" and parsed.warnings == ["empty document"]
    else:
        with pytest.raises(expected) as failure:
            sandbox.parse(source, source.suffix[1:], options)
        assert type(failure.value) is expected
        assert 0 < len(failure.value.reason) <= 300
    after = tmp_path / "next.md"
    after.write_text("# Next file\n")
    assert sandbox.parse(after, "md", options).title == "Next file"


def test_long_lines_are_refused_only_past_the_limit(tmp_path: Path) -> None:
    """A 50 MB single line is not prose; a big file of ordinary lines is."""
    from ragline.adapters.parser.builtin.registry import ParserRegistry
    from ragline.application.ports.parser import ParseLimits

    options = ParseOptions(limits=ParseLimits(max_line_chars=1000))
    fine = tmp_path / "fine.txt"
    fine.write_text(("x" * 1000 + "\n") * 50, encoding="utf-8")
    assert len(ParserRegistry().parse(fine, "txt", options).markdown) == 1001 * 50
    long = tmp_path / "long.md"
    long.write_text("ok\n" + "y" * 1001 + "\nok\n", encoding="utf-8")
    with pytest.raises(ParseEngineFailed, match="longer than 1000"):
        ParserRegistry().parse(long, "md", options)


@pytest.mark.parametrize(
    "name", ["zip-bomb.docx", "single-line.txt", "random-bytes.pdf", "deeply-nested.html"]
)
def test_campaign_case_fails_alone_within_its_limits(tmp_path: Path, name: str) -> None:
    """The hostile files campaign (campaigns/hostile_files), reduced: its own
    per-case code, a 2 MB single line instead of 50 MB."""
    from campaigns.hostile_files.cases import judge, run_case

    files = write_hostile_files(tmp_path / "hostile", single_line_bytes=2 * 1024**2)
    row = run_case(files[name])
    assert judge(row, EXPECTED[name]) == [], row
    assert row["code"] != "PARSE_ENGINE_FAILED" or EXPECTED[name] == "engine"
