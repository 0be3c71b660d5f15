"""The images drawn on PDF pages, as PNG, for the pipeline to upload and link.

Only when ParseOptions.extract_images is set (the task has image_bucket/image_prefix). An
image covering most of its page is the page itself (a scan, OCRed instead) and is skipped,
as are tiny ones (bullets, rules); at most MAX_IMAGES per parse.
"""

from __future__ import annotations

import io

import pypdfium2 as pdfium  # type: ignore[import-untyped]
import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]

MAX_IMAGES = 500
MIN_SIDE_PX = 32
PAGE_COVER = 0.9


def page_images(document: pdfium.PdfDocument, index: int, budget: int) -> list[tuple[str, bytes]]:
    """(link target, PNG bytes) of page `index` (0-based), named images/page-N-K.png."""
    found: list[tuple[str, bytes]] = []
    page = document[index]
    try:
        width, height = page.get_size()
        objects = page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,), max_depth=3)
        for number, image in enumerate(objects, start=1):
            if len(found) >= budget:
                break
            left, bottom, right, top = image.get_bounds()
            if (right - left) * (top - bottom) >= PAGE_COVER * width * height:
                continue
            try:
                picture = image.get_bitmap(render=False).to_pil()
            except (pdfium.PdfiumError, ValueError, OSError):
                continue  # an image pdfium cannot decode is left out, not fatal
            if min(picture.size) < MIN_SIDE_PX:
                continue
            out = io.BytesIO()
            picture.save(out, "PNG")
            found.append((f"images/page-{index + 1}-{number}.png", out.getvalue()))
    finally:
        page.close()
    return found


def with_images(
    document: pdfium.PdfDocument, pages: dict[int, str], indices: range
) -> tuple[dict[int, str], dict[str, bytes]]:
    """Each page's Markdown with its images linked at the end, and the images by target."""
    images: dict[str, bytes] = {}
    linked = dict(pages)
    for index in indices:
        found = page_images(document, index, MAX_IMAGES - len(images))
        if not found:
            continue
        links = "\n\n".join(f"![]({target})" for target, _ in found)
        text = linked.get(index, "")
        linked[index] = f"{text}\n{links}\n" if text else f"{links}\n"
        images.update(found)
    return linked, images
