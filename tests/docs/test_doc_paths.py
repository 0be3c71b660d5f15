"""Every `docs/...` path the code and the docs mention exists: a reference to a design record
or a page that is not in the repository is a dead end for the reader (issue 22 item 6)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("domain", "application", "adapters", "bootstrap", "contracts", "testing", "tests",
           "benchmarks", "campaigns", "docs", "examples", ".ci")  # fmt: skip
SUFFIXES = {".py", ".md", ".toml", ".txt", ".sh", ".yaml", ".yml", ".json", ".cfg", ""}
# `docs/` at the start of a path: not inside a URL or another path (`/docs`, `x/docs/`)
MENTION = re.compile(r"(?<![\w/.\-])docs/[\w.\-/]*[\w]")


def mentions(text: str) -> list[str]:
    """The `docs/...` pages and folders in `text`, without a trailing `#anchor` (object keys
    such as "docs/big.bin" in the storage kits are not pages)."""
    found = [match.group(0) for match in MENTION.finditer(text)]
    return [path for path in found if path.endswith(".md") or "." not in path.rsplit("/", 1)[-1]]


def _files() -> list[Path]:
    """The repository's own files (`git ls-files`): caches a benchmark converted on this
    machine (benchmarks/.cache, ignored) are not the repository's references."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode("utf-8")
    found = []
    for name in listed.split("\0"):
        path = ROOT / name
        if not name or name.split("/", 1)[0] not in {*SCANNED, "README.md", "pyproject.toml"}:
            continue
        if path.is_file() and path.suffix in SUFFIXES:
            found.append(path)
    return found


def test_every_docs_path_mentioned_exists() -> None:
    missing = []
    for path in _files():
        for line_number, line in enumerate(_text(path).splitlines(), 1):
            for mention in mentions(line):
                if not (ROOT / mention).exists():
                    missing.append(f"{path.relative_to(ROOT)}:{line_number}: {mention}")
    assert missing == []


def test_mentions_are_found_and_urls_left_alone() -> None:
    text = (
        "see docs/design/0003-parse-cache.md, and (docs/pipeline.md#outbox-and-dead-letters);"
        " `docs/design/`; Swagger at /docs and https://example.org/docs/x.md; a/docs/b.md;"
        ' put_file(bucket, "docs/big.bin")'
    )
    assert mentions(text) == [
        "docs/design/0003-parse-cache.md",
        "docs/pipeline.md",
        "docs/design",
    ]
    assert (ROOT / "docs/design/0003-parse-cache.md").exists()
    assert not (ROOT / "docs" / "design" / "0099-missing.md").exists()
    assert OUTSIDE.search("the rule of SPEC §4.6") and OUTSIDE.search("ADR-0003's paths")
    assert not OUTSIDE.search("invariant 6 of docs/design/0002-run-state-machine.md")


# what the code cited before the design records were in the repository
OUTSIDE = re.compile(r"SPEC §|ADR-\d|[Ss]eed 0\d\d|LINK-\d")


def test_nothing_cites_a_document_outside_the_repository() -> None:
    cited = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()[:80]}"
        for path in _files()
        if path != Path(__file__).resolve()
        for number, line in enumerate(_text(path).splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert cited == []


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return ""
