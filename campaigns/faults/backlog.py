"""Backlog during an outage (issue 19): `tasks` tasks queued on RabbitMQ, then one dependency
goes away, then a real `Worker` (its consumers, relay and stale-run sweep, as `ragline
worker` runs them) starts; after `outage` seconds the dependency comes back.

Checked per cell, with no operator action: every task is answered (its run terminal, its
result SENT), none is dead-lettered (the task DLQ stays empty), and how many ended SUCCESS.
Before issue 19 a database outage dead-lettered the whole backlog ("open unit of work
failed"), most of it with no run row, so nothing ever answered it.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pika

from ragline.adapters.inbound.task_consumer import Worker
from ragline.adapters.messaging.rabbitmq.endpoints import task_queue
from ragline.adapters.messaging.rabbitmq.source import RabbitTaskSource
from ragline.application.health import obtain
from ragline.contracts.wire import dead_letter_topic
from ragline.domain.parse_run import PipelineStatus

if TYPE_CHECKING:
    from campaigns.faults.campaign import FaultCampaign

BACKLOG_DEPENDENCIES = ("database", "storage", "vectors", "keywords", "broker")


@dataclass
class BacklogResult:
    dependency: str
    tasks: int
    outage_seconds: float
    answered: int = 0  # run terminal and result SENT
    succeeded: int = 0
    failed: dict[str, int] = field(default_factory=dict)  # failure code -> runs
    dead_lettered: int = 0  # task DLQ depth after the cell
    held: int = 0  # times a consumer held the backlog
    seconds_to_all_answered: float = 0.0  # from the dependency's return
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def outcome(self) -> str:
        failed = ", ".join(f"{n} {code}" for code, n in sorted(self.failed.items()))
        return (
            f"{self.answered}/{self.tasks} answered, {self.succeeded} SUCCESS"
            + (f", {failed}" if failed else "")
            + f", {self.dead_lettered} dead-lettered"
        )


async def backlog_cell(
    campaign: FaultCampaign, dependency: str, tasks: int = 50, outage: float = 5.0
) -> BacklogResult:
    result = BacklogResult(dependency, tasks, outage)
    settings = campaign.container.settings()
    bus = await obtain(campaign.container.bus)
    workers_queue = bus.task_source()
    assert isinstance(workers_queue, RabbitTaskSource)  # the campaign runs on RabbitMQ
    await workers_queue.declare()  # the queue the backlog waits in, before any worker
    publisher = bus.task_publisher()
    queued = []
    for _ in range(tasks):
        task = await campaign.new_task(campaign.next_dataset())
        await publisher.publish(campaign.wire.encode_task(task), task.file_type)
        queued.append(task.task_id)
    dlq = dead_letter_topic(task_queue(settings.parse_task_topic))
    before = _depth(dlq)
    fault = campaign.fault(dependency)
    container = campaign.worker_container()
    try:
        worker: Worker = await obtain(container.worker)  # built (and migrated) while all is up
        fault.cut()
        async with worker.running():
            await asyncio.sleep(outage)  # the outage itself (not an assertion)
            fault.restore()
            back = time.monotonic()
            try:
                await _until_answered(campaign, queued, timeout=240.0)
            except TimeoutError:
                result.problems.append("not every task was answered within 240 s")
            result.seconds_to_all_answered = round(time.monotonic() - back, 1)
            result.held = sum(c.holds for c in worker.supervised)
    finally:
        fault.restore()  # (a no-op when it came back already)
        closing = container.shutdown_resources()
        if closing is not None:
            await closing
    for task_id in queued:
        run = await campaign.run_of(task_id)
        if run is None or not run.is_terminal:
            continue
        if await campaign.outbox_status(task_id) == "SENT":
            result.answered += 1
        if run.pipeline_status is PipelineStatus.SUCCESS:
            result.succeeded += 1
        elif run.failure_reason is not None:
            code = run.failure_reason.code.value
            result.failed[code] = result.failed.get(code, 0) + 1
    result.dead_lettered = _depth(dlq) - before
    if result.answered != tasks:
        result.problems.append(f"{tasks - result.answered} task(s) not answered")
    if result.dead_lettered:
        result.problems.append(f"{result.dead_lettered} task(s) dead-lettered for the outage")
    return result


async def _until_answered(campaign: FaultCampaign, task_ids: list[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    waiting = list(task_ids)
    while waiting:
        if time.monotonic() > deadline:
            raise TimeoutError
        still = []
        for task_id in waiting:
            run = await campaign.run_of(task_id)
            sent = await campaign.outbox_status(task_id) == "SENT"
            if run is None or not run.is_terminal or not sent:
                still.append(task_id)
        waiting = still
        if waiting:
            await asyncio.sleep(0.25)


def _depth(queue: str) -> int:
    """Messages in `queue` (0 when it does not exist yet), asked of the broker directly."""
    from campaigns.faults.campaign import RABBIT

    connection = pika.BlockingConnection(pika.ConnectionParameters(*RABBIT))
    try:
        channel = connection.channel()
        try:
            return int(channel.queue_declare(queue, passive=True).method.message_count)
        except pika.exceptions.ChannelClosedByBroker:
            return 0
    finally:
        connection.close()
