"""The keyword plan PRETOKENIZE hands to KEYWORD_INDEXING, spooled to the task's workspace.

A 100 MB file has ~300k child chunks of ~70 tokens each: held as Python objects that plan
alone would cost over a gigabyte. Spooled as JSON lines it costs one page of chunks in
memory, and KEYWORD_INDEXING reads it back batch by batch. The file is the task's temp file
(suffix `kwplan`): discarded when the run ends, and by the start-up clean after a crash.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterable
from pathlib import Path
from typing import IO, Any

from ragline.application.ports.keyword_index import KeywordDoc
from ragline.application.workspace import discard

SUFFIX = "kwplan"


class KeywordPlan:
    """Append-then-read spool of KeywordDocs. Blocking file I/O: call it off the event loop."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.count = 0
        path.parent.mkdir(parents=True, exist_ok=True)
        self._out: IO[str] | None = path.open("w", encoding="utf-8")

    def add(self, docs: Iterable[KeywordDoc]) -> None:
        if self._out is None:
            raise RuntimeError("the keyword plan is sealed")
        for doc in docs:
            self._out.write(json.dumps(_row(doc), ensure_ascii=False))
            self._out.write("\n")
            self.count += 1

    def seal(self) -> None:
        """Finish writing (flushes); the plan is read-only from here."""
        if self._out is not None:
            self._out.close()
            self._out = None

    def batches(self, size: int) -> Generator[list[KeywordDoc], None, None]:
        """The docs in the order they were added, `size` at a time."""
        self.seal()
        batch: list[KeywordDoc] = []
        with self.path.open(encoding="utf-8") as lines:
            for line in lines:
                batch.append(_doc(json.loads(line)))
                if len(batch) >= size:
                    yield batch
                    batch = []
        if batch:
            yield batch

    def discard(self) -> None:
        self.seal()
        discard(self.path)


def _row(doc: KeywordDoc) -> list[Any]:
    return [
        doc.chunk_id,
        doc.doc_id,
        doc.user_id,
        doc.dataset_id,
        doc.parent_id,
        list(doc.tokens),
        dict(doc.payload),
    ]


def _doc(row: list[Any]) -> KeywordDoc:
    chunk_id, doc_id, user_id, dataset_id, parent_id, tokens, payload = row
    return KeywordDoc(chunk_id, doc_id, user_id, dataset_id, parent_id, tokens, payload)
