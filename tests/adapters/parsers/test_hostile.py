"""Every hostile file gets its verdict from the sandbox, and the next file still parses."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline.adapters.parsers.sandbox import SandboxedParser
from ragline.application.ports.parser import (
    ParseEngineFailed,
    ParseError,
    ParseOptions,
    UnsupportedFileType,
)
from tests.fixtures.hostile.make_hostile import EXPECTED, SINGLE_LINE_BYTES

VERDICTS: dict[str, type[ParseError] | None] = {
    "ok": None,
    "unsupported": UnsupportedFileType,
    "engine": ParseEngineFailed,
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
        if name.startswith("single-line"):
            assert len(parsed.markdown) == SINGLE_LINE_BYTES - SINGLE_LINE_BYTES % 27
        else:
            assert parsed.markdown == "" and parsed.warnings == ["empty document"]
    else:
        with pytest.raises(expected) as failure:
            sandbox.parse(source, source.suffix[1:], options)
        assert type(failure.value) is expected
        assert 0 < len(failure.value.reason) <= 300
    after = tmp_path / "next.md"
    after.write_text("# Next file\n")
    assert sandbox.parse(after, "md", options).title == "Next file"
