"""EditChunk: an owner switches one chunk off or on, or replaces a child's text.

The chunk row is the truth and changes first, by compare-and-set (rowcount checked); the
indexes follow it. Off: the chunk's dense and sparse points and its keyword doc are deleted,
so no retriever can return it (no search-time filter to forget). On: it is indexed again in
all three. A new text: the row takes it (edited, both index statuses PENDING), then the
child is embedded, sparse-encoded and keyword-indexed again under the same chunk_id, its
statuses moved PENDING -> INDEXING -> SUCCESS as the pipeline moves them. A failure after the
row changed leaves it recorded (a FAILED status, or an enabled flag the index does not yet
show) and repeating the same request finishes the job: each index step is idempotent.

Refused: another tenant's document or chunk (ChunkNotFound: the HTTP API answers 404 and
nothing changes), a run in flight on the document (DocumentBusy: the stages own its rows
then), a parent's text (NotEditable: parents are context, never indexed).

A re-chunking of the document (a re-index, a retry that re-runs CHUNKING, a new upload) cuts
fresh chunks from the Markdown: edits and switches are dropped (docs/operations.md).

Generations (issue 21, `search.spaces.user_indexes`): a switch off deletes the chunk's points
in the base index and in the user's active and shadow generations. A new text is embedded
with the active generation's model into its index and, while a re-embedding copies, with
the target model into the shadow too: the copy's re-check compares the chunk ids of each
range, not their texts, so it would not re-copy an edited chunk whose edit ended between two
checks. (An edit that races a copy batch which read the old text may still lose to that
batch's write; a repeat of the edit, or a chunk switched off and on, rewrites it.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import attrs

from ragline.application.documents.use_cases import DocumentBusy, DocumentNotFound
from ragline.application.metadata import catch_up, labels_of
from ragline.application.pipeline.chunk_header import indexed_text
from ragline.application.pipeline.stages.pretokenize import keyword_docs
from ragline.application.pipeline.stages.vectorizing import chunk_payload
from ragline.application.ports.embedder_resolver import EmbedderResolver
from ragline.application.ports.keyword_index import KeywordIndex
from ragline.application.ports.repositories.chunks import ChunkRecord
from ragline.application.ports.repositories.scope import DocumentScope
from ragline.application.ports.sparse_encoder import SparseEncoder
from ragline.application.ports.tokenizer import Tokenizer
from ragline.application.ports.unit_of_work import UnitOfWork, UnitOfWorkFactory
from ragline.application.ports.vector_index import DensePoint, SparsePoint, VectorIndex
from ragline.application.search.spaces import dense_indexes, user_indexes
from ragline.application.tasks import RejectedBody
from ragline.domain.metadata import DocumentMetadata
from ragline.domain.parse_run import (
    BEGIN_INDEXING,
    COMPLETE,
    FAIL,
    ChunkIndexStatus,
    ChunkStatusMove,
)

MAX_CHUNK_TEXT = 20_000
"""Characters a replaced text may have (a child is ~400; a bound keeps one request cheap)."""


class ChunkNotFound(LookupError):
    """No such chunk in this user's document."""


class NotEditable(ValueError):
    """The change asked for does not apply to this chunk (a parent's text, an empty text)."""


class ChunkConflict(RuntimeError):
    """A compare-and-set moved nothing: the chunk changed under this request."""


@attrs.frozen
class ChunkChange:
    enabled: bool | None = None
    text: str | None = None


