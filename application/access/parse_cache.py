"""Who sees which parse: the parse cache is shared, readable only by those who hold the bytes.

Identical bytes are parsed once for every tenant, but a tenant sees a batch (its id, sha256,
coverage, Markdown) only for bytes it holds: a run of its own read them (CLEANING records
the run's user), or a parse request of its own resolved an object it may read. A sha256 it
does not hold is answered exactly like one nobody has seen, so nothing tells "exists but not
yours" from "does not exist", and batch ids are not enumerable. The service sees all.

ReadParse and SubmitParse ask here, inside the unit of work they read in; planning records
a holder in the unit of work that plans the batches.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ragline.application.access.caller import Caller
from ragline.application.ports.unit_of_work import UnitOfWork
from ragline.domain.parse_batch import ParseBatch


async def visible_sha256s(uow: UnitOfWork, caller: Caller, sha256s: Iterable[str]) -> set[str]:
    """The sha256s among these the caller may see: all for the service, held ones for a tenant."""
    wanted = set(sha256s)
    if caller.user_id is None or not wanted:
        return wanted
    return await uow.parse_batches.held_by(caller.user_id, wanted)


async def may_see(uow: UnitOfWork, caller: Caller, sha256: str) -> bool:
    return sha256 in await visible_sha256s(uow, caller, [sha256])


async def visible_batches(
    uow: UnitOfWork, caller: Caller, batches: Sequence[ParseBatch]
) -> list[ParseBatch]:
    """The batches the caller may see, in order; the others are left out like unknown ids."""
    shown = await visible_sha256s(uow, caller, {b.sha256 for b in batches})
    return [b for b in batches if b.sha256 in shown]


async def record_holder(uow: UnitOfWork, user_id: str | None, sha256: str) -> None:
    """`user_id` holds these bytes from now on (None: the service, nothing to record)."""
    if user_id is not None:
        await uow.parse_batches.add_holder(sha256, user_id)
