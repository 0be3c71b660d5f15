"""What an uploaded file is, judged from its bytes; its name only picks among text formats.

The same rules as the parsers' own check (adapters/parser/builtin/content_check): a PDF has
`%PDF-` in its first KiB; docx, xlsx, pptx and epub are zips, told apart by the entry each
must hold; PNG, JPEG and TIFF by their magic. Bytes with none of these are text when their
head has no NUL and decodes as UTF-8 (or UTF-16 with a BOM); the name's extension then says
which text format (md, txt, html, csv, tsv, eml). A name that says one thing and bytes that
say another, an OLE file (legacy .doc/.xls or an encrypted OOXML), or a type no parser takes
is UnsupportedUpload (HTTP 415), before anything is stored.
"""

from __future__ import annotations

import zipfile
from pathlib import Path, PurePosixPath

HEAD = 4096
TEXT_TYPES = frozenset({"md", "markdown", "txt", "html", "htm", "csv", "tsv", "eml"})
ZIP_ENTRIES = (  # the entry that tells each zip format apart
    ("word/document.xml", "docx"),
    ("xl/workbook.xml", "xlsx"),
    ("ppt/presentation.xml", "pptx"),
)
SAME = {"jpeg": "jpg", "tif": "tiff", "htm": "html", "markdown": "md"}
OLE_MAGIC = bytes.fromhex("d0cf11e0a1b11ae1")


class UnsupportedUpload(ValueError):
    """The bytes are not a type ragline parses, or not the type the file's name says."""


def extension(filename: str) -> str:
    return PurePosixPath(filename.replace("\\", "/")).suffix.lower().lstrip(".")


def _binary_kind(head: bytes, path: Path) -> str | None:
    if b"%PDF-" in head[:1024]:
        return "pdf"
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return _zip_kind(path)
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if head.startswith(b"\xff\xd8\xff"):
        return "jpg"
    if head.startswith((b"II*\x00", b"MM\x00*")):
        return "tiff"
    if head.startswith(OLE_MAGIC):
        raise UnsupportedUpload(
            "an OLE compound file (legacy .doc/.xls/.ppt, or a password-protected Office "
            "file): save it as docx, xlsx or pptx"
        )
    return None


def _zip_kind(path: Path) -> str:
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            if "mimetype" in names and archive.read("mimetype").strip() == b"application/epub+zip":
                return "epub"
    except (zipfile.BadZipFile, OSError, KeyError) as error:
        raise UnsupportedUpload(f"a damaged zip archive ({error})") from None
    for entry, kind in ZIP_ENTRIES:
        if entry in names:
            return kind
    raise UnsupportedUpload("a zip archive that is not a docx, xlsx, pptx or epub")


def _looks_like_text(head: bytes) -> bool:
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return True  # UTF-16 with a BOM (its NULs are the encoding's)
    if b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as error:
        return error.start >= len(head) - 3  # cut inside the head's last character only
    return True


def sniff(path: Path, filename: str) -> str:
    """The file type to parse `path` as (a SUPPORTED_FILE_TYPES name), or UnsupportedUpload."""
    with path.open("rb") as stream:
        head = stream.read(HEAD)
    if not head:
        raise UnsupportedUpload("the file is empty")
    named = extension(filename)
    found = _binary_kind(head, path)
    if found is None:
        if not _looks_like_text(head):
            raise UnsupportedUpload(
                f"binary bytes of no type ragline parses (starts {head[:8].hex(' ')})"
            )
        if named not in TEXT_TYPES:
            shown = f"the name says {named}" if named else "the name has no extension"
            raise UnsupportedUpload(
                f"text bytes, but {shown}: name it .md, .txt, .html, .csv, .tsv or .eml"
            )
        return SAME.get(named, named)
    if named and SAME.get(named, named) != found:
        raise UnsupportedUpload(f"the bytes are {found}, the name says {named}")
    return found
