"""decode_parse_task never raises, and keeps a readable task_id for the FAILED answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from ragline.contracts.wire import (
    ParseTask,
    RejectedMessage,
    RejectionKind,
    decode_parse_task,
    encode_parse_task,
)
from ragline.contracts.wire.codec import MAX_NESTING
from ragline.contracts.wire.parse_task import TaskId

EXAMPLES = Path(__file__).resolve().parents[2] / "contracts" / "examples"
FIRST = json.loads((EXAMPLES / "parse_task.first_parse.json").read_text(encoding="utf-8"))


def dumps(document: Any) -> bytes:
    return json.dumps(document, ensure_ascii=False).encode("utf-8")


def rejected(body: bytes, **kwargs: Any) -> RejectedMessage:
    outcome = decode_parse_task(body, **kwargs)
    assert isinstance(outcome, RejectedMessage), outcome
    return outcome


@pytest.mark.parametrize("name", ["parse_task.first_parse.json", "parse_task.retry.json"])
def test_the_seed_examples_decode(name: str) -> None:
    outcome = decode_parse_task((EXAMPLES / name).read_bytes())
    assert isinstance(outcome, ParseTask)


def test_a_utf8_byte_order_mark_is_tolerated() -> None:
    assert isinstance(decode_parse_task(b"\xef\xbb\xbf" + dumps(FIRST)), ParseTask)


def test_invalid_json_keeps_a_scannable_task_id() -> None:
    body = b'{"task_id": "task-7", "user_id": 1,'
    outcome = rejected(body)
    assert outcome.kind is RejectionKind.INVALID_JSON
    assert outcome.task_id == "task-7"
    assert rejected(b"not json at all").task_id is None


def test_invalid_json_constants_are_rejected() -> None:
    outcome = rejected(dumps(FIRST).replace(b"12345", b"NaN"))
    assert outcome.kind is RejectionKind.INVALID_JSON
    assert outcome.task_id == "task-20260516-001"


def test_invalid_utf8_keeps_a_task_id_that_decodes_cleanly() -> None:
    body = dumps(FIRST).replace("技术规范".encode(), b"\xff\xfe")
    outcome = rejected(body)
    assert outcome.kind is RejectionKind.INVALID_UTF8
    assert outcome.task_id == "task-20260516-001"
    broken_id = dumps(FIRST).replace(b"task-20260516-001", b"task-\xff")
    assert rejected(broken_id).task_id is None


def test_wrong_types_and_missing_fields_name_the_fields() -> None:
    body = dict(FIRST, user_id="1001")
    del body["md_bucket"]
    outcome = rejected(dumps(body))
    assert outcome.kind is RejectionKind.INVALID_FIELDS
    assert outcome.task_id == "task-20260516-001"
    assert "user_id" in outcome.reason and "md_bucket" in outcome.reason


def test_a_retry_without_previous_task_id_is_rejected_with_its_task_id() -> None:
    outcome = rejected(dumps(dict(FIRST, is_retry=True)))
    assert outcome.task_id == "task-20260516-001"
    assert "previous_task_id" in outcome.reason


@pytest.mark.parametrize("task_id", [None, 17, "", "   ", ["a"], "x" * 257])
def test_an_unusable_task_id_is_not_reported(task_id: object) -> None:
    assert rejected(dumps(dict(FIRST, task_id=task_id))).task_id is None


@pytest.mark.parametrize("document", [[FIRST], "task", 3, None, True])
def test_a_body_that_is_not_an_object_is_rejected(document: object) -> None:
    outcome = rejected(dumps(document))
    assert outcome.kind is RejectionKind.NOT_AN_OBJECT
    assert outcome.task_id is None


def test_oversize_bodies_are_not_parsed_but_the_task_id_is_scanned() -> None:
    body = dumps(dict(FIRST, padding="x" * 5000))
    assert isinstance(decode_parse_task(body), ParseTask)
    outcome = rejected(body, max_bytes=4096)
    assert outcome.kind is RejectionKind.OVERSIZE
    assert outcome.task_id == "task-20260516-001"
    assert str(len(body)) in outcome.reason


def test_deep_nesting_and_huge_numbers_do_not_escape() -> None:
    deep = b'{"task_id": "deep", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    assert rejected(deep, max_bytes=10**6).task_id == "deep"
    huge = dumps(FIRST).replace(b"12345", b"9" * 5000)
    assert rejected(huge).task_id == "task-20260516-001"


def decoded_at_stack_depth(body: bytes, frames: int) -> ParseTask | RejectedMessage:
    """Decode `frames` calls deep: how deep the caller already is must not change the answer."""
    if frames == 0:
        return decode_parse_task(body)
    return decoded_at_stack_depth(body, frames - 1)


@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 700, 1975, 4999])
def test_deep_nesting_gets_one_answer_at_any_stack_depth(depth: int) -> None:
    """A nested body once got "not an object" where the stack was shallow and "invalid JSON,
    task_id scanned" where json.loads hit RecursionError (the hostile-message campaign caught
    the consumer and its test disagreeing). Past MAX_NESTING it is refused before parsing."""
    fields = dumps(dict(FIRST, task_id="nested-1"))
    body = b"[" * depth + fields + b"]" * depth
    answers = {decoded_at_stack_depth(body, frames) for frames in (0, 200, 600)}
    assert len(answers) == 1, answers
    (answer,) = answers
    assert isinstance(answer, RejectedMessage) and answer.kind is RejectionKind.INVALID_JSON
    assert answer.task_id == "nested-1" and f"deeper than {MAX_NESTING}" in answer.reason


def test_nesting_up_to_the_bound_is_parsed_and_brackets_in_strings_do_not_count() -> None:
    shallow = b"[" * (MAX_NESTING - 1) + dumps(FIRST) + b"]" * (MAX_NESTING - 1)
    assert rejected(shallow).kind is RejectionKind.NOT_AN_OBJECT
    bracketed = dumps(dict(FIRST, source_filename="[" * 500 + '\\"{' * 100 + ".pdf"))
    assert isinstance(decode_parse_task(bracketed), ParseTask)


IDS = ["original_file_id", "document_parse_task_id", "user_id", "dataset_id"]


@pytest.mark.parametrize("field", IDS)
@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, 10**30])
def test_ids_past_a_java_long_are_invalid_fields(field: str, value: int) -> None:
    """An id is a 64-bit signed integer (issue 18: wider ones reached storage)."""
    outcome = rejected(dumps(dict(FIRST, **{field: value})))
    assert outcome.kind is RejectionKind.INVALID_FIELDS and field in outcome.reason
    assert outcome.task_id == "task-20260516-001"
    edge = decode_parse_task(dumps(dict(FIRST, **{field: 2**63 - 1})))
    assert isinstance(edge, ParseTask) and getattr(edge, field) == 2**63 - 1


def test_reasons_are_short() -> None:
    body = {key: ["wrong"] * 50 for key in FIRST}
    assert len(rejected(dumps(body)).reason) <= 400


def test_encoded_tasks_decode_to_the_same_task() -> None:
    task = ParseTask.model_validate(FIRST)
    assert decode_parse_task(encode_parse_task(task)) == task


@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_raise(body: bytes) -> None:
    outcome = decode_parse_task(body)
    assert isinstance(outcome, ParseTask | RejectedMessage)


scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
json_values = (
    scalars | st.lists(scalars, max_size=2) | st.dictionaries(st.text(max_size=3), scalars)
)
TASK_ID = TypeAdapter[str](TaskId)


def acceptable_task_id(value: object) -> bool:
    try:
        TASK_ID.validate_python(value)
    except ValidationError:
        return False
    return True


@given(st.dictionaries(st.sampled_from([*FIRST, "is_retry", "previous_task_id"]), json_values))
def test_mutated_fields_never_raise_and_keep_string_task_ids(changes: dict[str, Any]) -> None:
    document = dict(FIRST, **changes)
    outcome = decode_parse_task(dumps(document))
    if isinstance(outcome, RejectedMessage):
        task_id = document["task_id"]
        assert outcome.task_id == (task_id if acceptable_task_id(task_id) else None)
    else:
        assert outcome.task_id == document["task_id"]


@given(st.binary(min_size=1, max_size=40), st.integers(min_value=0, max_value=400))
def test_corrupting_a_valid_body_never_raises(garbage: bytes, at: int) -> None:
    body = dumps(FIRST)
    position = min(at, len(body))
    outcome = decode_parse_task(body[:position] + garbage + body[position:])
    assert isinstance(outcome, ParseTask | RejectedMessage)
