"""One shape of a task inside (docs/wire-contracts.md): the bytes that go out, and the rows the
store keeps, are the same as when the application encoded them itself."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ragline.adapters.persistence.sql.repositories.parsed_logs import payload_json, stored_of
from ragline.adapters.wire_format.json import (
    JsonResultPublisher,
    JsonTaskPublisher,
    decode_task,
)
from ragline.application.pipeline.results import build_result
from ragline.application.tasks import (
    ParseTaskCommand,
    RejectedBody,
    UnreadableTask,
    result_of_record,
    result_record,
)
from ragline.contracts import wire
from ragline.domain.parse_run import FailureCode, ParseRun, TaskIdentity
from tests.fakes.messaging import FakePublisher

EXAMPLES = Path(__file__).resolve().parents[2] / "contracts" / "examples"
TASKS = ["parse_task.first_parse.json", "parse_task.retry.json", "parse_task.spreadsheet.json"]
RESULTS = ["parse_result.success.json", "parse_result.failed.json"]


def _task(name: str) -> ParseTaskCommand:
    task = decode_task((EXAMPLES / name).read_bytes())
    assert isinstance(task, ParseTaskCommand)
    return task


@pytest.mark.parametrize("name", TASKS)
async def test_a_published_task_is_the_parse_task_message_of_the_example(name: str) -> None:
    publisher = FakePublisher()
    task = _task(name)
    await JsonTaskPublisher(publisher).publish(task)
    message = wire.ParseTask.model_validate_json((EXAMPLES / name).read_bytes())
    assert publisher.published == [(message.file_type, wire.encode_parse_task(message))]


@pytest.mark.parametrize("name", TASKS)
def test_the_stored_task_is_the_canonical_message_and_reads_back(name: str) -> None:
    """The parsed log's `payload_json` is byte for byte what the ParseTask encoder writes
    (the text rows held before the task was stored as a value), and reads back as the task."""
    task = _task(name)
    message = wire.ParseTask.model_validate_json((EXAMPLES / name).read_bytes())
    assert payload_json(task) == wire.encode_parse_task(message).decode("utf-8")
    assert stored_of(payload_json(task)) == task


def test_a_rejected_body_is_stored_as_before_and_reads_back() -> None:
    rejected = RejectedBody(reason="invalid_fields: user_id", body_text='{"文件": 1')
    text = payload_json(rejected)
    assert text == json.dumps(
        {"rejected": rejected.reason, "body": rejected.body_text}, ensure_ascii=False
    )
    assert stored_of(text) == rejected
    assert isinstance(stored_of("not json"), RejectedBody)


@pytest.mark.parametrize("name", RESULTS)
async def test_a_published_result_is_the_parse_result_message(name: str) -> None:
    body = (EXAMPLES / name).read_bytes()
    message = wire.ParseResult.model_validate_json(body)
    result = result_of_record(json.loads(body))  # an outbox row written as the message itself
    assert result_of_record(json.loads(json.dumps(result_record(result)))) == result
    publisher, dead_letters = FakePublisher(), FakePublisher()
    await JsonResultPublisher(publisher).publish(result)
    await JsonResultPublisher(dead_letters).publish(result, {"x-dead-letter-reason": "r"})
    expected = (message.task_id, wire.encode_parse_result(message))
    assert publisher.published == [expected] and dead_letters.published == [expected]
    assert dead_letters.headers == [{"x-dead-letter-reason": "r"}]


def test_an_unreadable_id_is_zero_from_the_edge_on() -> None:
    body = json.dumps({"task_id": "t-1", "user_id": 2**63, "dataset_id": "3"}).encode()
    decoded = decode_task(body)
    assert isinstance(decoded, UnreadableTask)
    assert (decoded.user_id, decoded.dataset_id) == (0, 0)
    assert decoded.identity("t-1").user_id == "0"


def test_a_run_whose_ids_are_not_the_wire_s_builds_no_result() -> None:
    """No id is answered under another number: only decimal text (every run opened from a
    decoded task) turns back into the wire's integer."""
    at = datetime(2026, 1, 1, tzinfo=UTC)
    for ids, ok in ((("1001", "7", "3"), True), (("file-1", "7", "3"), False)):
        identity = TaskIdentity("t", ids[0], "2", ids[1], ids[2], "pdf")
        run = ParseRun.open(identity, at)
        run.reject(FailureCode.INVALID_TASK_CONTEXT, "bad", at)
        if ok:
            result = build_result(run, 1)
            assert (result.original_file_id, result.user_id, result.dataset_id) == (1001, 7, 3)
        else:
            with pytest.raises(ValueError):
                build_result(run, 1)
