"""Issue 19 item 3: a worker with MQ_VENDOR unset on a shared PostgreSQL used to start on the
in-process bus, and its relay marked real outbox rows SENT into nowhere. Any process that
would run a worker on a non-embedded database now refuses to start, naming the setting."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragline.adapters.inbound.cli import build_cli
from ragline.adapters.inbound.task_consumer.worker import InProcessBusOnSharedDatabase
from ragline.application.health import obtain
from ragline.bootstrap.cli import _entry
from ragline.bootstrap.container import container_for
from tests.adapters.sql.conftest import create_postgres_database, drop_postgres_database

SECRET = "nH6t2kQ0Xq3VqzC5mBfWlQ6uO3yk6nYbS2c8D1Ykq2Q="


@pytest.fixture
def postgres_url() -> Iterator[str]:
    name = create_postgres_database()
    try:
        yield f"postgresql://postgres@127.0.0.1:5432/{name}"
    finally:
        drop_postgres_database(name)


def test_ragline_worker_on_postgresql_without_mq_vendor_refuses_to_start(
    tmp_path: Path, postgres_url: str
) -> None:
    env: dict[str, str | None] = {
        "RAGLINE_DATABASE_URL": postgres_url,
        "RAGLINE_SECRET_KEY": SECRET,
        "MQ_VENDOR": None,  # unset
        "RAGLINE_MQ_VENDOR": None,
    }
    result = CliRunner().invoke(
        build_cli(_entry), ["worker", "--data-dir", str(tmp_path / "data")], env=env
    )
    assert result.exit_code == 2, result.output
    assert "MQ_VENDOR" in result.output
    assert "postgresql" in result.output


async def test_a_worker_on_a_shared_database_is_not_built_on_the_in_process_bus(
    tmp_path: Path, postgres_url: str
) -> None:
    container = container_for(tmp_path / "data", database_url=postgres_url, secret_key=SECRET)
    try:
        with pytest.raises(InProcessBusOnSharedDatabase, match="MQ_VENDOR=rabbitmq"):
            await obtain(container.worker)
    finally:
        await container.shutdown_resources()  # type: ignore[misc]


async def test_the_embedded_mode_still_runs_its_worker_in_process(tmp_path: Path) -> None:
    container = container_for(tmp_path / "data")
    try:
        worker = await obtain(container.worker)
        assert worker.bus.in_process
    finally:
        await container.shutdown_resources()  # type: ignore[misc]
