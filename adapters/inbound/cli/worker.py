"""`ragline worker`: consume the task topic until SIGINT/SIGTERM."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ragline.adapters.inbound.cli.app import DATA_DIR_OPTION, app, entry_of, run_session
from ragline.adapters.inbound.entry import Entry
from ragline.adapters.inbound.task_consumer import Worker
from ragline.adapters.logs.line_format import configure_logging
from ragline.application.reembedding import loop as reembedding_loop

if TYPE_CHECKING:  # uvicorn loads only for --http-port
    import uvicorn


@app.command()
def worker(
    ctx: typer.Context,
    consumers: int = typer.Option(
        1, "--consumers", min=1, max=16, help="Consumer-group members (one partition each)."
    ),
    concurrency: int | None = typer.Option(
        None,
        "--concurrency",
        min=1,
        max=64,
        help="Tasks each member runs at once from its partition "
        "(default RAGLINE_WORKER_CONCURRENCY).",
    ),
    http_port: int | None = typer.Option(
        None, "--http-port", min=1, max=65535, help="Also serve /healthz, /readyz, /metrics."
    ),
    http_host: str = typer.Option("127.0.0.1", "--http-host", help="Interface for --http-port."),
    data_dir: Path | None = DATA_DIR_OPTION,
) -> None:
    """Run the parse-task consumer, the result relay (Kafka or RabbitMQ per MQ_VENDOR),
    RAGLINE_PARSE_BATCH_WORKERS parse-batch loops and the re-embedding loop."""
    entry = entry_of(ctx, data_dir)
    settings = entry.settings()
    configure_logging(settings.log_format, settings.secret_values)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()

        def stop_on_signals() -> None:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, stop.set)

        stop_on_signals()
        worker = await entry.worker(
            consumers=consumers,
            concurrency=concurrency or settings.worker_concurrency,
        )
        if http_port is None:
            await with_background_loops(entry, worker, stop)
            return
        server = operations_server(entry, http_host, http_port)
        serving = asyncio.create_task(server.serve())
        while not server.started and not serving.done():
            await asyncio.sleep(0.05)
        if serving.done():  # the port could not be bound: say why and stop
            serving.result()
            raise typer.Exit(1)
        stop_on_signals()  # uvicorn took the signals for itself while starting
        try:
            await with_background_loops(entry, worker, stop)
        finally:
            server.should_exit = True
            await serving

    run_session(entry, main)


async def with_background_loops(entry: Entry, worker: Worker, stop: asyncio.Event) -> None:
    """The worker until `stop`, with `parse_batch_workers` parse-batch loops and the
    re-embedding loop beside it (each stops after the work in hand on the way out)."""
    batches = await entry.use_cases.parse_batch_runner()
    reembedding = reembedding_loop.running(entry.use_cases.reembedding_loop)
    async with batches.running(entry.settings().parse_batch_workers), reembedding:
        await worker.run_until(stop)


def operations_server(entry: Entry, host: str, port: int) -> uvicorn.Server:
    """uvicorn serving the health and metrics routes on the worker's event loop."""
    import uvicorn

    from ragline.adapters.inbound.http import create_operations_app
    from ragline.adapters.inbound.http.deadlines import deadline_protocol

    settings = entry.settings()
    config = uvicorn.Config(
        create_operations_app(entry),
        host=host,
        port=port,
        log_config=None,
        lifespan="off",
        http=deadline_protocol(
            settings.http_header_timeout_seconds, settings.http_body_timeout_seconds
        ),
    )
    return uvicorn.Server(config)
