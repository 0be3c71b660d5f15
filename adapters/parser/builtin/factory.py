"""What bootstrap calls: the sandboxed Parser for untrusted files, or the in-process one."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ragline.adapters.parser.builtin.sandbox import SandboxedParser
from ragline.application.ports.parser import Parser


def build_parser(
    sandbox: bool = True,
    max_workers: int = 1,
    hidden: Iterable[Path] = (),
    readable: Iterable[Path] = (),
    text_dir: Path | None = None,
    prestart_memory_bytes: int | None = None,
) -> Parser:
    """sandbox=True (default): warm worker processes with memory/time bounds, a scrubbed
    environment, and `hidden` files unreadable. False: parse in the calling process
    (trusted input, tests, debugging); the output limit still applies. text_dir: where the
    workers write the parsed text for the parent to read (the workspace).
    prestart_memory_bytes: start the first sandbox worker now, in the background, with this
    memory limit (the one parses will ask for)."""
    if sandbox:
        return SandboxedParser(
            max_workers=max_workers,
            hidden=hidden,
            readable=readable,
            text_dir=text_dir,
            prestart_memory_bytes=prestart_memory_bytes,
        )
    # imported here: the format parsers (pptx, docx, pdfium, lxml...) load only in the
    # process that parses; a sandboxed pipeline's own start-up does not pay for them
    from ragline.adapters.parser.builtin.registry import ParserRegistry

    return ParserRegistry()
