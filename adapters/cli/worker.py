"""`ragline worker`: consume the task topic until SIGINT/SIGTERM."""

from __future__ import annotations

import asyncio
import logging
import signal
from pathlib import Path

import typer

from ragline.adapters.cli.app import DATA_DIR_OPTION, app, provided, run_session


@app.command()
def worker(
    ctx: typer.Context,
    consumers: int = typer.Option(1, "--consumers", min=1, max=16, help="Concurrent tasks."),
    data_dir: Path | None = DATA_DIR_OPTION,
) -> None:
    """Run the parse-task consumer and the result relay (Kafka or RabbitMQ per MQ_VENDOR)."""
    ctx.obj.choose(data_dir)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    for chatty in ("pika", "aiokafka", "alembic", "httpx"):
        logging.getLogger(chatty).setLevel(logging.WARNING)
    container = ctx.obj.get()

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        worker = await provided(container.worker, consumers=consumers)
        await worker.run_until(stop)

    run_session(container, main)
