"""ParseTask / ParseResult follow docs/design/0005-wire-contract.md: required fields, defaults,
strict types."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from ragline.contracts.wire import (
    ParseResult,
    ParseTask,
    PdfParserBackend,
    TaskStatus,
    TriggerMode,
    decode_parse_result,
    encode_parse_result,
    encode_parse_task,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "contracts" / "examples"
TASK_REQUIRED = [
    "task_id",
    "original_file_id",
    "document_parse_task_id",
    "user_id",
    "dataset_id",
    "file_type",
    "source_bucket",
    "source_object_key",
    "source_filename",
    "md_bucket",
    "md_object_key",
]
RESULT_REQUIRED = [
    "task_id",
    "original_file_id",
    "document_parsed_log_id",
    "dataset_id",
    "user_id",
    "task_status",
    "parse_finished_at",
]


def example(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((EXAMPLES / name).read_text(encoding="utf-8"))
    return loaded


def test_the_seed_first_parse_example_parses() -> None:
    task = ParseTask.model_validate_json((EXAMPLES / "parse_task.first_parse.json").read_bytes())
    assert task.task_id == "task-20260516-001"
    assert task.source_filename == "技术规范.pdf"
    assert task.trigger_mode is TriggerMode.UPLOAD_AUTO
    assert task.pdf_parser_backend is PdfParserBackend.MINERU
    assert task.image_prefix == "images/2026/05/16/doc-001/"
    assert task.is_retry is False and task.previous_task_id is None
    assert task.routing_key == "pdf"


def test_the_seed_retry_example_parses() -> None:
    task = ParseTask.model_validate_json((EXAMPLES / "parse_task.retry.json").read_bytes())
    assert task.is_retry is True
    assert task.previous_task_id == "task-20260516-001"
    assert task.trigger_mode is TriggerMode.MANUAL_RETRY
    assert task.image_bucket is None and task.docling_force_ocr is None


@pytest.mark.parametrize("name", ["parse_result.success.json", "parse_result.failed.json"])
def test_the_result_examples_parse(name: str) -> None:
    result = ParseResult.model_validate(example(name))
    assert result.parse_finished_at.tzinfo is not None
    assert result.routing_key == "task-20260516-001"


def test_optional_fields_take_their_documented_defaults() -> None:
    minimal = {key: example("parse_task.first_parse.json")[key] for key in TASK_REQUIRED}
    task = ParseTask.model_validate(minimal)
    assert task.trigger_mode is TriggerMode.UPLOAD_AUTO
    assert task.pdf_parser_backend is PdfParserBackend.MINERU
    assert task.is_retry is False
    assert (task.docling_force_ocr, task.image_bucket, task.image_prefix) == (None, None, None)
    assert task.previous_task_id is None


@pytest.mark.parametrize("field", TASK_REQUIRED)
def test_each_required_task_field_is_required(field: str) -> None:
    body = example("parse_task.first_parse.json")
    del body[field]
    with pytest.raises(ValidationError) as caught:
        ParseTask.model_validate(body)
    assert [error["loc"] for error in caught.value.errors()] == [(field,)]


@pytest.mark.parametrize("field", RESULT_REQUIRED)
def test_each_required_result_field_is_required(field: str) -> None:
    body = example("parse_result.success.json")
    del body[field]
    with pytest.raises(ValidationError):
        ParseResult.model_validate(body)


def test_unknown_fields_are_ignored() -> None:
    body = example("parse_task.first_parse.json") | {"added_in_2027": {"x": 1}, "priority": 5}
    task = ParseTask.model_validate(body)
    assert "added_in_2027" not in task.model_dump()
    result = ParseResult.model_validate(example("parse_result.success.json") | {"extra": True})
    assert "extra" not in result.model_dump()


def test_a_retry_must_name_its_previous_task() -> None:
    body = example("parse_task.retry.json")
    del body["previous_task_id"]
    with pytest.raises(ValidationError, match="previous_task_id is required"):
        ParseTask.model_validate(body)
    with pytest.raises(ValidationError):
        ParseTask.model_validate(body | {"previous_task_id": ""})
    with pytest.raises(ValidationError):
        ParseTask.model_validate(body | {"previous_task_id": None})


def test_a_first_parse_may_carry_a_previous_task_id() -> None:
    body = example("parse_task.first_parse.json") | {"previous_task_id": "old"}
    assert ParseTask.model_validate(body).previous_task_id == "old"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("original_file_id", "12345"),
        ("original_file_id", 12345.0),
        ("user_id", True),
        ("task_id", 42),
        ("task_id", ""),
        ("file_type", ""),
        ("source_bucket", None),
        ("is_retry", "false"),
        ("is_retry", 0),
        ("docling_force_ocr", "yes"),
        ("trigger_mode", "UPLOAD_AUTO"),
        ("trigger_mode", "cron"),
        ("pdf_parser_backend", "docling"),
        ("image_prefix", ["a"]),
    ],
)
def test_wrong_types_and_values_are_rejected_not_coerced(field: str, value: object) -> None:
    body = example("parse_task.first_parse.json") | {field: value}
    with pytest.raises(ValidationError):
        ParseTask.model_validate(body)


@pytest.mark.parametrize("backend", ["mineru", "opendataloader", "naive", "auto"])
def test_every_pdf_backend_is_accepted(backend: str) -> None:
    body = example("parse_task.first_parse.json") | {"pdf_parser_backend": backend}
    assert ParseTask.model_validate(body).pdf_parser_backend.value == backend


def test_task_encoding_roundtrips_and_keeps_non_ascii_as_utf8() -> None:
    task = ParseTask.model_validate(example("parse_task.retry.json"))
    body = encode_parse_task(task)
    assert "技术规范".encode() in body
    assert ParseTask.model_validate_json(body) == task


def test_result_encoding_roundtrips_with_an_iso8601_offset() -> None:
    result = ParseResult(
        task_id="t-1",
        original_file_id=1,
        document_parsed_log_id=2,
        dataset_id=3,
        user_id=4,
        task_status=TaskStatus.FAILED,
        parse_finished_at=datetime(2026, 5, 16, 8, 0, tzinfo=UTC),
        failure_reason="PARSE_ENGINE_FAILED:boom",
        user_message="解析失败",
    )
    body = encode_parse_result(result)
    document = json.loads(body)
    assert document["task_status"] == "failed"
    assert datetime.fromisoformat(document["parse_finished_at"]) == result.parse_finished_at
    assert "解析失败".encode() in body
    assert decode_parse_result(body) == result


def test_result_rejects_naive_times_unknown_statuses_and_long_reasons() -> None:
    base = example("parse_result.failed.json")
    with pytest.raises(ValidationError):
        ParseResult.model_validate(base | {"parse_finished_at": "2026-05-16T08:00:00"})
    with pytest.raises(ValidationError):
        ParseResult.model_validate(base | {"task_status": "partial"})
    with pytest.raises(ValidationError):
        ParseResult.model_validate(base | {"failure_reason": "X" * 513})
    accepted = ParseResult.model_validate(base | {"failure_reason": "X" * 512})
    assert accepted.parse_finished_at.utcoffset() == timedelta(hours=8)
    assert accepted.parse_finished_at.tzinfo == timezone(timedelta(hours=8))
