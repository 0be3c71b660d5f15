"""Failure codes and the stored `CODE:detail` reason."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragline.domain.parse_run import (
    CODE_INFO,
    MAX_FAILURE_REASON_LENGTH,
    TRUNCATION_MARK,
    FailureCode,
    FailureReason,
)
from ragline.domain.parse_run.failure import storable_text
from ragline.testing.parse_run import failure_codes, failure_details

SPEC_CODES = [
    "INVALID_TASK_CONTEXT",
    "DUPLICATE_TASK",
    "INTERRUPTED_TASK",
    "SOURCE_FILE_NOT_FOUND",
    "UNSUPPORTED_FILE_TYPE",
    "TEMP_DISK_FULL",
    "PARSE_ENGINE_FAILED",
    "FILE_CONTENT_INVALID",  # issue 12: corrupt/mislabelled bytes are not retryable
    "PARSED_FILE_UPLOAD_FAILED",
    "RESULT_NOTIFY_FAILED",
    "INTERNAL_UNKNOWN_ERROR",
    "LLM_CONFIG_MISSING",
    "EMBEDDING_DIMENSION_UNSUPPORTED",
    "RETRY_VALIDATION_FAILED",
    "CHUNKING_FAILED",
    "VECTORIZING_FAILED",
    "PRETOKENIZE_FAILED",
    "KEYWORD_DELETE_FAILED",
    "KEYWORD_INDEX_UNAVAILABLE",
    "KEYWORD_INDEXING_FAILED",
    "SPARSE_VECTORIZING_FAILED",
    "NO_TEXT_LAYER",
    "MINERU_UNAVAILABLE",
]


def test_every_spec_code_exists_with_both_messages() -> None:
    assert sorted(code.value for code in FailureCode) == sorted(SPEC_CODES)
    assert set(CODE_INFO) == set(FailureCode)
    for code in FailureCode:
        assert code.user_message("zh") and code.user_message("en")
        assert code.user_message("zh") != code.user_message("en")
        assert code.user_message() == code.info.zh


def test_recoverability_of_key_codes() -> None:
    assert FailureCode.INTERRUPTED_TASK.recoverable
    assert FailureCode.CHUNKING_FAILED.recoverable
    assert not FailureCode.INVALID_TASK_CONTEXT.recoverable
    assert not FailureCode.RETRY_VALIDATION_FAILED.recoverable
    assert not FailureCode.FILE_CONTENT_INVALID.recoverable
    assert FailureCode.PARSE_ENGINE_FAILED.recoverable


@given(failure_codes(), failure_details())
def test_reason_fits_and_round_trips(code: FailureCode, detail: str) -> None:
    reason = FailureReason.of(code, detail)
    assert len(reason.text) <= MAX_FAILURE_REASON_LENGTH
    assert reason.text.startswith(f"{code.value}:")
    assert FailureReason.parse(reason.text) == reason
    detail = storable_text(detail)  # surrogate pairs joined, lone ones U+FFFD (storable)
    if len(code.value) + 1 + len(detail) <= MAX_FAILURE_REASON_LENGTH:
        assert reason.detail == detail and not reason.truncated
    else:
        assert reason.truncated and reason.detail.endswith(TRUNCATION_MARK)
        kept = reason.detail[: -len(TRUNCATION_MARK)]
        assert detail.startswith(kept)
        assert not kept or not "\ud800" <= kept[-1] <= "\udbff", "half a surrogate pair"


def test_exact_fit_is_not_truncated_and_one_more_is() -> None:
    code = FailureCode.CHUNKING_FAILED
    room = MAX_FAILURE_REASON_LENGTH - len(code.value) - 1
    assert FailureReason.of(code, "a" * room).detail == "a" * room
    cut = FailureReason.of(code, "a" * (room + 1))
    assert cut.detail == "a" * (room - 1) + TRUNCATION_MARK
    assert len(cut.text) == MAX_FAILURE_REASON_LENGTH


def test_truncation_never_splits_a_surrogate_pair() -> None:
    code = FailureCode.PARSE_ENGINE_FAILED
    room = MAX_FAILURE_REASON_LENGTH - len(code.value) - 1
    keep = room - len(TRUNCATION_MARK)
    detail = "a" * (keep - 1) + "\ud83d\ude00" + "b" * 10
    cut = FailureReason.of(code, detail)  # the pair is one character once joined
    assert cut.detail == "a" * (keep - 1) + "😀" + TRUNCATION_MARK
    lone = "a" * (keep - 1) + "\ud83d" + "b" * 10
    assert FailureReason.of(code, lone).detail == "a" * (keep - 1) + "\ufffd" + TRUNCATION_MARK


@given(st.text())
def test_parse_rejects_unknown_codes(text: str) -> None:
    code = text.partition(":")[0]
    if code in SPEC_CODES:
        return
    with pytest.raises(ValueError):
        FailureReason.parse(text)


def test_detail_keeps_colons() -> None:
    reason = FailureReason.parse("KEYWORD_DELETE_FAILED:es_delete: host:9200 down")
    assert reason.code is FailureCode.KEYWORD_DELETE_FAILED
    assert reason.detail == "es_delete: host:9200 down"


def test_an_overlong_reason_cannot_be_built_directly() -> None:
    with pytest.raises(ValueError):
        FailureReason(FailureCode.CHUNKING_FAILED, "x" * MAX_FAILURE_REASON_LENGTH)


def test_a_detail_is_made_storable_in_utf8() -> None:
    reason = FailureReason.of(FailureCode.PARSE_ENGINE_FAILED, "\ud83d\ude00 ok \udc80 end")
    assert reason.detail == "😀 ok \ufffd end"
    reason.text.encode("utf-8")  # no lone surrogate is left
    assert FailureReason.of(FailureCode.PARSE_ENGINE_FAILED, "plain 表").detail == "plain 表"


@given(failure_details())
def test_every_detail_becomes_utf8_text(detail: str) -> None:
    FailureReason.of(FailureCode.PARSE_ENGINE_FAILED, detail).text.encode("utf-8")
