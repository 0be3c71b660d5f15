"""eml (MIME email) -> Markdown with the standard library's email package.

The message is a `#` section titled by its subject. A front block gives From, To, Cc, Date
and the attachment names; then the body (text/plain preferred, else the HTML part through the
HTML parser, which drops scripts, styles, forms and hidden elements). Each attachment that
parses is a sub-section `## Attachment: NAME` whose own headings are shifted below it; an
attached message (message/rfc822 or a .eml file) is a sub-section titled by its subject, with
its own attachments one level deeper. Attachments go through the parser registry by their
extension (or their MIME type), inside the same process and so within the same sandbox
limits; one that cannot be parsed (an image before the OCR tier, an unknown type, a corrupt
file) is a warning with its failure code, and the message itself still parses. Nesting depth
and the number of MIME parts are bounded: past them the whole parse fails.
"""

from __future__ import annotations

import mimetypes
import re
import tempfile
from collections.abc import Callable
from email import policy
from email.message import EmailMessage, Message, MIMEPart
from email.parser import BytesParser
from pathlib import Path

from selectolax.lexbor import LexborHTMLParser

from ragline.adapters.parser.builtin.html import MAX_NESTING, html_to_markdown, nesting_depth
from ragline.adapters.parser.builtin.markdown_escape import escape_block_markers
from ragline.adapters.parser.builtin.output_budget import OutputBudget
from ragline.adapters.parser.builtin.text_decoding import normalise_newlines, read_bounded
from ragline.application.ports.parser import (
    ParsedDocument,
    ParseEngineFailed,
    ParseError,
    ParseOptions,
    UnsupportedFileType,
)

MAX_DEPTH = 3
"""Attached messages inside attached messages: real mail forwards a few levels at most."""
MAX_PARTS = 500
"""MIME parts over the whole message, nested messages included."""
_FRONT_HEADERS = ("From", "To", "Cc", "Date")
_HEADING = re.compile(r" {0,3}(#{1,6})(?=[ \t\n]|$)")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_MIME_TYPES = {
    "text/plain": "txt",
    "text/markdown": "md",
    "text/html": "html",
    "text/csv": "csv",
    "text/tab-separated-values": "tsv",
    "application/pdf": "pdf",
    "image/jpeg": "jpg",
}

AttachmentParser = Callable[[Path, str, ParseOptions], ParsedDocument]


class EmailParser:
    """The eml format parser; `parse_attachment` is the registry that parses attachments."""

    def __init__(self, parse_attachment: AttachmentParser) -> None:
        self._parse_attachment = parse_attachment

    def __call__(self, source: Path, file_type: str, options: ParseOptions) -> ParsedDocument:
        read_bounded(source.stat().st_size, options.limits.max_output_chars, file_type)
        with source.open("rb") as handle:
            message = BytesParser(policy=policy.default).parse(handle)
        if not isinstance(message, EmailMessage) or not _looks_like_mail(message):
            raise UnsupportedFileType(f"not a MIME message (no headers) in a .{file_type} file")
        render = _Render(self._parse_attachment, options, file_type)
        with tempfile.TemporaryDirectory(prefix="ragline-eml-") as scratch:
            render.scratch = Path(scratch)
            markdown = render.message(message, depth=0)
        subject = _header(message, "Subject")
        return ParsedDocument(markdown=markdown, title=subject or None, warnings=render.warnings)


def _looks_like_mail(message: EmailMessage) -> bool:
    return any(message.get(name) is not None for name in ("From", "To", "Subject", "Date"))


def _header(message: Message, name: str) -> str:
    try:
        value = message.get(name)
    except (ValueError, IndexError, TypeError):  # a malformed header the policy cannot decode
        value = message.get_all(name, failobj=[""])[0] if hasattr(message, "get_all") else ""
    return " ".join(str(value or "").split())


