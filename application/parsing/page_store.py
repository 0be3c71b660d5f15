"""Per-page Markdown in object storage: the content of the parse cache.

Key scheme (bucket `parse_cache_bucket`, every key under `parse_cache_prefix`):

    <prefix>/pages/<sha256[:2]>/<sha256>/<tier>/<batch_id>.json   {"first": N, "pages": [...]}
    <prefix>/sources/<sha256[:2]>/<sha256>.<file_type>            (files `ragline parse` uploads)

One object per batch holds the Markdown of each of its pages (one write per batch, one read
per batch a document is read from: a page-per-object layout made reading a cached 40-page PDF
cost 40 round trips). A batch writes under its own id, so a forced re-parse never overwrites
the pages an older done batch still answers for; the read rule picks, per page, the batch to
read. Pages are written before the batch is marked done: a done batch's pages always exist.

The object is written through a workspace file, a slice of a page at a time (issue 24): a
100 MB page as one JSON string and then as bytes held the document's text twice more.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Sequence
from pathlib import Path

from ragline.application.parsing.parsed_text import TextPart, read_pieces
from ragline.application.ports.object_storage import ObjectStorage
from ragline.application.ports.parser import ParsedText
from ragline.application.workspace import Workspace
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
        name = f"pages-out-{batch.id}-{next(self._reads)}"
        with self._workspace.temp_file(name, "json") as path:
            await asyncio.to_thread(_write, path, batch.page_range.first, pages)
            await self._storage.put_file(self.bucket, self.pages_key(batch), path, PAGES_JSON)

    async def write_parts(
        self, batch: ParseBatch, parsed: ParsedText, pages: Sequence[TextPart | None]
    ) -> None:
        """`write`, each page read from its part of the parse's text file (None: empty), a
        block at a time: the object is byte for byte what `write` makes of the same pages."""
        if len(pages) != len(batch.page_range):
            raise ValueError(f"batch {batch.id}: {len(pages)} pages for {batch.page_range}")
        await self.ensure_bucket()
        name = f"pages-out-{batch.id}-{next(self._reads)}"
        with self._workspace.temp_file(name, "json") as path:
            await asyncio.to_thread(_write_parts, path, batch.page_range.first, parsed.path, pages)
            await self._storage.put_file(self.bucket, self.pages_key(batch), path, PAGES_JSON)

    async def read(self, batch: ParseBatch) -> dict[int, str]:
        """page -> Markdown of every page the batch holds."""
        with self._workspace.temp_file(f"pages-{batch.id}-{next(self._reads)}", "json") as path:
            await self._storage.get_to_file(self.bucket, self.pages_key(batch), path)
            return await asyncio.to_thread(_read, path)


_SLICE = 1 << 20  # characters escaped at a time


def _write(path: Path, first: int, pages: Sequence[str]) -> None:
    """`{"first": N, "pages": [...]}`, byte for byte what json.dumps writes (ASCII: every
    character is escaped on its own, so a page is escaped slice by slice)."""
    with path.open("w", encoding="ascii") as out:
        out.write(f'{{"first": {json.dumps(first)}, "pages": [')
        for number, page in enumerate(pages):
            out.write(', "' if number else '"')
            for start in range(0, len(page), _SLICE):
                out.write(json.dumps(page[start : start + _SLICE])[1:-1])
            out.write('"')
        out.write("]}")


def _write_parts(path: Path, first: int, text: Path, pages: Sequence[TextPart | None]) -> None:
    """`_write`, each page's text read piece by piece from its part of `text`."""
    with path.open("w", encoding="ascii") as out:
        out.write(f'{{"first": {json.dumps(first)}, "pages": [')
        for number, part in enumerate(pages):
            out.write(', "' if number else '"')
            for piece in read_pieces(text, part) if part is not None else ():
                out.write(json.dumps(piece)[1:-1])
            out.write('"')
        out.write("]}")


def _read(path: Path) -> dict[int, str]:
    stored = json.loads(path.read_text(encoding="utf-8"))
    first = int(stored["first"])
    return {first + i: str(text) for i, text in enumerate(stored["pages"])}
