"""Load benchmark (issue 12): `.venv/bin/python -m benchmarks.load [--tasks N]
[--file-type pdf] [--skip kafka,rabbitmq]`.

Past one partition: every task has the same file type, so on Kafka they all share one
partition (the producer keys by file_type). Per broker, on PostgreSQL, the embedded vector
index, the Elasticsearch API (noida-db, so two processes can share a keyword index) and a
constant OpenAI-compatible embedder, three deployments of real `ragline worker` processes:
- `1w`: one worker, concurrency 1;
- `2w`: two workers, concurrency 1 each;
- `1w_c4`: one worker, `--concurrency 4`.
Each gets a fresh database, topics and index; the workers are started and warmed up (two
tasks answered, then 5 s for the consumer group to settle) before N tasks are published at
once. Throughput = N / (last result - first publish); latency = publish -> result on the
result topic; run time = the run's started_at -> finished_at in the database; the tasks
each worker settled, from its log. Writes
benchmarks/results/load.json and prints a table. The machine is shared: load averages are
recorded around each deployment.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg

from benchmarks.machine import machine_facts
from campaigns.crash import (
    BUCKET,
    DATASET,
    SAMPLES,
    USER,
    WORKER,
    Setup,
    _bus,
    _env,
    _provision,
)
from ragline.contracts.wire import ParseTask, decode_parse_result, encode_parse_task
from ragline.testing.services import servers

RESULTS = Path(__file__).resolve().parents[1] / "results" / "load.json"
DEPLOYMENTS = {"1w": (1, 1), "2w": (2, 1), "1w_c4": (1, 4)}  # name: (workers, concurrency)
SAMPLE_OF = {p.suffix.lstrip("."): p for p in SAMPLES.iterdir()}


def _task(n: int, tag: str, file_type: str) -> ParseTask:
    sample = SAMPLE_OF[file_type]
    return ParseTask(
        task_id=f"load-{tag}-{n:04d}-{uuid.uuid4().hex[:6]}",
        original_file_id=20_000 + n,
        document_parse_task_id=n + 1,
        user_id=USER,
        dataset_id=DATASET,
        file_type=file_type,
        source_bucket=BUCKET,
        source_object_key=f"raw/{sample.name}",
        source_filename=sample.name,
        md_bucket=BUCKET,
        md_object_key=f"parsed/load-{n}.md",
        pdf_parser_backend="naive",  # type: ignore[arg-type]
    )


def _p(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return round(ordered[max(0, round(len(ordered) * q) - 1)] * 1000, 1)


def _settled_in(log: Path, task_ids: set[str]) -> int:
    """How many of the measured tasks this worker settled (its JSON log lines)."""
    settled = set()
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("{") and '"task settled' in line:
            task_id = json.loads(line).get("task_id")
            if task_id in task_ids:
                settled.add(task_id)
    return len(settled)


def _run_times(database_url: str, task_ids: set[str]) -> list[float]:
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT task_id, started_at, finished_at, pipeline_status FROM parse_run"
        ).fetchall()
    return [
        (finished - started).total_seconds()
        for task_id, started, finished, status in rows
        if task_id in task_ids and started and finished and status == "SUCCESS"
    ]


async def _deployment(
    broker: str,
    name: str,
    tasks: int,
    file_type: str,
    work: Path,
    es_url: str,
    emb: str,
    kafka: str | None,
) -> dict[str, Any]:
    count, concurrency = DEPLOYMENTS[name]
    work.mkdir(parents=True, exist_ok=True)
    with servers.postgres_database("load") as database_url:
        setup = Setup(broker, work, database_url, es_url, emb, kafka)
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
        processes = []
        for i in range(count):
            log = (work / f"worker-{i}.log").open("wb")
            processes.append(
                subprocess.Popen(
                    [*WORKER, env["RAGLINE_DATA_DIR"], "worker", "--concurrency", str(concurrency)],
                    env=env,
                    cwd=work,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
            log.close()
        received: dict[str, float] = {}
        iterator = aiter(reader)

        async def wait_for(wanted: set[str], limit: float) -> None:
            async with asyncio.timeout(limit):
                while not wanted <= set(received):
                    delivery = await anext(iterator)
                    received.setdefault(
                        decode_parse_result(delivery.body).task_id, time.perf_counter()
                    )
                    await delivery.ack()

        try:
            warm = [_task(9000 + i, f"{name}-warm", file_type) for i in range(2 * count)]
            for task in warm:
                await publisher.publish(encode_parse_task(task), task.file_type)
            await wait_for({t.task_id for t in warm}, 300)
            await asyncio.sleep(5)
            batch = [_task(i, name, file_type) for i in range(tasks)]
            load_before = round(os.getloadavg()[0], 2)
            published: dict[str, float] = {}
            start = time.perf_counter()
            for task in batch:
                published[task.task_id] = time.perf_counter()
                await publisher.publish(encode_parse_task(task), task.file_type)
            await wait_for(set(published), 900)
            end = max(received[t] for t in published)
            load_after = round(os.getloadavg()[0], 2)
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                process.wait(timeout=60)
            await reader.close()
            await publisher.close()
        latencies = [received[t] - published[t] for t in published]
        split = [_settled_in(work / f"worker-{i}.log", set(published)) for i in range(count)]
        runs = _run_times(database_url, set(published))
    elapsed = end - start
    return {
        "workers": count,
        "concurrency": concurrency,
        "tasks": tasks,
        "elapsed_s": round(elapsed, 2),
        "tasks_per_s": round(tasks / elapsed, 3),
        "latency_p50_ms": _p(latencies, 0.5),
        "latency_p95_ms": _p(latencies, 0.95),
        "run_p50_ms": _p(runs, 0.5) if runs else None,
        "run_p95_ms": _p(runs, 0.95) if runs else None,
        "runs_success": len(runs),
        "tasks_per_worker": split,
        "load_before": load_before,
        "load_after": load_after,
        "mean_run_ms": round(statistics.fmean(runs) * 1000, 1) if runs else None,
    }


async def bench(tasks: int, file_type: str, skip: set[str], work: Path) -> dict[str, Any]:
    report: dict[str, Any] = {"machine": machine_facts(), "tasks": tasks, "file_type": file_type}
    with servers.elasticsearch(work) as es_url, servers.constant_embeddings() as emb:
        for broker in ("rabbitmq", "kafka"):
            if broker in skip:
                continue
            figures: dict[str, Any] = {}
            kafka_cm = servers.kafka_broker(work / broker) if broker == "kafka" else None
            (work / broker).mkdir(parents=True, exist_ok=True)
            kafka = kafka_cm.__enter__() if kafka_cm else None
            try:
                for name in DEPLOYMENTS:
                    figures[name] = await _deployment(
                        broker, name, tasks, file_type, work / broker / name, es_url, emb, kafka
                    )
                    print(broker, name, figures[name], flush=True)
            finally:
                if kafka_cm:
                    kafka_cm.__exit__(None, None, None)
            one = figures["1w"]["tasks_per_s"]
            figures["ratio_2w_vs_1w"] = round(figures["2w"]["tasks_per_s"] / one, 2)
            figures["ratio_1w_c4_vs_1w"] = round(figures["1w_c4"]["tasks_per_s"] / one, 2)
            report[broker] = figures
            RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    return report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=48)
    parser.add_argument("--file-type", default="pdf", choices=sorted(SAMPLE_OF))
    parser.add_argument("--skip", default="")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ragline-load-"))
    report = asyncio.run(
        bench(args.tasks, args.file_type, set(filter(None, args.skip.split(","))), work)
    )
    print(
        f"{'broker':10} {'deployment':10} {'tasks/s':>8} {'p50 ms':>8} {'p95 ms':>8} {'run p95':>8}"
    )
    for broker in ("rabbitmq", "kafka"):
        for name in DEPLOYMENTS:
            f = report.get(broker, {}).get(name)
            if f:
                print(
                    f"{broker:10} {name:10} {f['tasks_per_s']:8} {f['latency_p50_ms']:8} "
                    f"{f['latency_p95_ms']:8} {f['run_p95_ms']!s:>8}"
                )
    print(f"written to {RESULTS}; logs in {work}")
    sys.exit(0)


if __name__ == "__main__":
    main()
