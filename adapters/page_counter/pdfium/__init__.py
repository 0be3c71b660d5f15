"""PageCounter on pypdfium2 (PDF page count from the document's page tree); one page for
every other format."""

from ragline.adapters.page_counter.pdfium.counter import PdfiumPageCounter

__all__ = ["PdfiumPageCounter"]