class _Render:
    def __init__(self, parse: AttachmentParser, options: ParseOptions, file_type: str) -> None:
        self._parse = parse
        self._options = options
        self._file_type = file_type
        self._budget = OutputBudget(options.limits.max_output_chars)
        self._parts = 0
        self.warnings: list[str] = []
        self.scratch = Path(tempfile.gettempdir())

    def message(self, message: EmailMessage, depth: int, *, count: bool = True) -> str:
        """`count=False` for a message/rfc822 part: its parent's walk already counted it."""
        level = min(depth + 1, 6)
        if count:
            self._count(sum(1 for _ in message.walk()))
        subject = _header(message, "Subject") or "(no subject)"
        front = [
            f"{name}: {_header(message, name)}" for name in _FRONT_HEADERS if _header(message, name)
        ]
        attachments = list(message.iter_attachments())
        names = [_display_name(part, i) for i, part in enumerate(attachments, start=1)]
        if names:
            front.append("Attachments: " + ", ".join(names))
        blocks = [f"{'#' * level} {subject}"]
        if front:
            blocks.append("  \n".join(escape_block_markers(line) for line in front))
        body = shift_headings(self._body(message), level)
        if body:
            blocks.append(body)
        for part, name in zip(attachments, names, strict=True):
            section = self._attachment(part, name, depth)
            if section:
                blocks.append(section)
        text = "\n\n".join(blocks) + "\n"
        self._budget.spend(len(text), self._file_type)
        return text

    def _count(self, parts: int) -> None:
        self._parts += parts
        if self._parts > MAX_PARTS:
            raise ParseEngineFailed(f"message has more than {MAX_PARTS} MIME parts")

    def _body(self, message: EmailMessage) -> str:
        part = message.get_body(preferencelist=("plain", "html"))
        if part is None:
            return ""
        text = _text_of(part)
        if part.get_content_type() == "text/html":
            data = text.encode("utf-8", errors="replace")
            if nesting_depth(data, MAX_NESTING) > MAX_NESTING:
                raise ParseEngineFailed(f"HTML body nesting deeper than {MAX_NESTING} elements")
            markdown, _ = html_to_markdown(LexborHTMLParser(text))
            return markdown.strip()
        return escape_block_markers(normalise_newlines(text).strip())

    def _attachment(self, part: EmailMessage, name: str, depth: int) -> str:
        level = min(depth + 2, 6)
        if part.get_content_type() == "message/rfc822":
            payload = part.get_payload()
            inner = payload[0] if isinstance(payload, list) and payload else None
            if not isinstance(inner, EmailMessage):
                self.warnings.append(f"attachment {name!r}: empty attached message")
                return ""
            return self._nested(inner, depth, count=False)
        data = part.get_payload(decode=True)
        if not isinstance(data, bytes) or not data:
            self.warnings.append(f"attachment {name!r}: empty")
            return ""
        kind = _kind_of(part, name)
        if kind == "eml":
            inner_message = BytesParser(policy=policy.default).parsebytes(data)
            if isinstance(inner_message, EmailMessage) and _looks_like_mail(inner_message):
                return self._nested(inner_message, depth)
        path = self.scratch / f"attachment.{kind or 'bin'}"
        path.write_bytes(data)
        try:
            parsed = self._parse(path, kind, self._options)
        except ParseError as error:
            code = error.failure_code.value
            self.warnings.append(f"attachment {name!r} not parsed: {code}: {error.reason}")
            return ""
        finally:
            path.unlink(missing_ok=True)
        self.warnings.extend(f"attachment {name!r}: {w}" for w in parsed.warnings)
        content = shift_headings(parsed.markdown.strip(), level)
        return f"{'#' * level} Attachment: {name}\n\n{content}".rstrip()

    def _nested(self, inner: EmailMessage, depth: int, *, count: bool = True) -> str:
        if depth + 1 > MAX_DEPTH:
            raise ParseEngineFailed(f"attached messages nested deeper than {MAX_DEPTH} levels")
        return self.message(inner, depth + 1, count=count).rstrip()


def _text_of(part: MIMEPart) -> str:
    try:
        content = part.get_content()
    except (LookupError, UnicodeError, ValueError):  # unknown or lying charset
        raw = part.get_payload(decode=True)
        content = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else ""
    return content if isinstance(content, str) else ""


def _display_name(part: EmailMessage, index: int) -> str:
    name = " ".join(str(part.get_filename() or "").split())
    if not name and part.get_content_type() == "message/rfc822":
        payload = part.get_payload()
        inner = payload[0] if isinstance(payload, list) and payload else None
        name = _header(inner, "Subject") if isinstance(inner, Message) else ""
    return name or f"part {index} ({part.get_content_type()})"


def _kind_of(part: EmailMessage, name: str) -> str:
    """The attachment's file type: its name's extension, else one from its MIME type."""
    suffix = Path(name).suffix.lower().lstrip(".") if "." in name else ""
    if not suffix:
        content_type = part.get_content_type()
        suffix = _MIME_TYPES.get(content_type) or (
            (mimetypes.guess_extension(content_type) or "").lstrip(".")
        )
    return "".join(c for c in suffix if c.isalnum())[:16]


def shift_headings(markdown: str, by: int) -> str:
    """Push every ATX heading outside fenced code `by` levels down (at most level 6), so a
    parsed attachment nests under its own heading."""
    if by <= 0 or "#" not in markdown:
        return markdown
    out: list[str] = []
    fence = ""
    for line in markdown.splitlines(keepends=True):
        opened = _FENCE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = ""
            out.append(line)
            continue
        if opened:
            fence = opened.group(1)
            out.append(line)
            continue
        heading = _HEADING.match(line)
        if heading:
            level = min(len(heading.group(1)) + by, 6)
            line = "#" * level + line[heading.end() :]
        out.append(line)
    return "".join(out)
