"""ReadParse: batch statuses by id, coverage of a file at a tier, and the cached Markdown.

Content is assembled page by page from the newest done batch of each page (the domain's
read rule). Whether a request succeeded is a different question, answered by its wait
batches only (`outcome`): an older done page is readable even when this request failed.

Every read names its caller: a tenant sees only batches of bytes it holds, and a sha256 it
does not hold reads exactly like one nobody has seen (application/access/parse_cache.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import attrs

from ragline.application.access.caller import Caller
from ragline.application.access.parse_cache import may_see, visible_batches
from ragline.application.parsing.page_store import PageStore
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.domain.parse_batch import (
    Coverage,
    PageRange,
    ParseBatch,
    ParseTier,
    RequestOutcome,
    coverage,
    outcome,
)

PARALLEL_READS = 8  # batch objects fetched at once


class NotCached(LookupError):
    """Some requested pages have no done batch."""

    def __init__(self, missing: Sequence[int]) -> None:
        shown = ", ".join(map(str, missing[:20])) + (" ..." if len(missing) > 20 else "")
        super().__init__(f"pages not parsed yet at this tier: {shown}")
        self.missing = list(missing)


@attrs.frozen
class CachedMarkdown:
    markdown: str
    pages: tuple[str, ...]
    backends: tuple[str, ...]  # the engines that parsed these pages, in page order, distinct
    batch_ids: tuple[int, ...]  # the batch each page was read from
    warnings: tuple[str, ...] = ()  # the parser's, of the batches read, distinct


def assemble(pages: Sequence[str]) -> str:
    """A document's Markdown is its pages in order, blank pages left out; a one-page
    document is its page exactly (what the parser produced)."""
    if len(pages) == 1:
        return pages[0]
    return "\n\n".join(page.strip("\n") for page in pages if page.strip())


class ReadParse:
    def __init__(self, uow_factory: UnitOfWorkFactory, pages: PageStore) -> None:
        self._uow_factory = uow_factory
        self._pages = pages

    async def batches(self, ids: Sequence[int], *, caller: Caller) -> list[ParseBatch]:
        """The batches with these ids the caller may see, in the order asked (others are
        left out exactly like ids that do not exist)."""
        async with self._uow_factory() as uow:
            return await visible_batches(uow, caller, await uow.parse_batches.get_many(ids))

    async def outcome(self, ids: Sequence[int], *, caller: Caller) -> RequestOutcome:
        return outcome(await self.batches(ids, caller=caller))

    async def known(self, sha256: str, tier: ParseTier, *, caller: Caller) -> list[ParseBatch]:
        """Every batch of (sha256, tier); none when the caller may not see these bytes."""
        async with self._uow_factory() as uow:
            if not await may_see(uow, caller, sha256):
                return []
            return await uow.parse_batches.list_for(sha256, tier)

    async def coverage(
        self,
        sha256: str,
        tier: ParseTier,
        page_range: PageRange | None,
        *,
        caller: Caller,
        known: Sequence[ParseBatch] | None = None,
    ) -> Coverage | None:
        """None: nothing is known of this file at this tier (for this caller). Without a
        range: the pages batches have been planned for (1 to the highest page any batch
        covers). `known`: what `known` just answered the caller."""
        batches = await self.known(sha256, tier, caller=caller) if known is None else known
        if not batches:
            return None
        if page_range is None:
            page_range = PageRange(1, max(b.page_range.last for b in batches))
        return coverage(page_range, batches)

    async def markdown(
        self,
        sha256: str,
        tier: ParseTier,
        page_range: PageRange,
        *,
        caller: Caller,
        known: Sequence[ParseBatch] | None = None,
    ) -> CachedMarkdown:
        """`known`: the batches of (sha256, tier) when they were just read for the caller
        (through `known`, or planning a request of its own)."""
        batches = await self.known(sha256, tier, caller=caller) if known is None else known
        found = coverage(page_range, batches)
        if found.missing:
            raise NotCached(found.missing)
        gate = asyncio.Semaphore(PARALLEL_READS)

        used = list({b.id: b for b in found.done.values()}.values())

        async def read(batch: ParseBatch) -> dict[int, str]:
            async with gate:
                return await self._pages.read(batch)

        held = dict(zip([b.id for b in used], await asyncio.gather(*map(read, used)), strict=True))
        texts = [held[batch.id].get(page, "") for page, batch in sorted(found.done.items())]
        chosen = [found.done[p] for p in sorted(found.done)]
        backends = tuple(dict.fromkeys(b.backend or "" for b in chosen if b.backend))
        warnings = tuple(dict.fromkeys(w for b in dict.fromkeys(chosen) for w in b.warnings))
        return CachedMarkdown(
            assemble(texts), tuple(texts), backends, tuple(b.id for b in chosen), warnings
        )
