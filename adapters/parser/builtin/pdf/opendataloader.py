"""The `opendataloader` PDF backend: the opendataloader-pdf Java CLI (jar shipped in the wheel).

The JVM runs as its own child process: heap capped with -Xmx from the memory limit, killed at
the wall-clock limit. It is never run under the sandbox's RLIMIT_AS, which a JVM cannot start in.
"""

from __future__ import annotations

import importlib.resources
import re
import resource
import shutil
import subprocess  # runs the java CLI  # nosec B404
from functools import cache
from pathlib import Path

from ragline.application.ports.parser import (
    InvalidFileContent,
    NoTextLayer,
    ParsedDocument,
    ParseEngineFailed,
    ParseLimits,
)
from ragline.domain.parse_batch import PageRange

_JAR = "opendataloader-pdf-cli.jar"
_SEPARATOR = "<!-- ragline-page %page-number% -->"
_SEPARATOR_LINE = re.compile(r"^<!-- ragline-page (\d+) -->\n?", re.MULTILINE)


def split_pages(markdown: str, pages: PageRange) -> tuple[str, ...]:
    """opendataloader's output with a separator before every page -> Markdown per page."""
    by_page: dict[int, str] = {}
    parts = _SEPARATOR_LINE.split(markdown)
    if len(parts) == 1:  # no separator at all: the whole text is the range's first page
        parts = ["", str(pages.first), markdown]
    for number, text in zip(parts[1::2], parts[2::2], strict=True):
        by_page[int(number)] = text.strip("\n") + "\n" if text.strip() else ""
    return tuple(by_page.get(page, "") for page in pages.pages())


@cache
def jar_path() -> Path | None:
    """The bundled jar when the package is installed and `java` is on PATH, else None."""
    if shutil.which("java") is None:
        return None
    try:
        ref = importlib.resources.files("opendataloader_pdf").joinpath("jar", _JAR)
    except ModuleNotFoundError:
        return None
    path = Path(str(ref))
    return path if path.is_file() else None


def _lift_address_space_limit() -> None:
    """Runs in the JVM child: the sandbox's RLIMIT_AS (soft) would stop the JVM from starting."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))


def parse_pdf_opendataloader(
    source: Path, limits: ParseLimits, temp_dir: Path, pages: PageRange
) -> ParsedDocument:
    jar = jar_path()
    if jar is None:
        raise ParseEngineFailed(
            "opendataloader backend unavailable (needs java and opendataloader-pdf)"
        )
    heap_mb = max(128, limits.max_memory_bytes // (2 * 1024**2))
    command = [
        "java", f"-Xmx{heap_mb}m", "-Djava.awt.headless=true", f"-Djava.io.tmpdir={temp_dir}",
        "-jar", str(jar), str(source), "--format", "markdown", "--image-output", "off",
        "--to-stdout", "--quiet", "--pages", str(pages), "--markdown-page-separator", _SEPARATOR,
    ]  # fmt: skip
    try:
        done = subprocess.run(  # our argv (java, our jar), no shell  # nosec B603
            command,
            capture_output=True,
            timeout=limits.max_seconds,
            check=False,
            stdin=subprocess.DEVNULL,
            preexec_fn=_lift_address_space_limit,
        )
    except subprocess.TimeoutExpired:
        raise ParseEngineFailed(f"opendataloader timed out after {limits.max_seconds:g}s") from None
    stderr = done.stderr.decode("utf-8", "replace")
    if done.returncode != 0:
        last = next((ln for ln in reversed(stderr.splitlines()) if ln.strip()), "no message")
        lowered = stderr.lower()
        if "password" in lowered or "encrypt" in lowered:
            raise InvalidFileContent("encrypted PDF (password required)")
        if "outofmemoryerror" in lowered:
            raise ParseEngineFailed(f"opendataloader ran out of memory (heap {heap_mb} MiB)")
        raise ParseEngineFailed(f"opendataloader failed (exit {done.returncode}): {last}"[:300])
    output = done.stdout.decode("utf-8", "replace")
    if len(output) > limits.max_output_chars:
        raise ParseEngineFailed(f"PDF text exceeds {limits.max_output_chars} characters")
    per_page = split_pages(output, pages)
    markdown = "\n".join(page for page in per_page if page)
    if not markdown.strip():
        raise NoTextLayer("no text layer (opendataloader reads text only; backend auto OCRs)")
    first = next((ln for ln in markdown.split("\n") if ln.startswith("#")), "")
    return ParsedDocument(
        markdown=markdown,
        title=first.lstrip("#").strip() or None,
        backend="opendataloader",
        pages=per_page,
    )
