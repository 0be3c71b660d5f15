"""The re-embedding use cases: plan, one worker step (start, copy a batch, catch up, swap),
cancel, and progress.

Every write goes through a compare-and-set (the repository raises ConcurrentUpdate or
answers False), so several workers may call `step` at once: a batch is copied by the claim
that holds it, a start or a swap happens once. A worker killed mid-batch leaves a claim whose
lease runs out; the next `step` anywhere takes it over (the chunks of that one batch are
embedded again, nothing else).

Coverage: the copy reads the chunks with a vector in the active generation from the chunk
rows. Before READY and again before the swap every batch range is re-read; a range that now
holds a chunk the batch did not copy becomes a catch-up batch (`Reembedding.catch_up`).
VECTORIZING writes only into the active generation (`Generations.active`): the range re-read
is what brings a run that landed during the copy into the shadow, and the swap waits while a
run of the user is between VECTORIZING and its end (its chunks are not live, so the re-read
cannot see them yet); a run that starts VECTORIZING after the swap's look counts itself, and
the swap's compare-and-set on that count fails (docs/state-machine.md, "The run that
straddles a swap").

The target is a whole EMBEDDING config (model, dimension, base_url, API key), stored on the
re-embedding row: the copy embeds with exactly it (`EmbedderResolver.resolve`) and the swap's
transaction makes it the user's default, so search, which reads the active generation and the
default config together, and every new run's VECTORIZING use the new model from one commit on.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import datetime, timedelta

import attrs

from ragline.application.metadata.labels import labels_of
from ragline.application.pipeline.chunk_header import indexed_text
from ragline.application.pipeline.stages.vectorizing import chunk_payload
from ragline.application.ports.background_work import BackgroundWork
from ragline.application.ports.clock import Clock
from ragline.application.ports.embedder import EmbeddingDimensionMismatch
from ragline.application.ports.embedder_resolver import EmbedderResolver, UnusableEmbeddingConfig
from ragline.application.ports.metrics import PipelineMetrics
from ragline.application.ports.repositories.chunks import ChunkRecord
from ragline.application.ports.repositories.errors import ConcurrentUpdate
from ragline.application.ports.repositories.model_configs import EmbeddingConfig
from ragline.application.ports.repositories.runs import RunQuery
from ragline.application.ports.unit_of_work import UnitOfWork, UnitOfWorkFactory
from ragline.application.ports.vector_index import (
    DensePoint,
    VectorIndex,
    VectorSpace,
    VectorSpaces,
)
from ragline.application.reembedding.target import Target, target_config
from ragline.application.tasks import ParseTaskCommand
from ragline.domain.parse_run import PipelineStatus, Stage, StageStatus
from ragline.domain.reembedding import (
    CopyBatch,
    CopyBatchStatus,
    EmbeddingSpec,
    IllegalGenerationMove,
    Reembedding,
    ReembeddingStatus,
    ids_digest,
    split,
)

PAGE = 1000
EMBEDDING = frozenset({StageStatus.PROCESSING, StageStatus.SUCCESS})


class AlreadyReembedding(RuntimeError):
    """The user has an active re-embedding: cancel it or wait for its swap."""


class ReembeddingNotFound(LookupError):
    """No re-embedding with this id that the caller may see."""


@attrs.frozen
class Reembeddings:
    """The use cases; `embedders` builds the target config's model (as VECTORIZING's),
    `contextual_headers` the setting VECTORIZING embeds children under (`indexed_text`), so
    a copied vector is the one a fresh ingest would have written."""

    uow: UnitOfWorkFactory
    vectors: VectorSpaces
    embedders: EmbedderResolver
    contextual_headers: bool = False
    batch_size: int = 64
    lease: timedelta = timedelta(minutes=2)
    background: BackgroundWork | None = None
    """Where the copy's model calls run (a niced thread in worker and serve); None: a
    plain worker thread."""
    metrics: PipelineMetrics | None = None
    """Told of each move, copied batch and take-over once its transaction committed (a lost
    compare-and-set counts nothing)."""
    clock: Clock | None = None
    """Renews a batch's lease every third of it while the batch embeds, as a parse batch's
    worker does, so a slow model is not taken for a dead worker; None: no renewal (the
    lease must outlast one batch)."""

    async def plan(
        self,
        reembedding_id: str,
        user_id: str,
        target: Target,
        now: datetime,
        source_dimension: int,
    ) -> Reembedding:
        """One transaction: the shadow generation opened and the PLANNED row added;
        `source_dimension` is the user's current model's (its space is swept after the swap).
        The user's default config is not touched: the swap makes `target` the default."""
        if isinstance(target, EmbeddingConfig):
            if target.user_id != user_id:
                raise ValueError(f"a config of user {target.user_id} cannot re-embed {user_id}")
            spec = EmbeddingSpec(target.provider, target.model, target.dimension)
            base_url, api_key = target.base_url, target.api_key
        else:
            spec, base_url, api_key = target, None, None
        async with self.uow() as uow:
            gens = await uow.reembeddings.generations(user_id)
            try:
                opened = gens.open_shadow(gens.next_generation)
            except IllegalGenerationMove:
                raise AlreadyReembedding(f"user {user_id} is already re-embedding") from None
            item = Reembedding.plan(
                reembedding_id,
                user_id,
                gens.active,
                opened.newest,
                spec,
                now,
                source_dimension=source_dimension,
                base_url=base_url,
                api_key=api_key,
            )
            try:
                await uow.reembeddings.save_generations(opened, gens.version)
            except ConcurrentUpdate:
                raise AlreadyReembedding(f"user {user_id} is already re-embedding") from None
            await uow.reembeddings.add(item)
            await uow.commit()
        self._entered(item.status)
        return item

    async def get(self, reembedding_id: str, user_id: str | None) -> Reembedding:
        """The re-embedding, if `user_id` (None: the service) may see it."""
        async with self.uow() as uow:
            item = await uow.reembeddings.get(reembedding_id)
        if item is None or (user_id is not None and item.user_id != user_id):
            raise ReembeddingNotFound(reembedding_id)
        return item

    async def cancel(self, reembedding_id: str, user_id: str | None, now: datetime) -> Reembedding:
        """One transaction: CANCELLED and the shadow dropped; then its points are removed."""
        await self.get(reembedding_id, user_id)
        return await self._end(reembedding_id, now, None)

    async def _end(self, reembedding_id: str, now: datetime, error: str | None) -> Reembedding:
        """CANCELLED (no error) or FAILED, with the shadow dropped in the same transaction."""
        async with self.uow() as uow:
            item = await self._fresh(uow, reembedding_id)
        expected = item.version
        if error is None:
            item.cancel(now)
        else:
            item.fail(error, now)
        async with self.uow() as uow:
            gens = await uow.reembeddings.generations(item.user_id)
            await uow.reembeddings.save(item, expected)
            await uow.reembeddings.save_generations(
                gens.drop_shadow(item.target_generation), gens.version
            )
            await uow.commit()
        self._entered(item.status)
        await self.vectors.delete_user(self._space(item), item.user_id)
        return item

    async def step(self, owner: str, now: datetime) -> bool:
        """One unit of work on the oldest active re-embedding that has any; False when none."""
        async with self.uow() as uow:
            active = await uow.reembeddings.list_active()
        for item in active:
            try:
                if await self._advance(item, owner, now):
                    return True
            except ConcurrentUpdate:
                return True  # another worker moved it: look again next step
            except EmbeddingDimensionMismatch as error:  # the model can never fill this space
                await self._end(item.id, now, f"EMBEDDING_DIMENSION_UNSUPPORTED: {error}")
                return True
            except UnusableEmbeddingConfig as error:  # the config can never give a model
                await self._end(item.id, now, f"LLM_CONFIG_MISSING: {error}")
                return True
        return False

    # -- the moves ------------------------------------------------------------------------

    async def _advance(self, item: Reembedding, owner: str, now: datetime) -> bool:
        if item.status is ReembeddingStatus.PLANNED:
            return await self._start(item, now)
        if item.status is ReembeddingStatus.COPYING:
            return await self._copy_or_check(item, owner, now)
        return await self._swap(item, now)

    async def _start(self, item: Reembedding, now: datetime) -> bool:
        await self.vectors.in_space(self._space(item))  # the shadow's collection exists
        ids = await self._required(item.user_id)
        batches = split(item.id, ids, self.batch_size)
        expected = item.version
        item.start(len(ids), now)
        async with self.uow() as uow:
            await uow.reembeddings.save(item, expected)
            await uow.reembeddings.add_batches(batches)
            await uow.commit()
        self._entered(item.status)
        return True

    async def _copy_or_check(self, item: Reembedding, owner: str, now: datetime) -> bool:
        async with self.uow() as uow:
            claimed = await uow.reembeddings.claim_batch(item.id, owner, now, now + self.lease)
            await uow.commit()
        if claimed is not None and claimed.claims > 1 and self.metrics is not None:
            self.metrics.copy_batch_taken_over()  # its first holder's lease ran out
        if claimed is not None:
            await self._copy(item, claimed)
            return True
        async with self.uow() as uow:
            batches = await uow.reembeddings.batches(item.id)
        if any(b.status is not CopyBatchStatus.DONE for b in batches):
            return False  # others hold the rest under their leases
        missing = await self._missing(item, batches)
        expected = item.version
        async with self.uow() as uow:
            if missing:
                item.catch_up(len(missing))
                more = split(item.id, missing, self.batch_size, first_seq=len(batches))
                await uow.reembeddings.add_batches(more)
            else:
                item.mark_ready(0, now)
            await uow.reembeddings.save(item, expected)
            await uow.commit()
        if not missing:
            self._entered(item.status)
        return True

    async def _copy(self, item: Reembedding, batch: CopyBatch) -> None:
        clock = self.clock
        renewing = None if clock is None else asyncio.create_task(self._renew(batch, clock))
        try:
            await self._copy_held(item, batch)
        finally:
            if renewing is not None:
                renewing.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await renewing

    async def _renew(self, batch: CopyBatch, clock: Clock) -> None:
        """Keep the batch's lease while it embeds (every third of it); stop once lost."""
        every = self.lease.total_seconds() / 3
        while True:
            await asyncio.sleep(every)
            async with self.uow() as uow:
                held = await uow.reembeddings.renew_batch(
                    batch.reembedding_id,
                    batch.seq,
                    batch.owner or "",
                    batch.claims,
                    clock.now() + self.lease,
                )
                await uow.commit()
            if not held:
                return

    async def _copy_held(self, item: Reembedding, batch: CopyBatch) -> None:
        records = await self._in_range(item.user_id, batch)
        embedder = await self.embedders.resolve(target_config(item))
        texts = await self._texts(records)
        if self.background is None:
            vectors = await asyncio.to_thread(embedder.embed_documents, texts)
        else:  # below the searches a server answers on the same cores
            vectors = await self.background.run(lambda: embedder.embed_documents(texts))
        for vector in vectors:
            if len(vector) != item.target.dimension:
                raise EmbeddingDimensionMismatch(item.target.dimension, len(vector), "re-embed")
        labels = {  # the copy carries each document's metadata, as VECTORIZING's points do
            scope: (await labels_of(self.uow, scope)).metadata
            for scope in {c.scope for c in records}
        }
        shadow = await self.vectors.in_space(self._space(item))
        await shadow.upsert_dense(
            [
                DensePoint(c.chunk_id, v, chunk_payload(c, labels[c.scope]))
                for c, v in zip(records, vectors, strict=True)
            ]
        )
        records = await self._drop_gone(item.user_id, batch, shadow, records)
        async with self.uow() as uow:
            if not await uow.reembeddings.finish_batch(
                item.id,
                batch.seq,
                batch.owner or "",
                batch.claims,
                len(records),
                ids_digest(c.chunk_id for c in records),
            ):
                return  # the claim was lost (lease ran out): its successor counts it
            fresh = await self._fresh(uow, item.id)
            expected = fresh.version
            fresh.copied(len(records))
            await uow.reembeddings.save(fresh, expected)
            await uow.commit()
        if self.metrics is not None:
            self.metrics.chunks_reembedded(len(records))

    async def _drop_gone(
        self, user_id: str, batch: CopyBatch, shadow: VectorIndex, copied: list[ChunkRecord]
    ) -> list[ChunkRecord]:
        """The copied chunks whose rows are still there; the others leave the shadow again.

        A document deleted while this batch embedded had its shadow points removed before
        this batch wrote them (`DeleteDocument` deletes the points, then the rows, then the
        shadow's points once more): the range is re-read after the write, so a row gone by
        then is this batch's to clean, and one gone later meets the deleter's second pass."""
        present = {(c.chunk_id, c.scope.dataset_id) for c in await self._in_range(user_id, batch)}
        gone: dict[str, list[str]] = {}
        for c in copied:
            if (c.chunk_id, c.scope.dataset_id) not in present:
                gone.setdefault(c.scope.dataset_id, []).append(c.chunk_id)
        for dataset_id, chunk_ids in gone.items():
            await shadow.delete_chunks(user_id, dataset_id, chunk_ids)
        if not gone:
            return copied
        return [c for c in copied if (c.chunk_id, c.scope.dataset_id) in present]

    async def _swap(self, item: Reembedding, now: datetime) -> bool:
        """READY to SWAPPED once no run of the user is embedding and every chunk is copied.

        The user's generations are read first: a VECTORIZING that begins after that read
        counts itself (`note_vectorizing`) before it reads its target, so the swap's
        compare-and-set on the count fails, and the runs are looked at again next step. One
        that began before it is seen by `_runs_embedding`, or has ended, its chunks live for
        `_missing` to see."""
        async with self.uow() as uow:
            seen = await uow.reembeddings.generations(item.user_id)
        if await self._runs_embedding(item.user_id):
            return False  # their chunks join the lineages at SUCCESS: catch them up first
        async with self.uow() as uow:
            batches = await uow.reembeddings.batches(item.id)
        missing = await self._missing(item, batches)
        expected = item.version
        async with self.uow() as uow:
            if missing:
                item.catch_up(len(missing))
                more = split(item.id, missing, self.batch_size, first_seq=len(batches))
                await uow.reembeddings.add_batches(more)
                await uow.reembeddings.save(item, expected)
                await uow.commit()
                self._entered(item.status)  # READY back to COPYING
                return True
            try:
                await uow.reembeddings.save_generations(
                    seen.swap(item.target_generation),
                    seen.version,
                    starts_seen=seen.vectorizing_starts,
                )
            except ConcurrentUpdate:
                return True  # a run began VECTORIZING since `seen`: the unit rolls back
            item.swap(0, now)
            await uow.reembeddings.save(item, expected)
            # search reads the default config with the active generation: both move here
            await uow.model_configs.put_default_embedding(target_config(item))
            await uow.commit()
        self._entered(item.status)
        if item.source_dimension is not None:
            # the old generation's points go (generation 0's too: its space is shared, the
            # delete is by user); a grace period for rollback is not implemented yet
            old = VectorSpace(item.source_generation, item.source_dimension)
            await self.vectors.delete_user(old, item.user_id)
        return True

    def _entered(self, status: ReembeddingStatus) -> None:
        if self.metrics is not None:
            self.metrics.reembedding_entered(status.value)

    # -- reading --------------------------------------------------------------------------

    async def _texts(self, records: list[ChunkRecord]) -> list[str]:
        """What VECTORIZING embedded: with headers on, the header needs each run's file name."""
        if not self.contextual_headers:
            return [c.text for c in records]
        names: dict[str, str] = {}
        async with self.uow() as uow:
            for task_id in {c.task_id for c in records}:
                log_row = await uow.parsed_logs.get(task_id)
                task = None if log_row is None else log_row.task
                names[task_id] = task.source_filename if isinstance(task, ParseTaskCommand) else ""
        return [indexed_text(c, names[c.task_id], True) for c in records]

    async def _runs_embedding(self, user_id: str) -> bool:
        """Whether a run of the user has begun VECTORIZING (with the current model, into the
        current generation) and not ended: its chunks are not live yet, so `_missing` cannot
        see them, and after a swap they would have no vector in the new generation."""
        query = RunQuery(user_id=user_id, status=PipelineStatus.PROCESSING)
        offset = 0
        while True:
            async with self.uow() as uow:
                page = await uow.runs.list_page(query, offset=offset, limit=PAGE)
            if any(r.status_of(Stage.VECTORIZING) in EMBEDDING for r in page.runs):
                return True
            offset += len(page.runs)
            if not page.runs or offset >= page.total:
                return False

    @staticmethod
    def _space(item: Reembedding) -> VectorSpace:
        return VectorSpace(item.target_generation, item.target.dimension)

    async def _required(self, user_id: str) -> list[str]:
        ids: list[str] = []
        after: tuple[str, str] | None = None
        while True:
            async with self.uow() as uow:
                page = await uow.chunks.list_user_children(user_id, after=after, limit=PAGE)
            if not page:
                return sorted(set(ids))
            ids += [c.chunk_id for c in page]
            after = (page[-1].chunk_id, page[-1].scope.dataset_id)

    async def _in_range(self, user_id: str, batch: CopyBatch) -> list[ChunkRecord]:
        found: list[ChunkRecord] = []
        after: tuple[str, str] | None = None
        while True:
            async with self.uow() as uow:
                page = await uow.chunks.list_user_children(
                    user_id,
                    first=batch.first_chunk_id,
                    last=batch.last_chunk_id,
                    after=after,
                    limit=PAGE,
                )
            if not page:
                return found
            found += page
            after = (page[-1].chunk_id, page[-1].scope.dataset_id)

    async def _missing(self, item: Reembedding, batches: list[CopyBatch]) -> list[str]:
        """Chunks with a vector now that no done batch copied: outside every range, or in a
        range whose chunks are not the ones its batch copied (their digest; a batch stored
        without one: more chunks than it copied). Newest batches first: a catch-up batch
        that vouches for every chunk of an older range supersedes it."""
        required = await self._required(item.user_id)
        missing: set[str] = set()
        vouched: set[str] = set()
        ranged: set[str] = set()
        for batch in sorted(batches, key=lambda b: b.seq, reverse=True):
            inside = {i for i in required if batch.first_chunk_id <= i <= batch.last_chunk_id}
            ranged |= inside
            if inside <= vouched:
                continue
            if batch.digest is None:
                changed = len(inside) > batch.copied
            else:
                changed = ids_digest(inside) != batch.digest
            if changed:
                missing |= inside - vouched
            else:
                vouched |= inside
        missing |= {i for i in required if i not in ranged}
        return sorted(missing - vouched)

    @staticmethod
    async def _fresh(uow: UnitOfWork, reembedding_id: str) -> Reembedding:
        item = await uow.reembeddings.get(reembedding_id)
        if item is None:
            raise ConcurrentUpdate(f"re-embedding {reembedding_id} is gone")
        return item
