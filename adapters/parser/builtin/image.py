"""Images (png, jpg/jpeg, tif/tiff): OCR only, so the quality tier only.

One section per image; a multi-frame TIFF is paged, one `## Page N` section per frame (a
page range picks frames). The basic tier has no text layer to read: NoTextLayer.
"""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

from PIL import Image, ImageSequence, UnidentifiedImageError

from ragline.adapters.parser.builtin.pdf.ocr_pages import text_to_markdown
from ragline.application.ports.ocr import OcrFailed, PageOcr
from ragline.application.ports.parser import (
    NoTextLayer,
    ParsedDocument,
    ParseEngineFailed,
    ParseOptions,
    UnsupportedFileType,
)
from ragline.domain.parse_batch import PageRange, ParseTier

MAX_PIXELS = 80_000_000  # per frame; Pillow's own bomb check is a warning below 2x its limit
MAX_FRAMES = 1000
_FORMATS = {"png": {"PNG"}, "jpg": {"JPEG", "MPO"}, "jpeg": {"JPEG", "MPO"}}
_FORMATS |= {"tif": {"TIFF"}, "tiff": {"TIFF"}}


def parse_image(
    source: Path, file_type: str, options: ParseOptions, ocr: PageOcr | None = None
) -> ParsedDocument:
    if options.tier is ParseTier.BASIC:
        raise NoTextLayer("an image has no text layer: parse it at the quality tier (OCR)")
    if ocr is None or not ocr.available():
        raise ParseEngineFailed("no OCR engine is installed (tesseract-ocr with chi_sim and eng)")
    with tempfile.TemporaryDirectory(prefix="ragline-img-") as work_dir:
        texts, frame_count = _ocr_frames(source, file_type, options, ocr, Path(work_dir))
    pages: tuple[str, ...]
    if frame_count == 1:
        pages = (texts[0],)
        markdown = texts[0]
    else:
        first = options.page_range.first if options.page_range else 1
        pages = tuple(
            f"## Page {first + i}\n\n{text}" if text else "" for i, text in enumerate(texts)
        )
        markdown = "\n".join(page for page in pages if page)
    if not markdown.strip():
        raise NoTextLayer("OCR read no text in the image")
    return ParsedDocument(
        markdown=markdown,
        page_count=frame_count,
        warnings=[f"OCR: {len(texts)} of {frame_count} frames"] if frame_count > 1 else [],
        backend=ocr.engine,
        pages=pages,
    )


def _ocr_frames(
    source: Path, file_type: str, options: ParseOptions, ocr: PageOcr, work_dir: Path
) -> tuple[list[str], int]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(source)
    except (UnidentifiedImageError, Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise UnsupportedFileType(f"not a readable .{file_type} image") from None
    with image:
        if image.format not in _FORMATS.get(file_type, set()):
            raise UnsupportedFileType(
                f"the bytes are {image.format or 'unknown'}, not .{file_type}"
            )
        frame_count = getattr(image, "n_frames", 1)
        if frame_count > MAX_FRAMES:
            raise ParseEngineFailed(f"{frame_count} frames exceed the limit of {MAX_FRAMES}")
        wanted = _frames(options.page_range, frame_count)
        texts: list[str] = []
        for number, frame in enumerate(ImageSequence.Iterator(image), start=1):
            if number not in wanted:
                continue
            if frame.width * frame.height > MAX_PIXELS:
                raise ParseEngineFailed(
                    f"frame {number} has {frame.width}x{frame.height} pixels (limit {MAX_PIXELS:,})"
                )
            target = work_dir / f"frame-{number}.png"
            frame.convert("L").save(target, "PNG")
            try:
                texts.append(text_to_markdown(ocr.recognise(target, options.limits.max_seconds)))
            except OcrFailed as exc:
                raise ParseEngineFailed(f"OCR of frame {number}: {exc.reason}"[:300]) from None
            finally:
                target.unlink(missing_ok=True)
    return texts, frame_count


def _frames(page_range: PageRange | None, frame_count: int) -> range:
    if page_range is None:
        return range(1, frame_count + 1)
    if page_range.first > frame_count:
        raise ParseEngineFailed(f"page range {page_range} starts past the {frame_count} frames")
    return range(page_range.first, min(page_range.last, frame_count) + 1)
