"""KeywordIndex on an embedded Tantivy index stored under one directory.

Fields: doc_id, user_id, dataset_id (raw terms, stored: the scope of every query), chunk_id
and parent_id (stored bytes, not indexed: nothing looks a chunk up by them), `uid` (raw: one
term per chunk and scope, for replace-by-chunk), `text` (the plan's tokens joined by spaces,
split back by Tantivy's whitespace tokenizer: no lower-casing, no stemming, so the PRETOKENIZE
plan alone decides the terms; stored, so a relabel can rewrite a chunk), `payload` (stored
JSON bytes, not indexed) and `meta` (the document's metadata, a JSON fast field: see
where.py).

Schema 3 stopped indexing chunk_id and parent_id, and its `uid` is a 128-bit digest of the
scope and chunk id instead of their ~90 characters: terms unique to (nearly) every document
that each merge re-builds into the term dictionary were most of the merge threads' CPU while
files stream in (docs/benchmarks.md, forced re-ingest). An index written with schema 2 opens
and is written as it was (its chunk ids stay text terms) until its folder is re-built; an
index written before `meta` existed (schema 1) does not open: delete its folder and re-index
(`ragline ingest --force`).

Concurrency: Tantivy allows one writer per index directory (a lock file, across processes).
This adapter opens its writer on the first write or delete and keeps it until `close()`.
Searching needs no writer, so a `ragline search` process can read while an ingest process
writes (it sees the last commit). `retire_chunks` rides in the next commit (or a timer's,
within 2 s, or close's). Each `write` and `delete_document` returns after a commit
(a commit costs ~10-100 ms of fsyncs and thread hand-offs); concurrent calls share commits
(see group_commit), so ingesting files concurrently amortises it. Each call is
all-or-nothing. A delete that finds nothing commits nothing; once this process holds the
writer, such a delete is answered on the caller's thread from the last commit (a write
returns only after the reload that follows its commit), without a thread hop or the queue.
The count `delete_document` returns is of committed chunks.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import tantivy

from ragline.adapters.keyword_index.tantivy.group_commit import GroupCommitter
from ragline.adapters.keyword_index.tantivy.where import meta_query, stored_meta
from ragline.application.ports.keyword_index import (
    KeywordDoc,
    KeywordHit,
    KeywordIndexUnavailable,
    KeywordWriteFailed,
)
from ragline.domain.metadata import DocumentMetadata, MetadataFilter

T = TypeVar("T")
_SEP = "\x1f"  # unit separator: cannot be typed into an id by accident
SCHEMA_VERSION = 3
_ID_FIELDS = ("chunk_id", "parent_id")  # stored bytes from schema 3, text terms before


def build_schema(version: int = SCHEMA_VERSION) -> tantivy.Schema:
    """The fields of `version` (3, or 2 for an index written before chunk ids left the
    term dictionary)."""
    builder = tantivy.SchemaBuilder()
    for name in ("chunk_id", "doc_id", "user_id", "dataset_id", "parent_id"):
        if version >= 3 and name in _ID_FIELDS:
            builder.add_bytes_field(name, stored=True, indexed=False)
        else:
            builder.add_text_field(name, stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_text_field("uid", stored=False, tokenizer_name="raw", index_option="basic")
    builder.add_text_field("text", stored=True, tokenizer_name="whitespace", index_option="freq")
    builder.add_bytes_field("payload", stored=True, indexed=False)
    builder.add_json_field(
        "meta", stored=False, fast=True, tokenizer_name="raw", index_option="basic"
    )
    return builder.build()


class TantivyKeywordIndex:
    """KeywordIndex in `index_dir` (created if missing)."""

    def __init__(
        self,
        index_dir: Path | str,
        writer_heap_bytes: int = 64_000_000,
        writer_threads: int = 1,
    ) -> None:
        self._dir = Path(index_dir)
        self._heap = writer_heap_bytes
        self._threads = writer_threads
        try:
            self._dir.mkdir(parents=True, exist_ok=True)
            self.schema_version, self._index = self._open(str(self._dir))
        except (OSError, ValueError) as exc:
            raise KeywordIndexUnavailable(f"tantivy index: {self._reason(exc)}") from exc
        self._schema = self._index.schema
        self._ids_as_bytes = self.schema_version >= 3
        self._committer = GroupCommitter(self._open_writer, self._index.reload, _write_failed)

    async def write(self, docs: Sequence[KeywordDoc]) -> None:
        if not docs:
            return

        def apply_all() -> None:
            # the documents are built in the worker thread, before the queue: off the event
            # loop and outside the writer's critical section
            pairs = [(self._document(doc), self._uid_of(doc)) for doc in docs]

            def apply(writer: Any) -> bool:
                for document, uid in pairs:
                    writer.delete_documents_by_term("uid", uid)
                    writer.add_document(document)
                return True

            self._committer.submit(apply)

        await self._write(apply_all)

    async def delete_document(self, user_id: str, dataset_id: str, doc_id: str) -> int:
        query = self._scope(user_id, dataset_id, ("doc_id", doc_id))
        if self._committer.open_writer() is not None and self._nothing_committed(query):
            # This process holds the only writer, so the last reload shows every commit a
            # finished write made: nothing of the document is committed, and a change still
            # in the queue has not finished, so this delete may come first. The answer the
            # queue would give, without it (the usual case: a document indexed the first time).
            return 0
        removed = 0

        def apply(writer: Any) -> bool:
            nonlocal removed
            # The searcher is current: this process holds the only writer and reloads after
            # each of its commits.
            removed = self._count(query)
            if removed:
                writer.delete_documents_by_query(query)
            return removed > 0  # nothing to delete: skip the commit (fsyncs)

        await self._write(lambda: self._committer.submit(apply))
        return removed

    async def relabel_document(
        self, user_id: str, dataset_id: str, doc_id: str, metadata: DocumentMetadata
    ) -> None:
        query = self._scope(user_id, dataset_id, ("doc_id", doc_id))
        meta = stored_meta(metadata.indexed())

        def apply(writer: Any) -> bool:
            # current searcher: this process holds the only writer (see delete_document)
            searcher = self._index.searcher()
            count = self._count(query)
            if not count:
                return False
            for _, address in searcher.search(query, limit=count).hits:
                stored = searcher.doc(address).to_dict()
                fields = {name: values[0] for name, values in stored.items() if name != "meta"}
                fields["uid"] = self._uid(user_id, dataset_id, _text(fields["chunk_id"]))
                if meta:
                    fields["meta"] = meta
                writer.delete_documents_by_term("uid", fields["uid"])
                writer.add_document(tantivy.Document(**fields))
            return True

        await self._write(lambda: self._committer.submit(apply))

    async def delete_chunks(self, user_id: str, dataset_id: str, chunk_ids: Sequence[str]) -> None:
        uids = [self._uid(user_id, dataset_id, c) for c in dict.fromkeys(chunk_ids)]
        if not uids:
            return

        def apply(writer: Any) -> bool:
            for uid in uids:
                writer.delete_documents_by_term("uid", uid)
            return True

        await self._write(lambda: self._committer.submit(apply))

    async def retire_chunks(self, user_id: str, dataset_id: str, chunk_ids: Sequence[str]) -> None:
        """Deferred into the next commit (group_commit's `defer`): a forced re-ingest's
        swap then costs no commit of its own."""
        uids = [self._uid(user_id, dataset_id, c) for c in dict.fromkeys(chunk_ids)]
        if not uids:
            return

        def apply(writer: Any) -> bool:
            for uid in uids:
                writer.delete_documents_by_term("uid", uid)
            return True

        self._committer.defer(apply)

    async def search(
        self,
        user_id: str,
        dataset_id: str,
        tokens: Sequence[str],
        limit: int,
        where: MetadataFilter | None = None,
    ) -> list[KeywordHit]:
        terms = list(dict.fromkeys(t for t in tokens if t))
        if not terms or limit <= 0:
            return []
        return await self._run(lambda: self._search(user_id, dataset_id, terms, limit, where))

    async def close(self) -> None:
        """Release the writer (and its lock file) after merges finish; idempotent."""

        def release() -> None:
            writer = self._committer.close()
            if writer is not None:
                writer.wait_merging_threads()

        await asyncio.to_thread(release)

    # -- blocking implementation -------------------------------------------------------

    @staticmethod
    def _open(path: str) -> tuple[int, tantivy.Index]:
        """The index at `path` with the current schema (a new one is created with it), or an
        existing schema-2 index as it is."""
        try:
            return SCHEMA_VERSION, tantivy.Index(build_schema(), path=path, reuse=True)
        except ValueError as current:
            try:
                return 2, tantivy.Index(build_schema(2), path=path, reuse=True)
            except ValueError:
                raise current from None

    def _id(self, chunk_id: str) -> str | bytes:
        return chunk_id.encode("utf-8") if self._ids_as_bytes else chunk_id

    def _uid(self, user_id: str, dataset_id: str, chunk_id: str) -> str:
        """The chunk's one term in its scope: from schema 3 a 128-bit digest of the three
        (32 characters instead of ~90: the term dictionary holds one per document)."""
        joined = _SEP.join((user_id, dataset_id, chunk_id))
        if not self._ids_as_bytes:
            return joined
        return hashlib.blake2b(joined.encode("utf-8"), digest_size=16).hexdigest()

    def _uid_of(self, doc: KeywordDoc) -> str:
        return self._uid(doc.user_id, doc.dataset_id, doc.chunk_id)

    def _reason(self, error: BaseException) -> str:
        """The engine's message without the index folder's path (errors reach callers)."""
        return str(error).replace(str(self._dir), "<index folder>")

    def _document(self, doc: KeywordDoc) -> tantivy.Document:
        fields: dict[str, Any] = {
            "chunk_id": self._id(doc.chunk_id),
            "doc_id": doc.doc_id,
            "user_id": doc.user_id,
            "dataset_id": doc.dataset_id,
            "uid": self._uid_of(doc),
            "text": " ".join(doc.tokens),
            "payload": json.dumps(dict(doc.payload), ensure_ascii=False).encode("utf-8"),
        }
        if doc.metadata:
            fields["meta"] = stored_meta(doc.metadata.indexed())
        if doc.parent_id is not None:
            fields["parent_id"] = self._id(doc.parent_id)
        return tantivy.Document(**fields)

    def _nothing_committed(self, query: tantivy.Query) -> bool:
        try:
            return self._count(query) == 0
        except Exception:  # let the queued path meet (and report) the error
            return False

    def _count(self, query: tantivy.Query) -> int:
        """Documents matching `query` in the last commit this process reloaded."""
        result: Any = self._index.searcher().search(query, limit=1, count=True)
        return int(result.count or 0)

    def _scope(self, user_id: str, dataset_id: str, *terms: tuple[str, str]) -> tantivy.Query:
        clauses = [("user_id", user_id), ("dataset_id", dataset_id), *terms]
        return tantivy.Query.boolean_query(
            [
                (tantivy.Occur.Must, tantivy.Query.term_query(self._schema, field, value))
                for field, value in clauses
            ]
        )

    def _search(
        self,
        user_id: str,
        dataset_id: str,
        terms: list[str],
        limit: int,
        where: MetadataFilter | None,
    ) -> list[KeywordHit]:
        text = tantivy.Query.boolean_query(
            [
                (tantivy.Occur.Should, tantivy.Query.term_query(self._schema, "text", term))
                for term in terms
            ]
        )
        query = tantivy.Query.boolean_query(
            [
                (tantivy.Occur.Must, text),
                # Filter only: a constant 0 score keeps BM25 the only ranking signal.
                (
                    tantivy.Occur.Must,
                    tantivy.Query.const_score_query(self._scope(user_id, dataset_id), 0.0),
                ),
            ]
            + (
                []
                if where is None  # the metadata filter: also a constant-0 Must clause
                else [
                    (
                        tantivy.Occur.Must,
                        tantivy.Query.const_score_query(
                            meta_query(self._index, self._schema, where), 0.0
                        ),
                    )
                ]
            )
        )
        self._index.reload()  # see the last commit, also one made by another process
        searcher = self._index.searcher()
        result = searcher.search(query, limit=limit, count=False)
        hits: list[KeywordHit] = []
        for score, address in result.hits:
            stored = searcher.doc(address)
            payload: Mapping[str, str] = json.loads(stored["payload"][0])
            hits.append(
                KeywordHit(
                    chunk_id=_text(stored["chunk_id"][0]),
                    doc_id=stored["doc_id"][0],
                    score=float(score),
                    payload=payload,
                )
            )
        return hits

    async def _write(self, submit: Callable[[], None]) -> None:
        """Run `submit` (which hands a change to the group committer and returns once it is
        committed) in a worker thread."""
        try:
            await asyncio.to_thread(submit)
        except (KeywordIndexUnavailable, KeywordWriteFailed):
            raise
        except Exception as exc:
            raise KeywordIndexUnavailable(f"tantivy index: {self._reason(exc)}") from exc

    def _open_writer(self) -> Any:
        try:
            return self._index.writer(self._heap, self._threads)
        except Exception as exc:  # typically: another process holds the writer lock
            raise KeywordIndexUnavailable(f"tantivy writer: {self._reason(exc)}") from exc

    async def _run(self, func: Callable[[], T]) -> T:
        try:
            return await asyncio.to_thread(func)
        except Exception as exc:  # tantivy raises ValueError, OSError or bare Exception
            raise KeywordIndexUnavailable(f"tantivy index: {self._reason(exc)}") from exc


def _write_failed(exc: Exception) -> Exception:
    if isinstance(exc, KeywordIndexUnavailable | KeywordWriteFailed):
        return exc
    return KeywordWriteFailed(f"tantivy write: {exc}")


def _text(value: str | bytes) -> str:
    """A stored id as text (bytes from schema 3 on, text before)."""
    return value.decode("utf-8") if isinstance(value, bytes) else value
