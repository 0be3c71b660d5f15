"""Messaging benchmark: `.venv/bin/python -m benchmarks.messaging [--count N] [--skip kafka,...]`.

Measures (1) decode_parse_task throughput on valid and broken bodies, (2) per bus: publish
latency (each publish waits for the broker's confirmation / acks=all), then sequential
consume+ack throughput, and for Kafka the consumer-group join time (time to the first
delivery). Buses: in-process, RabbitMQ at 127.0.0.1:5672, Kafka on a tansu broker started
here on a free port. Writes benchmarks/results/messaging.json and prints it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ragline.application.ports.messaging import Publisher, TaskSource
from ragline.contracts.wire import decode_parse_task
from ragline.testing.kits.messaging import task_body
from ragline.testing.services.fixtures import start_tansu, stop_process

RESULTS = Path(__file__).resolve().parents[1] / "results" / "messaging.json"
CLEANUPS: list[Callable[[], None]] = []


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "count": len(ordered),
        "p50_ms": round(statistics.median(ordered) * 1000, 3),
        "p95_ms": round(ordered[int(len(ordered) * 0.95) - 1] * 1000, 3),
        "max_ms": round(ordered[-1] * 1000, 3),
        "mean_ms": round(statistics.fmean(ordered) * 1000, 3),
    }


def bench_decode(count: int) -> dict[str, Any]:
    valid = [task_body(f"t-{n}") for n in range(count)]
    broken = [body.replace(b'"user_id": 3', b'"user_id": "3"') for body in valid]
    garbage = [body[:-7] for body in valid]
    report = {}
    for name, bodies in (("valid", valid), ("invalid_fields", broken), ("invalid_json", garbage)):
        start = time.perf_counter()
        for body in bodies:
            decode_parse_task(body)
        elapsed = time.perf_counter() - start
        report[name] = {"messages": count, "per_second": round(count / elapsed)}
    return report


async def bench_bus(
    open_pair: Callable[[], Awaitable[tuple[Publisher, Callable[[], Awaitable[TaskSource]]]]],
    count: int,
) -> dict[str, Any]:
    publisher, open_source = await open_pair()
    latencies = []
    for n in range(count):
        body = task_body(f"b-{n}")
        start = time.perf_counter()
        await publisher.publish(body, "pdf")
        latencies.append(time.perf_counter() - start)
    join_start = time.perf_counter()
    source = await open_source()
    iterator = aiter(source)
    first = await anext(iterator)
    first_delivery_s = time.perf_counter() - join_start
    await first.ack()
    start = time.perf_counter()
    for _ in range(count - 1):
        delivery = await anext(iterator)
        await delivery.ack()
    elapsed = time.perf_counter() - start
    await source.close()
    close = getattr(publisher, "close", None)
    if close is not None:
        await close()
    return {
        "publish_confirmed": _percentiles(latencies),
        "first_delivery_s": round(first_delivery_s, 3),
        "consume_ack_per_second": round((count - 1) / elapsed),
    }


async def inprocess_pair() -> tuple[Publisher, Callable[[], Awaitable[TaskSource]]]:
    from ragline.adapters.messaging.inprocess import (
        InProcessBus,
        InProcessPublisher,
        InProcessTaskSource,
    )

    bus = InProcessBus()

    async def source() -> TaskSource:
        return InProcessTaskSource(bus, "tasks", "workers")

    return InProcessPublisher(bus, "tasks"), source


async def rabbit_pair() -> tuple[Publisher, Callable[[], Awaitable[TaskSource]]]:
    from ragline.adapters.messaging.rabbitmq import (
        RabbitConnection,
        RabbitPublisher,
        RabbitTaskSource,
    )

    connection = RabbitConnection()
    suffix = uuid.uuid4().hex[:8]
    exchange, queue = f"bench-tasks-{suffix}", f"bench-workers-{suffix}"
    await RabbitTaskSource(connection, exchange, queue).declare()
    CLEANUPS.append(lambda: remove_rabbit_bench_topology(exchange, queue))

    async def source() -> TaskSource:
        opened = RabbitTaskSource(connection, exchange, queue)
        await opened.start()
        return opened

    return RabbitPublisher(connection, exchange), source


def remove_rabbit_bench_topology(exchange: str, queue: str) -> None:
    import pika

    from ragline.adapters.messaging.rabbitmq import RabbitConnection

    blocking = pika.BlockingConnection(RabbitConnection().parameters())
    channel = blocking.channel()
    for name in (queue, f"{queue}.DLQ"):
        channel.queue_delete(name)
    for name in (exchange, f"{exchange}.DLQ"):
        channel.exchange_delete(name)
    blocking.close()


def kafka_pair_factory(
    bootstrap: str,
) -> Callable[[], Awaitable[tuple[Publisher, Callable[[], Awaitable[TaskSource]]]]]:
    async def pair() -> tuple[Publisher, Callable[[], Awaitable[TaskSource]]]:
        from ragline.adapters.messaging.kafka import (
            KafkaConnection,
            KafkaPublisher,
            KafkaTaskSource,
        )

        connection = KafkaConnection(bootstrap_servers=bootstrap)
        suffix = uuid.uuid4().hex[:8]
        topic = f"bench-tasks-{suffix}"

        async def source() -> TaskSource:
            opened = KafkaTaskSource(
                connection,
                topic,
                f"bench-{suffix}",
                session_timeout_ms=6_000,
                heartbeat_interval_ms=2_000,
            )
            await opened.start()
            return opened

        return KafkaPublisher(connection, topic), source

    return pair


async def main(count: int, skip: set[str]) -> dict[str, Any]:
    report: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "count": count,
        "decode": bench_decode(max(count * 10, 1000)),
        "buses": {},
    }
    if "inprocess" not in skip:
        report["buses"]["inprocess"] = await bench_bus(inprocess_pair, count)
    if "rabbitmq" not in skip:
        try:
            report["buses"]["rabbitmq"] = await bench_bus(rabbit_pair, count)
        finally:
            for cleanup in CLEANUPS:
                cleanup()
    if "kafka" not in skip:
        with tempfile.TemporaryDirectory() as tmp:
            proc, bootstrap = start_tansu(Path(tmp) / "tansu.log")
            try:
                report["buses"]["kafka_tansu"] = await bench_bus(
                    kafka_pair_factory(bootstrap), count
                )
            finally:
                stop_process(proc)
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--skip", default="", help="comma-separated: inprocess,rabbitmq,kafka")
    args = parser.parse_args()
    result = asyncio.run(main(args.count, set(filter(None, args.skip.split(",")))))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
