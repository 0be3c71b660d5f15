"""Batch workers: claim a pending batch, parse its page range, write its pages, mark it done.

Claims are compare-and-set by priority (storage), held under a lease the worker renews while
it parses; a worker that dies leaves a lease that lapses, and the next claim takes the batch
over (after `MAX_CLAIMS` take-overs the batch fails instead: something kills every worker
that touches it). A worker that stops gives its batch back; the claim of a dead process of
the same host is released by any waiter or idle loop there without waiting for the lease
(`release_gone`, the ClaimHolders port). Every batch ends done or failed with a failure
code and message.

Who runs them: `ragline worker` and `ragline serve` run `loops` in the background; CLEANING
and `ragline parse` run the batches they wait on in-process (`run_ids`), so the embedded
defaults need no server, and with servers the same batches are shared through the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import TypeVar

import attrs

from ragline.application.error_text import KEPT, describe, without_paths
from ragline.application.parsing.page_store import PageStore
from ragline.application.parsing.parsed_text import TextPart, parse_to_file, parts
from ragline.application.parsing.settings import ParseCacheSettings
from ragline.application.ports.claim_holders import ClaimHolders
from ragline.application.ports.clock import Clock
from ragline.application.ports.object_storage import ObjectNotFound, ObjectStorage, StorageError
from ragline.application.ports.parser import (
    ParsedDocument,
    ParsedText,
    ParseError,
    ParseOptions,
    Parser,
    PdfParserBackend,
)
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.application.secrets import masked_prefix
from ragline.application.workspace import Workspace
from ragline.domain.parse_batch import PageRange, ParseBatch, ParseTier, RequestOutcome, outcome
from ragline.domain.parse_run import FailureCode

log = logging.getLogger("ragline.parse_batches")

MAX_CLAIMS = 3
T = TypeVar("T")
IDLE_POLL_MAX = 2.0


@attrs.frozen
class LocalSource:
    """The bytes of `sha256` already on this machine (CLEANING downloaded them)."""

    sha256: str
    path: Path


def is_disk_full(error: BaseException) -> bool:
    """ENOSPC anywhere in the cause chain (adapters may wrap the OSError)."""
    current: BaseException | None = error
    for _ in range(16):
        if current is None:
            return False
        if isinstance(current, OSError) and current.errno == errno.ENOSPC:
            return True
        current = current.__cause__ or current.__context__
    return False


class BatchFailure(Exception):
    """A batch's parse failed; `message` (masked: it is stored and shown) says why."""

    def __init__(self, code: FailureCode, message: str) -> None:
        message = masked_prefix(message, KEPT)
        super().__init__(message)
        self.code = code
        self.message = message


def options_for(batch: ParseBatch, settings: ParseCacheSettings) -> ParseOptions:
    """What the parser is asked for a batch: the backend its request asked for (CLEANING
    passes the task's), else the tier's own (basic: naive, quality: auto). The cache key is
    the tier: any backend of a tier answers a request at that tier."""
    tier = batch.tier
    default = PdfParserBackend.NAIVE if tier is ParseTier.BASIC else PdfParserBackend.AUTO
    try:
        backend = PdfParserBackend(batch.requested_backend or default)
    except ValueError:
        backend = default
    return ParseOptions(
        pdf_parser_backend=backend, limits=settings.limits, tier=tier, page_range=batch.page_range
    )


def batch_pages(document: ParsedDocument, page_range: PageRange) -> list[str]:
    """The batch's pages from what the parser returned.

    `pages` filled: page `first + i` is `pages[i]`; a parser that returned every page of
    the file although a range was asked is sliced. `pages` empty (a non-paged file, or a
    parser that does not split pages): the Markdown is the range's first page — unless the
    parser says the file has more pages than the range, i.e. it parsed the whole file: then
    only the batch starting at page 1 keeps it, so the whole text is never stored twice.
    """
    return chosen_pages(document.markdown, document.pages, document.page_count, page_range, "")


def batch_parts(parsed: ParsedText, page_range: PageRange) -> list[TextPart | None]:
    """`batch_pages` over a text file's parts (None: an empty page)."""
    markdown, pages = parts(parsed)
    count = parsed.document.page_count
    return chosen_pages(markdown, pages, count, page_range, None)


def chosen_pages(
    markdown: T, pages: Sequence[T], page_count: int | None, page_range: PageRange, empty: T
) -> list[T]:
    """The rule of `batch_pages`, whatever a page is (its text, or where it is)."""
    size = len(page_range)
    if pages:
        chosen = list(pages)
        if len(chosen) > size and len(chosen) >= page_range.last:
            chosen = chosen[page_range.first - 1 : page_range.last]
        return (chosen + [empty] * size)[:size]
    whole_file = page_count is not None and page_count > size
    first = markdown if (not whole_file or page_range.first == 1) else empty
    return [first] + [empty] * (size - 1)


