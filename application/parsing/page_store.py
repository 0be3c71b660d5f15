"""Per-page Markdown in object storage: the content of the parse cache.

Key scheme (bucket `parse_cache_bucket`, every key under `parse_cache_prefix`):

    <prefix>/pages/<sha256[:2]>/<sha256>/<tier>/<batch_id>.json   {"first": N, "pages": [...]}
    <prefix>/sources/<sha256[:2]>/<sha256>.<file_type>            (files `ragline parse` uploads)

One object per batch holds the Markdown of each of its pages (one write per batch, one read
per batch a document is read from: a page-per-object layout made reading a cached 40-page PDF
cost 40 round trips). A batch writes under its own id, so a forced re-parse never overwrites
the pages an older done batch still answers for; the read rule picks, per page, the batch to
read. Pages are written before the batch is marked done: a done batch's pages always exist.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Sequence
from pathlib import Path

from ragline.application.pipeline.workspace import Workspace
from ragline.application.ports.object_storage import ObjectStorage
from ragline.domain.parse_batch import ParseBatch

PAGES_JSON = "application/json"


class PageStore:
    def __init__(self, storage: ObjectStorage, workspace: Workspace, bucket: str, prefix: str):
        self._storage = storage
        self._workspace = workspace
        self.bucket = bucket
        self._prefix = prefix.strip("/")
        self._reads = itertools.count()  # temp names: concurrent reads never share a file
        self._bucket_ready = False

    def _key(self, rest: str) -> str:
        return f"{self._prefix}/{rest}" if self._prefix else rest

    def pages_key(self, batch: ParseBatch) -> str:
        sha = batch.sha256
        return self._key(f"pages/{sha[:2]}/{sha}/{batch.tier}/{batch.id}.json")

    def source_key(self, sha256: str, file_type: str) -> str:
        suffix = "".join(ch for ch in file_type.lower() if ch.isalnum())[:16] or "bin"
        return self._key(f"sources/{sha256[:2]}/{sha256}.{suffix}")

    async def ensure_bucket(self) -> None:
        if not self._bucket_ready:
            await self._storage.ensure_bucket(self.bucket)
            self._bucket_ready = True

    async def write(self, batch: ParseBatch, pages: Sequence[str]) -> None:
        """Every page of the batch's range, in order (`pages[0]` is its first page)."""
        if len(pages) != len(batch.page_range):
            raise ValueError(f"batch {batch.id}: {len(pages)} pages for {batch.page_range}")
        await self.ensure_bucket()
        body = json.dumps({"first": batch.page_range.first, "pages": list(pages)})
        await self._storage.put_bytes(
            self.bucket, self.pages_key(batch), body.encode("utf-8"), PAGES_JSON
        )

    async def read(self, batch: ParseBatch) -> dict[int, str]:
        """page -> Markdown of every page the batch holds."""
        with self._workspace.temp_file(f"pages-{batch.id}-{next(self._reads)}", "json") as path:
            await self._storage.get_to_file(self.bucket, self.pages_key(batch), path)
            return await asyncio.to_thread(_read, path)


def _read(path: Path) -> dict[int, str]:
    stored = json.loads(path.read_text(encoding="utf-8"))
    first = int(stored["first"])
    return {first + i: str(text) for i, text in enumerate(stored["pages"])}
