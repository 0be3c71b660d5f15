"""The images a parser returned (PDF, DOCX, MinerU): uploaded under the task's
image_bucket/image_prefix, and the Markdown's links rewritten to the object keys.

Without both fields the parser is not asked for images at all (today's behaviour).
"""

from __future__ import annotations

import posixpath

from ragline.application.error_text import StageFailure, describe
from ragline.application.ports.object_storage import ObjectStorage, StorageError
from ragline.application.ports.parser import ParsedDocument
from ragline.application.tasks import ParseTaskCommand
from ragline.domain.parse_run import FailureCode

_CONTENT_TYPES = {
    ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
    ".bmp": "image/bmp", ".webp": "image/webp",
}  # fmt: skip


def wants_images(task: ParseTaskCommand) -> bool:
    return bool(task.image_bucket and task.image_prefix)


def image_key(prefix: str, target: str) -> str:
    """`images/page-1-2.png` under `images/2026/doc-1/` -> `images/2026/doc-1/page-1-2.png`."""
    name = target[len("images/") :] if target.startswith("images/") else target
    return prefix.rstrip("/") + "/" + posixpath.normpath(name).lstrip("./")


async def publish_images(
    storage: ObjectStorage, task: ParseTaskCommand, document: ParsedDocument
) -> str:
    """Upload every image and link it by its object key; the Markdown to store."""
    markdown = document.markdown
    if not document.images or not wants_images(task):
        return markdown
    bucket, prefix = task.image_bucket or "", task.image_prefix or ""
    for target, data in document.images.items():
        key = image_key(prefix, target)
        kind = _CONTENT_TYPES.get(posixpath.splitext(target)[1].lower(), "application/octet-stream")
        try:
            await storage.put_bytes(bucket, key, data, kind)
        except (StorageError, OSError) as error:
            raise StageFailure(
                FailureCode.PARSED_FILE_UPLOAD_FAILED, f"image {bucket}/{key}: {describe(error)}"
            ) from error
        markdown = markdown.replace(f"]({target})", f"]({key})")
    return markdown
