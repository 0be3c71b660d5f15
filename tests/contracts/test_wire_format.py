"""JsonWireFormat: the wire models <-> the application's values, both ways, losing nothing."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path

import attrs
import pytest

from ragline.adapters.wire_format.json import JsonWireFormat
from ragline.application.ports.parser import SUPPORTED_FILE_TYPES, PdfParserBackend
from ragline.application.tasks import (
    ParseTaskCommand,
    TaskIssuer,
    TaskResult,
    TaskStatus,
    TriggerMode,
    UnreadableTask,
)
from ragline.contracts import wire

EXAMPLES = Path(__file__).resolve().parents[2] / "contracts" / "examples"
FORMAT = JsonWireFormat()


@pytest.mark.parametrize(
    ("wire_enum", "application_enum"),
    [
        (wire.TriggerMode, TriggerMode),
        (wire.PdfParserBackend, PdfParserBackend),
        (wire.TaskStatus, TaskStatus),
        (wire.TaskIssuer, TaskIssuer),
    ],
)
def test_the_two_spellings_of_each_vocabulary_are_equal(
    wire_enum: type[StrEnum], application_enum: type[StrEnum]
) -> None:
    assert [m.value for m in wire_enum] == [m.value for m in application_enum]


def test_the_wire_lists_exactly_the_file_types_the_parsers_take() -> None:
    assert set(wire.FILE_TYPES) == SUPPORTED_FILE_TYPES
    assert len(wire.FILE_TYPES) == len(set(wire.FILE_TYPES))


@pytest.mark.parametrize(
    "name", ["parse_task.first_parse.json", "parse_task.retry.json", "parse_task.spreadsheet.json"]
)
def test_an_example_task_decodes_to_its_fields_and_encodes_back(name: str) -> None:
    body = (EXAMPLES / name).read_bytes()
    command = FORMAT.decode_task(body)
    assert isinstance(command, ParseTaskCommand)
    message = wire.ParseTask.model_validate_json(body)
    assert attrs.asdict(command) == message.model_dump()
    assert FORMAT.decode_task(FORMAT.encode_task(command)) == command
    assert json.loads(FORMAT.encode_task(command)) == json.loads(message.model_dump_json())


def test_a_body_that_is_no_task_keeps_its_task_id_ids_and_start() -> None:
    body = json.dumps(
        {"task_id": "t-1", "user_id": 7, "dataset_id": True, "file_type": "pdf", "x": "y" * 9000}
    ).encode()
    decoded = FORMAT.decode_task(body)
    assert isinstance(decoded, UnreadableTask)
    assert decoded.task_id == "t-1"
    assert decoded.reason.startswith("invalid_fields:")
    assert (decoded.user_id, decoded.dataset_id, decoded.file_type) == (7, 0, "pdf")
    assert decoded.body_text == body[:8192].decode()


def test_an_unreadable_body_without_task_id_says_why() -> None:
    decoded = FORMAT.decode_task(b"\xff{")
    assert isinstance(decoded, UnreadableTask)
    assert decoded.task_id is None
    assert decoded.reason.startswith("invalid_utf8:")


def test_a_result_round_trips_and_matches_the_schema_model() -> None:
    result = TaskResult(
        task_id="t-1",
        original_file_id=1,
        document_parsed_log_id=2,
        dataset_id=3,
        user_id=4,
        task_status=TaskStatus.FAILED,
        parse_finished_at=datetime(2026, 1, 1, tzinfo=UTC),
        failure_reason="PARSE_ENGINE_FAILED:boom",
        user_message="文件解析失败",
    )
    body = FORMAT.encode_result(result)
    assert FORMAT.decode_result(body) == result
    assert wire.ParseResult.model_validate_json(body).task_status is wire.TaskStatus.FAILED


def test_a_body_that_is_no_result_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        FORMAT.decode_result(b'{"task_id": "t"}')


def test_the_dead_letter_headers_are_spelled_alike_on_both_sides() -> None:
    from ragline.application.ports import messaging

    assert wire.DEAD_LETTER_REASON_HEADER == messaging.DEAD_LETTER_REASON_HEADER
    assert wire.DEAD_LETTER_ORIGIN_HEADER == messaging.DEAD_LETTER_ORIGIN_HEADER
    assert wire.DEAD_LETTER_ATTEMPTS_HEADER == messaging.DEAD_LETTER_ATTEMPTS_HEADER
