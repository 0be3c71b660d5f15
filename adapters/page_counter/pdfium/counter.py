"""Count PDF pages with pypdfium2: opening a document reads its cross-reference table and
page tree only (no page is rendered or parsed), so counting costs little even for a big file.
"""

from __future__ import annotations

from pathlib import Path

from ragline.application.ports.parser import ParseEngineFailed

PAGED_TYPES = frozenset({"pdf"})


class PdfiumPageCounter:
    def count(self, source: Path, file_type: str) -> int:
        if file_type.lower() not in PAGED_TYPES:
            return 1
        import pypdfium2  # type: ignore[import-untyped]

        try:
            document = pypdfium2.PdfDocument(str(source))
        except pypdfium2.PdfiumError as error:
            raise ParseEngineFailed(f"cannot open the PDF to count its pages: {error}") from None
        try:
            return max(1, len(document))
        finally:
            document.close()