class ParseBatchRunner:
    def __init__(
        self,
        uow_factory: UnitOfWorkFactory,
        storage: ObjectStorage,
        parser: Parser,
        workspace: Workspace,
        clock: Clock,
        pages: PageStore,
        settings: ParseCacheSettings,
        owner: str,
        holders: ClaimHolders | None = None,
    ) -> None:
        """`holders` tells which claims of this host a dead process left (released at
        once instead of waiting out their lease); without it only leases lapse."""
        self._uow_factory = uow_factory
        self._storage = storage
        self._parser = parser
        self._workspace = workspace
        self._clock = clock
        self._pages = pages
        self.settings = settings
        self.owner = owner
        self._holders = holders

    # -- claiming -------------------------------------------------------------------------

    async def claim(self, ids: Sequence[int] | None = None) -> ParseBatch | None:
        async with self._uow_factory() as uow:
            now = self._clock.now()
            claimed = await uow.parse_batches.claim_next(
                self.owner, now, now + self.settings.lease, ids=ids
            )
            await uow.commit()
        return claimed

    async def release_gone(self) -> int:
        """Give back the claims a dead process of this host left behind (a worker killed
        mid-parse): each is a compare-and-set on (owner, claims), so a claim renewed or
        taken over meanwhile is left alone. Returns how many were released."""
        holders = self._holders
        if holders is None:
            return 0
        async with self._uow_factory() as uow:
            held = await uow.parse_batches.held_by_prefix(holders.host_prefix)
        released = 0
        for batch in held:
            owner = batch.owner
            if owner is None or not holders.is_gone(owner):
                continue
            async with self._uow_factory() as uow:
                done = await uow.parse_batches.release(batch.id, owner, batch.claims)
                await uow.commit()
            if done:
                released += 1
                log.warning("parse batch %d released: its worker %s is gone", batch.id, owner)
        return released

    async def run_one(
        self, ids: Sequence[int] | None = None, local: LocalSource | None = None
    ) -> ParseBatch | None:
        """Claim one batch (among `ids` when given) and run it; None when none was free."""
        claimed = await self.claim(ids)
        if claimed is None:
            return None
        await self.execute(claimed, local)
        return claimed

    async def run_ids(
        self,
        ids: Sequence[int],
        local: LocalSource | None = None,
        *,
        timeout: float | None = None,
    ) -> RequestOutcome:
        """Run what is claimable among `ids` here, wait for the rest (taking over lapsed
        leases), and return how they ended. TimeoutError after `timeout` seconds."""
        wanted, finished_here = set(ids), set[int]()
        async with asyncio.timeout(timeout):
            while True:
                # once every batch was finished here, the claim that would find nothing
                # left is one write transaction per file saved (issue 24)
                while not wanted <= finished_here:
                    claimed = await self.claim(ids)
                    if claimed is None:
                        break
                    if await self.execute(claimed, local):
                        finished_here.add(claimed.id)
                async with self._uow_factory() as uow:
                    found = outcome(await uow.parse_batches.get_many(ids))
                if not found.unfinished:
                    return found
                if await self.release_gone():  # a dead worker held one: claim it now
                    continue
                await asyncio.sleep(self.settings.poll.total_seconds())

    async def run(self, stop: asyncio.Event) -> None:
        """One background loop: claim and run batches until `stop` is set. Idle, it looks
        again after `poll`, doubling up to `IDLE_POLL_MAX` seconds (a claim is a write
        transaction; an idle worker should not queue the pipeline's writers behind it)."""
        base = self.settings.poll.total_seconds()
        idle = base
        while not stop.is_set():
            try:
                ran = await self.run_one()
            except Exception:  # the store failed: say so, keep the loop alive
                log.exception("parse batch loop: claiming failed")
                ran = None
            if ran is not None:
                idle = base
                continue
            try:
                if await self.release_gone():
                    continue
            except Exception:
                log.exception("parse batch loop: releasing dead workers' claims failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=idle)
            idle = min(max(idle * 2, 0.05), IDLE_POLL_MAX)

    async def loops(self, count: int, stop: asyncio.Event) -> None:
        await asyncio.gather(*(self.run(stop) for _ in range(count)))

    @contextlib.asynccontextmanager
    async def running(self, count: int) -> AsyncIterator[None]:
        """`count` background loops while inside (none for 0); on leaving, stop them (a
        batch being parsed is given back) and wait 10 s at most."""
        if count < 1:
            yield
            return
        stop = asyncio.Event()
        loops = asyncio.create_task(self.loops(count, stop))
        try:
            yield
        finally:
            stop.set()
            try:
                await asyncio.wait_for(loops, timeout=10)
            except TimeoutError:
                log.warning("parse batch loops did not stop in 10 s")

    # -- running one claimed batch --------------------------------------------------------

    async def execute(self, batch: ParseBatch, local: LocalSource | None = None) -> bool:
        """Parse a claimed batch and end it (done or failed); False when the claim was
        taken over meanwhile, so this run's result was dropped."""
        if batch.claims > MAX_CLAIMS:
            return await self._fail(
                batch,
                BatchFailure(
                    FailureCode.PARSE_ENGINE_FAILED,
                    f"claimed {batch.claims} times: every worker parsing it stopped",
                ),
            )
        renewing = asyncio.create_task(self._renew(batch))
        try:
            backend, warnings = await self._parse_and_store(batch, local)
        except BatchFailure as failure:
            return await self._fail(batch, failure)
        except asyncio.CancelledError:  # stopping mid-parse: give the batch back
            with contextlib.suppress(Exception):
                await asyncio.shield(self._release(batch))
            raise
        finally:
            renewing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewing
        async with self._uow_factory() as uow:
            held = await uow.parse_batches.finish(
                batch.id, self.owner, batch.claims, self._clock.now(), backend, warnings
            )
            await uow.commit()
        if not held:
            log.warning("parse batch %d: the claim was taken over; its result is dropped", batch.id)
        return held

    async def _parse_and_store(
        self, batch: ParseBatch, local: LocalSource | None
    ) -> tuple[str, tuple[str, ...]]:
        file_type = batch.source.file_type
        options = options_for(batch, self.settings)
        temp = f"batch-{batch.id}-{batch.claims}-{self.owner}"
        try:
            # the text goes from the parser to the batch's object through a file: this
            # process never holds it whole (issue 24)
            with self._workspace.temp_file(f"{temp}-text", "txt") as text_path:
                with self._workspace.temp_file(temp, file_type) as path:
                    if local is not None and local.sha256 == batch.sha256 and local.path.exists():
                        source = local.path
                    else:
                        await self._download(batch, path)
                        source = path
                    parsed = await asyncio.to_thread(
                        parse_to_file, self._parser, source, file_type, options, text_path
                    )
                document = parsed.document
                await self._pages.write_parts(batch, parsed, batch_parts(parsed, batch.page_range))
        except ParseError as error:
            raise BatchFailure(error.failure_code, error.reason) from error
        except BatchFailure:
            raise
        except (StorageError, OSError) as error:
            if is_disk_full(error):
                raise BatchFailure(FailureCode.TEMP_DISK_FULL, describe(error)) from error
            raise BatchFailure(FailureCode.PARSED_FILE_UPLOAD_FAILED, describe(error)) from error
        except Exception as error:  # the parser failed in a way it did not name
            raise BatchFailure(FailureCode.PARSE_ENGINE_FAILED, describe(error)) from error
        return document.backend or options.pdf_parser_backend.value, tuple(document.warnings)

    async def _download(self, batch: ParseBatch, path: Path) -> None:
        bucket, key = batch.source.bucket, batch.source.key
        try:
            await self._storage.get_to_file(bucket, key, path)
        except ObjectNotFound as error:
            raise BatchFailure(
                FailureCode.SOURCE_FILE_NOT_FOUND, f"{bucket}/{key}: {describe(error)}"
            ) from error

    async def _fail(self, batch: ParseBatch, failure: BatchFailure) -> bool:
        log.warning("parse batch %d failed: %s: %s", batch.id, failure.code.value, failure.message)
        async with self._uow_factory() as uow:
            held = await uow.parse_batches.fail(
                batch.id,
                self.owner,
                batch.claims,
                self._clock.now(),
                failure.code.value,
                without_paths(failure.message),
            )
            await uow.commit()
        return held

    async def _release(self, batch: ParseBatch) -> None:
        async with self._uow_factory() as uow:
            await uow.parse_batches.release(batch.id, self.owner, batch.claims)
            await uow.commit()

    async def _renew(self, batch: ParseBatch) -> None:
        """Keep the lease while the parse runs (every third of it)."""
        every = self.settings.lease.total_seconds() / 3
        while True:
            await asyncio.sleep(every)
            async with self._uow_factory() as uow:
                now = self._clock.now()
                held = await uow.parse_batches.renew(
                    batch.id, self.owner, batch.claims, now + self.settings.lease
                )
                await uow.commit()
            if not held:
                return