class EditChunk:
    def __init__(
        self,
        uow_factory: UnitOfWorkFactory,
        vectors: VectorIndex,
        keywords: KeywordIndex,
        embedders: EmbedderResolver,
        sparse: SparseEncoder,
        tokenizer: Tokenizer,
        contextual_headers: bool = False,
    ) -> None:
        self._uow_factory = uow_factory
        self._vectors = vectors
        self._keywords = keywords
        self._embedders = embedders
        self._sparse = sparse
        self._tokenizer = tokenizer
        self._headers = contextual_headers

    async def __call__(
        self, user_id: str, dataset_id: str, doc_id: str, chunk_id: str, change: ChunkChange
    ) -> ChunkRecord:
        """The chunk as stored after the change."""
        if change.text is not None and not (0 < len(change.text.strip()) <= MAX_CHUNK_TEXT):
            raise NotEditable(f"a chunk's text has 1 to {MAX_CHUNK_TEXT} characters")
        scope = DocumentScope(user_id, dataset_id, doc_id)
        chunk = await self._current(scope, chunk_id)
        if change.text is not None:
            chunk = await self._replace_text(scope, chunk, change.text)
        if change.enabled is not None:
            chunk = await self._switch(scope, chunk, change.enabled)
        elif change.text is not None and chunk.enabled:
            chunk = await self._index(scope, chunk)
        return chunk

    async def _current(self, scope: DocumentScope, chunk_id: str) -> ChunkRecord:
        async with self._uow_factory() as uow:
            latest = await uow.documents.latest_for_document(
                scope.user_id, scope.dataset_id, scope.doc_id
            )
            if latest is None:
                raise DocumentNotFound(f"no document {scope.doc_id} in dataset {scope.dataset_id}")
            chunk = await _read(uow, scope, chunk_id)
        if not latest.is_terminal:
            raise DocumentBusy(f"document {scope.doc_id} has a run in progress ({latest.task_id})")
        return chunk

    async def _replace_text(
        self, scope: DocumentScope, chunk: ChunkRecord, text: str
    ) -> ChunkRecord:
        if chunk.is_parent:
            raise NotEditable("a parent chunk is context, never indexed: edit its children")
        if chunk.text == text:
            return chunk  # a repeat: indexing below finishes what the first one began
        async with self._uow_factory() as uow:
            moved = await uow.chunks.replace_text(
                scope, chunk.chunk_id, expected=chunk.text, text=text
            )
            if moved != 1:
                await uow.rollback()
                raise ChunkConflict(f"chunk {chunk.chunk_id} changed under this edit")
            await uow.commit()
            return await _read(uow, scope, chunk.chunk_id)

    async def _switch(self, scope: DocumentScope, chunk: ChunkRecord, enabled: bool) -> ChunkRecord:
        if chunk.enabled is not enabled:
            async with self._uow_factory() as uow:
                moved = await uow.chunks.set_enabled(scope, chunk.chunk_id, enabled=enabled)
                if moved != 1:
                    await uow.rollback()
                    raise ChunkConflict(f"chunk {chunk.chunk_id} changed under this switch")
                await uow.commit()
            chunk = attrs.evolve(chunk, enabled=enabled)
        if chunk.is_parent:
            return chunk  # a parent is in no index; its children keep their own switches
        if enabled:
            return await self._index(scope, chunk)
        ids = [chunk.chunk_id]
        for index in await dense_indexes(self._uow_factory, self._vectors, scope.user_id):
            await index.delete_chunks(scope.user_id, scope.dataset_id, ids)
        await self._keywords.delete_chunks(scope.user_id, scope.dataset_id, ids)
        return chunk

    async def _index(self, scope: DocumentScope, chunk: ChunkRecord) -> ChunkRecord:
        """Dense, then sparse, then keyword: the pipeline's order and status moves."""
        filename = await self._filename(chunk)
        text = indexed_text(chunk, filename, self._headers)
        async with self._uow_factory() as uow:
            indexes = await user_indexes(uow, self._vectors, scope.user_id)
            config = indexes.active.config
            if config is None:
                config = await uow.model_configs.default_embedding(scope.user_id)
        if config is None:
            raise NotEditable(f"user {scope.user_id} has no default EMBEDDING config")
        spaces = [(indexes.active.index, await self._embedders.resolve(config))]
        shadow = indexes.shadow
        if shadow is not None and shadow.config is not None:
            spaces.append((shadow.index, await self._embedders.resolve(shadow.config)))
        labels = await labels_of(self._uow_factory, scope)
        payload = chunk_payload(chunk, labels.metadata)

        async def dense() -> None:
            for index, embedder in spaces:  # active first: what search reads now
                (vector,) = await asyncio.to_thread(embedder.embed_documents, [text])
                await index.upsert_dense([DensePoint(chunk.chunk_id, vector, payload)])

        async def sparse() -> None:
            (encoded,) = await asyncio.to_thread(self._sparse.encode_documents, [text])
            point = SparsePoint(chunk.chunk_id, encoded, payload)
            await self._vectors.upsert_sparse([point])

        await self._moved(scope, chunk, chunk.dense_status, "dense", dense)
        await self._moved(scope, chunk, chunk.sparse_status, "sparse", sparse)
        docs = await asyncio.to_thread(
            keyword_docs, self._tokenizer, [chunk], filename, self._headers
        )
        await self._keywords.write([attrs.evolve(d, metadata=labels.metadata) for d in docs])
        await catch_up(self._uow_factory, scope, labels, self._relabel(scope))
        async with self._uow_factory() as uow:
            return await _read(uow, scope, chunk.chunk_id)

    def _relabel(self, scope: DocumentScope) -> Callable[[DocumentMetadata], Awaitable[None]]:
        """Both indexes' labels of the document, for a metadata PUT that raced this edit."""

        async def relabel(metadata: DocumentMetadata) -> None:
            args = (scope.user_id, scope.dataset_id, scope.doc_id, metadata)
            for index in await dense_indexes(self._uow_factory, self._vectors, scope.user_id):
                await index.relabel_document(*args)
            await self._keywords.relabel_document(*args)

        return relabel

    async def _moved(
        self,
        scope: DocumentScope,
        chunk: ChunkRecord,
        status: ChunkIndexStatus | None,
        index: str,
        work: Callable[[], Awaitable[None]],
    ) -> None:
        """`work` between BEGIN_INDEXING and COMPLETE (FAIL when it raises); a chunk already
        SUCCESS is rewritten without a move (re-upserting a point is a no-op in effect)."""
        if status is ChunkIndexStatus.SUCCESS:
            await work()
            return
        if status is ChunkIndexStatus.INDEXING:  # left by an interrupted edit
            await self._move(scope, chunk.chunk_id, index, FAIL)
        await self._move(scope, chunk.chunk_id, index, BEGIN_INDEXING)
        try:
            await work()
        except Exception:
            await self._move(scope, chunk.chunk_id, index, FAIL)
            raise
        await self._move(scope, chunk.chunk_id, index, COMPLETE)

    async def _move(
        self, scope: DocumentScope, chunk_id: str, index: str, move: ChunkStatusMove
    ) -> None:
        async with self._uow_factory() as uow:
            mover = uow.chunks.move_dense if index == "dense" else uow.chunks.move_sparse
            if await mover(scope, [chunk_id], move) != 1:
                await uow.rollback()
                raise ChunkConflict(f"{move.name} did not move chunk {chunk_id} ({index})")
            await uow.commit()

    async def _filename(self, chunk: ChunkRecord) -> str:
        """The source file name the header rule names (as the run that cut the chunk did)."""
        async with self._uow_factory() as uow:
            stored = await uow.parsed_logs.get(chunk.task_id)
        if stored is None or isinstance(stored.task, RejectedBody):
            return chunk.scope.doc_id
        return stored.task.source_filename


async def _read(uow: UnitOfWork, scope: DocumentScope, chunk_id: str) -> ChunkRecord:
    found = await uow.chunks.get_many(scope.user_id, scope.dataset_id, [chunk_id])
    if not found or found[0].scope != scope:
        raise ChunkNotFound(f"no chunk {chunk_id} in document {scope.doc_id}")
    return found[0]
