"""MinerU's result zip -> Markdown and images, read in memory with bounds.

The archive comes from the network: its central directory is checked before anything is
inflated (adapters/parser/builtin/zip_guard: sizes, ratio, entry count), entry names must be plain
relative paths (no absolute path, no `..`, no backslash, no drive), and only the Markdown
(`full.md`, else the one `.md` file) and `images/*` are read.
"""

from __future__ import annotations

import posixpath
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from ragline.adapters.parser.builtin.zip_guard import ZipBudget, check_zip
from ragline.application.ports.parser import InvalidFileContent, ParseEngineFailed

RESULT_BUDGET = ZipBudget(max_total_uncompressed=512 * 1024**2, max_entries=20_000)
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".gif", ".webp")


@dataclass
class MineruResult:
    markdown: str
    images: dict[str, bytes] = field(default_factory=dict)  # archive path -> bytes


def _safe_name(name: str) -> str:
    """The entry name if it is a plain relative path inside the archive, else fail."""
    normal = posixpath.normpath(name)
    if (
        "\\" in name
        or name.startswith("/")
        or (len(name) > 1 and name[1] == ":")
        or normal == ".."
        or normal.startswith("../")
        or "\x00" in name
    ):
        raise ParseEngineFailed(f"mineru result archive has an unsafe entry name {name!r}"[:300])
    return normal


def read_result(path: Path, budget: ZipBudget = RESULT_BUDGET) -> MineruResult:
    try:
        check_zip(path, budget, "mineru result archive")
    except InvalidFileContent as exc:  # the service's answer is bad, not the user's file
        raise ParseEngineFailed(exc.reason) from None
    try:
        return _read(path)
    except (zipfile.BadZipFile, EOFError, NotImplementedError) as exc:
        raise ParseEngineFailed(f"corrupt mineru result archive ({exc})"[:300]) from None


def _read(path: Path) -> MineruResult:
    with zipfile.ZipFile(path) as archive:
        names = {_safe_name(info.filename): info for info in archive.infolist()}
        markdown_names = [n for n in names if n.endswith(".md") and not names[n].is_dir()]
        chosen = next((n for n in markdown_names if posixpath.basename(n) == "full.md"), None)
        if chosen is None and len(markdown_names) == 1:
            chosen = markdown_names[0]
        if chosen is None:
            found = ", ".join(sorted(markdown_names)[:5]) or "none"
            raise ParseEngineFailed(f"mineru result archive has no full.md (Markdown: {found})")
        try:
            markdown = archive.read(names[chosen]).decode("utf-8")
        except UnicodeDecodeError:
            raise ParseEngineFailed("mineru Markdown is not UTF-8") from None
        base = posixpath.dirname(chosen)
        images = {
            posixpath.relpath(name, base) if base else name: archive.read(info)
            for name, info in names.items()
            if not info.is_dir()
            and name.lower().endswith(IMAGE_SUFFIXES)
            and "/images/" in f"/{name}"
        }
    return MineruResult(markdown=markdown, images=images)
