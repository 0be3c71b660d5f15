"""`ragline worker --concurrency 3` SIGKILLed mid-batch, on each broker: after a restart the
broker redelivers only what was not settled (RabbitMQ: exactly the unacked; Kafka: from the
lowest unsettled offset on, never below it), every task is answered, none twice differently.

One routing key, so on Kafka all tasks share one partition. The worker kills itself through
the crash hook right after the second terminal commit (`after-commit`, nth=2): by then other
tasks are in flight, and the second one is committed but not yet acknowledged.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from campaigns.crash import (
    BUCKET,
    DATASET,
    USER,
    WORKER,
    Answers,
    Setup,
    _bus,
    _env,
    _provision,
)
from ragline.contracts.wire import ParseTask, encode_parse_task
from ragline.testing.services import servers

TASKS = 9
WAIT_SECONDS = 300.0  # a bound for a hang only


def _task(n: int) -> ParseTask:
    return ParseTask(
        task_id=f"conc-{n:02d}-{time.time_ns() % 10**8}",
        original_file_id=30_000 + n,
        document_parse_task_id=n + 1,
        user_id=USER,
        dataset_id=DATASET,
        file_type="md",
        source_bucket=BUCKET,
        source_object_key="raw/tea-brewing-guide.md",
        source_filename="tea-brewing-guide.md",
        md_bucket=BUCKET,
        md_object_key=f"parsed/conc-{n}.md",
    )


def _worker(env: dict[str, str], log: Path, **extra: str) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            [*WORKER, env["RAGLINE_DATA_DIR"], "worker", "--concurrency", "3"],
            env={**env, **extra},
            cwd=log.parent,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _seen(log: Path) -> tuple[set[str], set[str], set[str]]:
    """Task ids the worker worked on, those whose run it ended (the last stage's log line
    comes after the terminal commit), and those whose delivery it settled (the line comes
    after the ack; a kill may fall between ack and line, so acked ⊇ these)."""
    worked, ended, settled = set(), set(), set()
    for line in log.read_text(errors="replace").splitlines():
        if not line.startswith("{"):
            continue
        record = json.loads(line)
        task_id = record.get("task_id")
        if not task_id:
            continue
        worked.add(task_id)
        message = str(record.get("message", ""))
        if message.startswith("task settled"):
            settled.add(task_id)
        if message.startswith("stage ") and (
            " FAILED" in message or message.startswith("stage SPARSE_VECTORIZING SUCCESS")
        ):
            ended.add(task_id)
    return worked, ended, settled


def _interrupted(log: Path) -> set[str]:
    """Task ids this worker found interrupted on redelivery: runs another worker had begun."""
    found = set()
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            if str(record.get("message", "")).endswith("redelivered: interrupted"):
                found.add(str(record["task_id"]))
    return found


async def _scenario(setup: Setup) -> dict[str, Any]:
    env = _env(setup)
    await _provision(setup, env, [], 0)
    bus = _bus(env)
    reader = bus.result_reader()
    if hasattr(reader, "declare"):
        await reader.declare()
        deploy = bus.task_source()
        await deploy.declare()
        await deploy.close()
    publisher = bus.task_publisher()
    tasks = [_task(n) for n in range(TASKS)]
    for task in tasks:  # in this order: on Kafka, offset n is task n
        await publisher.publish(encode_parse_task(task), task.file_type)
    answers = Answers()
    first_log, second_log = setup.work / "first.log", setup.work / "second.log"
    first = _worker(
        env, first_log, RAGLINE_TEST_CRASH_AT="after-commit", RAGLINE_TEST_CRASH_NTH="2"
    )
    second = None
    try:
        await asyncio.to_thread(first.wait, WAIT_SECONDS)
        second = _worker(env, second_log)
        iterator = aiter(reader)
        async with asyncio.timeout(WAIT_SECONDS):
            while not {t.task_id for t in tasks} <= set(answers.by_task):
                delivery = await anext(iterator)
                answers.add(delivery.body)
                await delivery.ack()
        await asyncio.sleep(2)
        for _ in range(20):  # the last late duplicates, if any
            try:
                delivery = await asyncio.wait_for(anext(iterator), 0.5)
            except TimeoutError:
                break
            answers.add(delivery.body)
            await delivery.ack()
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                process.terminate()
                process.wait(timeout=60)
        await reader.close()
        await publisher.close()
    return {
        "killed": first.returncode,
        "order": [t.task_id for t in tasks],
        "first": _seen(first_log),
        "second": _seen(second_log),
        "interrupted_second": _interrupted(second_log),
        "answers": answers,
    }


@pytest.mark.parametrize("broker", ["rabbitmq", "kafka"])
def test_a_sigkill_mid_batch_redelivers_only_the_unsettled(
    broker: str, tmp_path: Path, elasticsearch_url: str, request: pytest.FixtureRequest
) -> None:
    bootstrap = request.getfixturevalue("kafka_bootstrap") if broker == "kafka" else None
    with (
        servers.postgres_database("e2e_conc") as database_url,
        servers.constant_embeddings() as embeddings_url,
    ):
        setup = Setup(broker, tmp_path, database_url, elasticsearch_url, embeddings_url, bootstrap)
        seen = asyncio.run(_scenario(setup))
    assert seen["killed"] == -9, "the hook killed the first worker"
    order: list[str] = seen["order"]
    worked_first, ended_first, settled_first = seen["first"]
    worked_second, _, _ = seen["second"]
    # a task the first worker had begun but not yet logged a stage of (CLEANING still
    # running: identical sources wait on one parse batch) is found interrupted by the second
    worked_first |= seen["interrupted_second"]
    unfinished = worked_first - ended_first  # its run not ended: it cannot have been acked
    assert len(worked_first) >= 3, "several tasks were in flight at once"
    assert unfinished, "the kill came while tasks were running"
    assert unfinished <= worked_second, "every unfinished task was delivered again"
    if broker == "rabbitmq":  # each message acked on its own: nothing acked comes back
        assert not worked_second & settled_first
    else:  # committed below the lowest unsettled offset: nothing below it comes back
        lowest = min(order.index(t) for t in worked_first - settled_first)
        assert all(order.index(t) >= lowest for t in worked_second)
    answers = seen["answers"]
    for task_id in order:
        statuses = {a["status"] for a in answers.by_task[task_id]}
        assert len(statuses) == 1, (task_id, answers.by_task[task_id])
