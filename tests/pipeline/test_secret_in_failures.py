"""The application's safeguard, whatever the adapter does: a failure reason formed from an
error that quotes a credential the process knows carries `***` instead — in the stored run,
the result message and the log line — even when the adapter let the key through bare."""

from __future__ import annotations

import logging

import pytest

from ragline.application.ports.embedder import EmbedderUnavailable
from ragline.application.ports.keyword_index import KeywordIndexUnavailable
from ragline.application.ports.repositories.model_configs import EmbeddingConfig
from ragline.bootstrap.settings import Settings
from ragline.domain.parse_run import FailureCode, PipelineStatus
from ragline.testing.services.echo_server import leaked
from tests.fakes.harness import DIMENSION, Harness, encode_result


async def test_a_users_key_quoted_by_a_failing_embedder_is_masked(
    h: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    key = "sk-harness-user-7-Bv6nM2kL9pQ4"
    h.db.configs["7"] = EmbeddingConfig("7", "fake", "fake-model", DIMENSION, None, key)
    h.faults.arm("embedder.embed", EmbedderUnavailable(f"HTTP 401: incorrect key {key}"))
    caplog.set_level(logging.DEBUG)
    task = h.task()
    await h.pipeline.handle(task)
    run = h.run(task.task_id)
    assert run.pipeline_status is PipelineStatus.FAILED
    assert run.failure_reason is not None
    assert run.failure_reason.code is FailureCode.VECTORIZING_FAILED
    assert run.failure_reason.text.endswith("incorrect key ***"), run.failure_reason.text
    result = h.result(task.task_id)
    assert result.failure_reason == run.failure_reason.text
    assert not leaked(encode_result(h.db.outbox[task.task_id].result).decode(), key)
    assert "incorrect key ***" in caplog.text and not leaked(caplog.text, key)


async def test_a_settings_secret_quoted_by_a_failing_index_is_masked(h: Harness) -> None:
    Settings(elasticsearch_url="http://elastic:es-Xy7Zw3Vu1T@es.internal:9200")
    h.faults.arm(
        "keywords.write",
        KeywordIndexUnavailable("es.internal: 401 for user elastic / es-Xy7Zw3Vu1T"),
    )
    task = h.task()
    await h.pipeline.handle(task)
    reason = h.run(task.task_id).failure_reason
    assert reason is not None and reason.code is FailureCode.KEYWORD_INDEX_UNAVAILABLE
    assert "es-Xy7Zw3Vu1T" not in reason.text and "elastic / ***" in reason.text
