"""Zip-bomb guard for OOXML containers, checked on the central directory BEFORE any inflation.

Python's zipfile never inflates an entry past its declared size (it stops at file_size and
checks the CRC), so bounding the declared sizes bounds the work done by python-docx.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path

from ragline.application.ports.parser import InvalidFileContent


@dataclass(frozen=True, slots=True)
class ZipBudget:
    max_total_uncompressed: int = 512 * 1024**2
    max_ratio: float = 200.0  # real OOXML parts compress 5-30x; bombs go far beyond 1000x
    ratio_applies_above: int = 1024**2  # tiny entries may compress absurdly well, harmlessly
    max_entries: int = 20_000


_OLE_MAGIC = bytes.fromhex("d0cf11e0a1b11ae1")


def _is_ole(source: Path) -> bool:
    """Encrypted OOXML and the pre-2007 binary formats are OLE compound files, not zips."""
    try:
        with source.open("rb") as handle:
            return handle.read(8) == _OLE_MAGIC
    except OSError:
        return False


def check_zip(source: Path, budget: ZipBudget, what: str) -> None:
    """Raise InvalidFileContent for a non-zip, or a zip whose inflated size would be hostile
    (a zip bomb is refused the same way on every retry: not recoverable)."""
    try:
        with zipfile.ZipFile(source) as archive:
            entries = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        if _is_ole(source):
            raise InvalidFileContent(
                f"not a valid {what}: an OLE compound file (password-protected, or the legacy "
                "binary .doc/.xls/.ppt format renamed)"
            ) from None
        raise InvalidFileContent(f"not a valid {what} (corrupt zip container: {exc})") from None
    if len(entries) > budget.max_entries:
        raise InvalidFileContent(
            f"{what} has {len(entries)} zip entries (limit {budget.max_entries})"
        )
    total = 0
    for entry in entries:
        total += entry.file_size
        if entry.file_size > budget.ratio_applies_above:
            ratio = entry.file_size / max(entry.compress_size, 1)
            if ratio > budget.max_ratio:
                raise InvalidFileContent(
                    f"zip bomb suspected in {what}: entry {entry.filename!r} inflates "
                    f"{ratio:.0f}x to {entry.file_size} bytes"
                )
    if total > budget.max_total_uncompressed:
        raise InvalidFileContent(
            f"zip bomb suspected in {what}: {total} bytes uncompressed "
            f"(limit {budget.max_total_uncompressed})"
        )
