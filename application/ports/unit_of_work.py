"""The unit of work: one transaction over the repositories, which it exposes by name.

One `UnitOfWork` is one transaction. Nothing a repository writes is visible to others until
`commit()`; leaving the `async with` block without committing rolls back. Every status change
is a compare-and-set in storage (`UPDATE ... WHERE <allowed prior state>`) whose rowcount is
checked: a lost race raises `ConcurrentUpdate` (runs) or returns a count (chunk moves).
Datetimes passed in must be timezone-aware; they come back as aware UTC.

The unit of work collects the aggregates' events on commit (as cosmicpython's
`collect_new_events`): a run added or saved in it hands its pending events over once the
commit succeeded, so a caller never pulls them by hand and a rolled-back run keeps them.
The repositories live in `application/ports/repositories/`, one module per aggregate or
read model.
"""

from __future__ import annotations

from types import TracebackType
from typing import Protocol, Self

from ragline.application.ports.repositories.chunks import ChunkRepository
from ragline.application.ports.repositories.documents import DocumentRepository
from ragline.application.ports.repositories.model_configs import ModelConfigRepository
from ragline.application.ports.repositories.outbox import OutboxRepository
from ragline.application.ports.repositories.parse_batches import ParseBatchRepository
from ragline.application.ports.repositories.parsed_logs import ParsedLogRepository
from ragline.application.ports.repositories.reembeddings import ReembeddingRepository
from ragline.application.ports.repositories.runs import ParseRunRepository
from ragline.application.ports.repositories.uploads import UploadRepository
from ragline.domain.parse_run import RunEvent


class UnitOfWork(Protocol):
    # read-only: an adapter's unit of work holds its own repository types
    @property
    def parsed_logs(self) -> ParsedLogRepository: ...

    @property
    def runs(self) -> ParseRunRepository: ...

    @property
    def documents(self) -> DocumentRepository: ...

    @property
    def chunks(self) -> ChunkRepository: ...

    @property
    def model_configs(self) -> ModelConfigRepository: ...

    @property
    def outbox(self) -> OutboxRepository: ...

    @property
    def parse_batches(self) -> ParseBatchRepository: ...

    @property
    def reembeddings(self) -> ReembeddingRepository: ...

    @property
    def uploads(self) -> UploadRepository: ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Roll back whatever was not committed, release the connection."""
        ...

    async def commit(self) -> None:
        """Make the writes durable, then take the pending events of every run added or
        saved since the last commit (they wait in `collect_new_events`)."""
        ...

    async def rollback(self) -> None:
        """Discard the writes; the runs keep their pending events."""
        ...

    def collect_new_events(self) -> list[RunEvent]:
        """The events the commits of this unit took from its runs, in order, once."""
        ...


class UnitOfWorkFactory(Protocol):
    def __call__(self) -> UnitOfWork:
        """A new unit of work (one transaction on its own connection)."""
        ...
