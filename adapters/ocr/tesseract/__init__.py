"""The PageOcr port on the tesseract CLI (Debian tesseract-ocr with chi_sim + eng)."""

from ragline.adapters.ocr.tesseract.ocr import TesseractOcr

__all__ = ["TesseractOcr"]
