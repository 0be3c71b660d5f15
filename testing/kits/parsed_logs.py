"""Contract kit for the parsed-log repository (`uow.parsed_logs`): round trip, the unique
task_id, the Markdown location and parse outcome, the source a task names."""

from __future__ import annotations

from datetime import timedelta

import pytest

from ragline.application.ports.repositories.errors import (
    DuplicateTaskId,
    PersistenceError,
)
from ragline.application.ports.unit_of_work import UnitOfWorkFactory
from ragline.application.tasks import RejectedBody
from ragline.domain.parse_run import (
    MarkdownLocation,
)
from ragline.testing.kits.persistence import (
    NO_TASK,
    StoreContract,
    at,
    stored_command,
    uid,
)


class ParsedLogRepositoryContract(StoreContract):
    """What every ParsedLogRepository must show; fixture `uow_factory`."""

    async def test_a_parsed_log_keeps_the_source_it_names(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        task_id, bare = uid("log"), uid("log")
        source = MarkdownLocation("源-bucket", "用户/1001/报告.pdf")
        async with uow_factory() as uow:
            added = await uow.parsed_logs.add(task_id, NO_TASK, at(0), source=source)
            await uow.parsed_logs.add(bare, NO_TASK, at(0))
            await uow.commit()
        async with uow_factory() as uow:
            stored = await uow.parsed_logs.get(task_id)
            without = await uow.parsed_logs.get(bare)
        assert added.source == source and stored is not None and stored.source == source
        assert without is not None and without.source is None

    async def test_parsed_log_round_trip_location_and_duplicates(
        self, uow_factory: UnitOfWorkFactory
    ) -> None:
        first_id, retry_id = uid("log"), uid("log")
        task = stored_command(first_id)
        rejected = RejectedBody(reason="invalid_fields: user_id", body_text='{"文件": 1')
        async with uow_factory() as uow:
            first = await uow.parsed_logs.add(first_id, task, at(0))
            retry = await uow.parsed_logs.add(retry_id, rejected, at(1), retry_of_task_id=first_id)
            await uow.commit()
        assert isinstance(first.id, int) and isinstance(retry.id, int)
        assert first.id != retry.id
        async with uow_factory() as uow:
            with pytest.raises(DuplicateTaskId):
                await uow.parsed_logs.add(first_id, rejected, at(2))
            await uow.parsed_logs.set_parsed_location(first_id, "md", "解析/文档.md")
            with pytest.raises(PersistenceError):
                await uow.parsed_logs.set_parsed_location(uid("missing"), "md", "k")
            await uow.parsed_logs.set_parse_outcome(
                first_id, "naive+tesseract", ("OCR: 2 of 2 pages", "页面范围 1-9 cut to 1-2")
            )
            with pytest.raises(PersistenceError):
                await uow.parsed_logs.set_parse_outcome(uid("missing"), "naive", ())
            await uow.commit()
        async with uow_factory() as uow:
            stored = await uow.parsed_logs.get(first_id)
            stored_retry = await uow.parsed_logs.get(retry_id)
            assert await uow.parsed_logs.get(uid("missing")) is None
        assert stored is not None and stored_retry is not None
        assert (stored.id, stored.task_id, stored.task) == (first.id, first_id, task)
        assert stored_retry.task == rejected
        assert stored.created_at == at(0) and stored.created_at.utcoffset() == timedelta(0)
        assert (stored.parsed_bucket, stored.parsed_object_key) == ("md", "解析/文档.md")
        assert stored.parse_backend == "naive+tesseract"
        assert stored.parse_warnings == ("OCR: 2 of 2 pages", "页面范围 1-9 cut to 1-2")
        assert stored.retry_of_task_id is None
        assert stored_retry == retry
