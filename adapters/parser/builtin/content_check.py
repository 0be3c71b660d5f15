"""Is a file what its type says? Magic bytes and container checks, before any parser runs.

A PDF starts with ``%PDF-`` (readers tolerate junk before it, within the first KiB); an OOXML
file (docx, xlsx, pptx) and an epub are zips. Bytes that fail this are InvalidFileContent:
the same bytes fail the same way on every retry. Text formats (md, txt, html, csv, tsv, eml)
have no magic: any bytes could be text, so they are judged while decoding (NUL bytes:
UnsupportedFileType; undecodable: InvalidFileContent) and never here.
"""

from __future__ import annotations

from pathlib import Path

from ragline.application.ports.parser import InvalidFileContent

_PDF_MAGIC = b"%PDF-"
_PDF_MAGIC_WINDOW = 1024
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")  # a local file header, or an empty archive
_ZIP_TYPES = frozenset({"docx", "xlsx", "pptx", "epub"})
_OLE_MAGIC = bytes.fromhex("d0cf11e0a1b11ae1")


def check_content(source: Path, file_type: str) -> None:
    """Raise InvalidFileContent when the leading bytes contradict `file_type`."""
    if file_type == "pdf":
        with source.open("rb") as stream:
            head = stream.read(_PDF_MAGIC_WINDOW)
        if _PDF_MAGIC not in head:
            raise InvalidFileContent(_describe("not a PDF (no %PDF- header)", head))
    elif file_type in _ZIP_TYPES:
        with source.open("rb") as stream:
            head = stream.read(8)
        if not head.startswith(_ZIP_MAGICS):
            raise InvalidFileContent(
                _describe(f"not a {file_type.upper()} (not a zip container)", head)
            )


def _describe(what: str, head: bytes) -> str:
    if not head:
        return f"{what}: the file is empty"
    if head.startswith(_PDF_MAGIC):
        return f"{what}: the bytes are a PDF"
    if head.startswith(_ZIP_MAGICS):
        return f"{what}: the bytes are a zip archive"
    if head.startswith(_OLE_MAGIC[: len(head)]) and len(head) >= 4:
        return (
            f"{what}: an OLE compound file (password-protected, or the legacy binary "
            ".doc/.xls/.ppt format renamed)"
        )
    return f"{what}: starts with {head[:8].hex(' ')}"
