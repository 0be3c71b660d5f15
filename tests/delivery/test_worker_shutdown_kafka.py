"""Hole 9 of issue 12: `ragline worker` on Kafka (tansu) shuts down cleanly on SIGTERM.

The worker answers one task (so its result producer has started), then gets SIGTERM; it
must exit 0 having closed every Kafka client: stderr has no "Unclosed AIOKafkaProducer"
(asyncio's warning for a producer garbage-collected while still open).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

from ragline.adapters.messaging.kafka import KafkaConnection
from ragline.adapters.messaging.kafka.endpoints import KafkaEndpoints
from ragline.contracts.wire import decode_parse_result
from ragline.testing.services.ragline_cli import ENTRY

ANSWER_TIMEOUT = 180.0


async def _one_answer(endpoints: KafkaEndpoints, task_id: str) -> str:
    """Publish a task the worker rejects (INVALID_TASK_CONTEXT: no model, no file needed)
    and wait for its result on the result topic."""
    reader = endpoints.result_reader()
    publisher = endpoints.task_publisher()
    try:
        body = json.dumps({"task_id": task_id, "user_id": "not a number"}).encode()
        await publisher.publish(body, "md")
        async with asyncio.timeout(ANSWER_TIMEOUT):
            async for delivery in reader:
                await delivery.ack()
                result = decode_parse_result(delivery.body)
                if result.task_id == task_id:
                    return result.failure_reason or ""
    finally:
        await reader.close()
        await publisher.close()
    raise AssertionError("the result topic ended")


def test_sigterm_closes_every_kafka_client(kafka_bootstrap: str, tmp_path: Path) -> None:
    suffix = uuid.uuid4().hex[:8]
    env = {
        **os.environ,
        "RAGLINE_DATA_DIR": str(tmp_path / "data"),
        "MQ_VENDOR": "kafka",
        "RAGLINE_KAFKA_BOOTSTRAP_SERVERS": kafka_bootstrap,
        "PARSE_TASK_TOPIC": f"shutdown-tasks-{suffix}",
        "PARSE_RESULT_TOPIC": f"shutdown-results-{suffix}",
        "RAGLINE_KAFKA_GROUP_ID": f"shutdown-workers-{suffix}",
        "PYTHONWARNINGS": "default",  # show ResourceWarnings too
    }
    endpoints = KafkaEndpoints(
        KafkaConnection(kafka_bootstrap),
        bootstrap_servers=kafka_bootstrap,
        task_topic=env["PARSE_TASK_TOPIC"],
        result_topic=env["PARSE_RESULT_TOPIC"],
        group_id=env["RAGLINE_KAFKA_GROUP_ID"],
        max_poll_interval_ms=300_000,
    )
    stderr_path = tmp_path / "worker.stderr"
    with stderr_path.open("wb") as stderr:
        worker = subprocess.Popen(
            [sys.executable, "-c", ENTRY, "worker"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
        )
    try:
        reason = asyncio.run(_one_answer(endpoints, f"shutdown-{suffix}"))
        assert reason.startswith("INVALID_TASK_CONTEXT:"), reason
        assert worker.poll() is None, "the worker died"
        os.killpg(worker.pid, signal.SIGTERM)
        assert worker.wait(timeout=60) == 0
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
    logged = stderr_path.read_text(errors="replace")
    assert "Unclosed" not in logged, logged[-3000:]
    assert "Task was destroyed but it is pending" not in logged, logged[-3000:]
