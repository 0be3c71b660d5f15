"""Retry after a kill during CLEANING (issue 19 items 9, 10): `.venv/bin/python -m
benchmarks.retry_after_kill [--rounds N] [--pages P]`.

Per round, on RabbitMQ (127.0.0.1:5672) and a fresh SQLite data dir: a `ragline worker`
starts parsing a P-page PDF (naive tier) and is SIGKILLed while its parse batch is claimed;
a second worker converges the redelivered run to FAILED INTERRUPTED_TASK; then `ragline
retry TASK_ID` runs and its wall time is measured, as an operator would see it. Before
issue 19 the retry's CLEANING waited for the dead worker's 60 s parse-batch lease; now a
waiter on the same host releases the claim of a process that no longer runs. No embedding
config is set, so the retry ends FAILED LLM_CONFIG_MISSING right after CLEANING: the figure
is the wait for CLEANING (`retry_cleaning`: its status and ms), not the model's minutes.
Writes benchmarks/results/retry_after_kill.json (`--out` elsewhere: run the same file with
an older checkout's python for the figure before).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import statistics
import subprocess  # nosec B404: the benchmark runs ragline's own CLI
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import pika
from fpdf import FPDF

from benchmarks.machine import machine_facts

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "retry_after_kill.json"
RABBIT_URL = "amqp://guest:guest@127.0.0.1:5672/%2F"
RAGLINE = Path(sys.executable).with_name("ragline")


def _pdf(path: Path, pages: int) -> None:
    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    for page in range(pages):
        pdf.add_page()
        for line in range(40):
            text = f"page {page} line {line}: green tea is brewed at about eighty degrees"
            pdf.cell(0, 6, text, new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))


def _rows(data: Path, query: str) -> list[tuple[Any, ...]]:
    try:
        with sqlite3.connect(data / "ragline.db") as db:
            return db.execute(query).fetchall()
    except sqlite3.Error:  # not created yet, or locked a moment
        return []


def _wait(what: str, ready: Any, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not ready():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.05)


def _queue_exists(name: str) -> bool:
    try:
        connection = pika.BlockingConnection(pika.URLParameters(RABBIT_URL))
    except pika.exceptions.AMQPError:
        return False
    try:
        connection.channel().queue_declare(name, passive=True)
        return True
    except pika.exceptions.ChannelClosedByBroker:
        return False
    finally:
        if connection.is_open:
            connection.close()


def one_round(folder: Path, pages: int) -> dict[str, Any]:
    tag = uuid.uuid4().hex[:8]
    data = folder / tag
    tasks, results = f"rak-tasks-{tag}", f"rak-results-{tag}"
    env = {
        **os.environ,
        "MQ_VENDOR": "rabbitmq",
        "RAGLINE_RABBITMQ_URL": RABBIT_URL,
        "PARSE_TASK_TOPIC": tasks,
        "PARSE_RESULT_TOPIC": results,
        "RAGLINE_DATA_DIR": str(data),
        "RAGLINE_PARSE_BATCH_WORKERS": "0",
    }
    source = data / "objects" / "uploads" / "raw" / "big.pdf"  # the local object store
    source.parent.mkdir(parents=True)
    (data / "objects" / "markdown").mkdir(parents=True)
    _pdf(source, pages)

    def worker() -> subprocess.Popen[bytes]:
        log = open(folder / f"{tag}-worker-{time.time_ns()}.log", "wb")  # noqa: SIM115
        return subprocess.Popen(  # nosec B603
            [str(RAGLINE), "worker"], env=env, stdout=log, stderr=subprocess.STDOUT
        )

    first = worker()
    second = None
    try:
        _wait("the workers' queue", lambda: _queue_exists(f"{tasks}.workers"))
        task_id = f"kill-{tag}"
        task = {
            "task_id": task_id,
            "original_file_id": 1,
            "document_parse_task_id": 1,
            "user_id": 1,
            "dataset_id": 1,
            "file_type": "pdf",
            "source_bucket": "uploads",
            "source_object_key": "raw/big.pdf",
            "source_filename": "big.pdf",
            "md_bucket": "markdown",
            "md_object_key": "parsed/big.md",
            "pdf_parser_backend": "naive",
        }
        connection = pika.BlockingConnection(pika.URLParameters(RABBIT_URL))
        connection.channel().basic_publish(tasks, "pdf", json.dumps(task).encode())
        connection.close()
        parsing = "select id from parse_batch where status='parsing'"
        _wait("a claimed parse batch", lambda: bool(_rows(data, parsing)))
        first.send_signal(signal.SIGKILL)
        first.wait()
        killed = time.monotonic()
        second = worker()
        ended = f"select 1 from parse_run where task_id='{task_id}' and pipeline_status='FAILED'"
        _wait("the run converged", lambda: bool(_rows(data, ended)))
        converged = time.monotonic() - killed
        started = time.monotonic()
        retry = subprocess.run(  # nosec B603
            [str(RAGLINE), "retry", task_id], env=env, capture_output=True, text=True, timeout=300
        )
        took = time.monotonic() - started
        cleaning = _rows(
            data,
            "select cleaning_status, cleaning_duration_ms from parse_run "
            f"where task_id='{task_id}-r1'",
        )
        return {
            "converged_after_kill_s": round(converged, 2),
            "retry_s": round(took, 2),
            "retry_cleaning": list(cleaning[0]) if cleaning else None,
            "retry_first_line": (retry.stdout.strip().splitlines() or [""])[0],
        }
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                process.terminate()
                process.wait(timeout=30)
        _drop_topology(tasks, results)


def _drop_topology(tasks: str, results: str) -> None:
    connection = pika.BlockingConnection(pika.URLParameters(RABBIT_URL))
    channel = connection.channel()
    for queue in (f"{tasks}.workers", f"{tasks}.workers.DLQ", f"{results}.DLQ"):
        channel.queue_delete(queue)
    for exchange in (tasks, f"{tasks}.DLQ", results, f"{results}.DLQ"):
        channel.exchange_delete(exchange)
    connection.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pages", type=int, default=400)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--label", default="this checkout")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ragline-retry-after-kill-") as folder:
        rounds = [one_round(Path(folder), args.pages) for _ in range(args.rounds)]
    times = [r["retry_s"] for r in rounds]
    report = {
        "benchmark": "retry_after_kill",
        "label": args.label,
        "machine": machine_facts(),
        "pages": args.pages,
        "rounds": rounds,
        "retry_s_median": statistics.median(times),
        "retry_s_max": max(times),
        "lease_s": 60,
    }
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
