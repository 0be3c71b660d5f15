"""RAGLINE_LOG_FORMAT=json: one object per line, pipeline lines carry task_id, user_id,
stage and duration_ms, and no secret reaches a line."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragline.adapters.logs.line_format import JsonLineFormatter, TextFormatter, redacted
from ragline.application.pipeline.log_context import LogContextFilter
from ragline.application.ports.repositories.model_configs import EmbeddingConfig
from tests.fakes.harness import Harness

API_KEY = "sk-live-0123456789abcdef"
DSN = "postgresql://ragline:db-password-42@db.internal:5432/ragline"


@pytest.fixture
def lines() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonLineFormatter([API_KEY]))
    handler.addFilter(LogContextFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    level = root.level
    root.setLevel(logging.INFO)  # setLevel, not assignment: loggers cache isEnabledFor
    try:
        yield stream
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


async def test_pipeline_lines_carry_the_run_fields(tmp_path: Path, lines: io.StringIO) -> None:
    h = Harness(tmp_path)
    h.configure_embedding()
    task = h.task()
    outcome = await h.consumer.process(h.delivery(task))
    assert outcome is not None
    records = [json.loads(line) for line in lines.getvalue().splitlines()]
    stages = [r for r in records if r["logger"] == "ragline.pipeline"]
    assert [r["stage"] for r in stages] == [
        "CLEANING",
        "CHUNKING",
        "VECTORIZING",
        "PRETOKENIZE",
        "KEYWORD_INDEXING",
        "SPARSE_VECTORIZING",
    ]
    for record in stages:
        assert record["task_id"] == task.task_id
        assert record["user_id"] == str(task.user_id)
        assert record["dataset_id"] == str(task.dataset_id)
        assert isinstance(record["duration_ms"], int)
        assert record["level"] == "INFO" and record["status"] == "SUCCESS"
    settled = [r for r in records if r["message"].startswith("task settled")]
    assert settled and settled[0]["task_id"] == task.task_id and "stage" not in settled[0]


def test_no_secret_reaches_a_line(lines: io.StringIO) -> None:
    log = logging.getLogger("ragline.test")
    log.error("could not connect to %s with key %s", DSN, API_KEY)
    try:
        raise ConnectionError(f"amqp://guest:rabbit-secret@mq:5672/ refused ({API_KEY})")
    except ConnectionError:
        log.exception("broker down")
    text = lines.getvalue()
    for secret in ("db-password-42", "rabbit-secret", API_KEY):
        assert secret not in text
    assert "postgresql://ragline:***@db.internal:5432/ragline" in text
    assert all(json.loads(line) for line in text.splitlines())


def test_the_text_format_masks_the_same_way() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "dsn %s", (DSN,), None)
    assert "db-password-42" not in TextFormatter([]).format(record)
    assert redacted(f"key={API_KEY}", [API_KEY]) == "key=***"


def test_a_users_key_the_process_holds_is_masked_in_every_line() -> None:
    key = "sk-user-in-a-log-Rt5yU8iO2p"
    EmbeddingConfig("u9", "openai", "m", 8, "http://x", key)  # as decrypted from storage
    record = logging.LogRecord("x", logging.WARNING, __file__, 1, "echo: %s", (key,), None)
    assert key not in TextFormatter([]).format(record)
    assert key not in JsonLineFormatter([]).format(record)
    assert redacted(f"bare {key}") == "bare ***"
