"""The parse cache end to end on SQLite and PostgreSQL: a real container per test (local
objects, the sandboxed parser, pypdfium2 page counts), a database per backend, a PDF made
here, and a second container on the same store playing "another worker"."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import Fernet
from fpdf import FPDF

from ragline.application.health import obtain
from ragline.application.parsing import ParseBatchRunner
from ragline.bootstrap.container import Container, container_for
from ragline.domain.parse_batch import RequestOutcome
from tests.adapters.sql.conftest import create_postgres_database, drop_postgres_database

PAGES = 4
SECRET_KEY = Fernet.generate_key().decode()


def make_pdf(path: Path, pages: int = PAGES, words: str = "green tea") -> Path:
    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for n in range(1, pages + 1):
        pdf.add_page()
        for k in range(n + 2):
            pdf.set_x(10)
            pdf.multi_cell(
                180, 10, f"Line {k} of page {n}: {words} step {n * 10 + k} at {70 + n + k} C."
            )
    pdf.output(str(path))
    return path


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'ragline.db'}"
        return
    name = create_postgres_database()
    try:
        yield f"postgresql://postgres@127.0.0.1:5432/{name}"
    finally:
        drop_postgres_database(name)


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> dict[str, Any]:
    """No background loops: the tests decide when batches run."""
    return {
        "database_url": database_url,
        "secret_key": SECRET_KEY,  # a shared database needs a shared API-key secret
        "parse_batch_workers": 0,
        "parse_pages_per_batch": 2,
        "data_dir": tmp_path / "data",
    }


class OtherWorker:
    """A worker process of its own (its container, engine and event loop) on the store."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings = dict(settings)

    def _container(self) -> Container:
        options = dict(self.settings)
        return container_for(options.pop("data_dir"), **options)

    def run(self, ids: list[int]) -> RequestOutcome:
        async def main() -> RequestOutcome:
            container = self._container()
            try:
                runner: ParseBatchRunner = await _obtain(container.parse_batch_runner)
                return await runner.run_ids(ids, timeout=120)
            finally:
                await container.shutdown_resources()

        return asyncio.run(main())

    def claim(self, ids: list[int]) -> None:
        """Claim and never finish (a worker that hangs with its lease)."""

        async def main() -> None:
            container = self._container()
            try:
                runner: ParseBatchRunner = await _obtain(container.parse_batch_runner)
                assert await runner.claim(ids) is not None
            finally:
                await container.shutdown_resources()

        asyncio.run(main())

    def put(self, bucket: str, key: str, source: Path) -> None:
        async def main() -> None:
            container = self._container()
            storage = container.storage()
            await storage.ensure_bucket(bucket)
            await storage.put_file(bucket, key, source)

        asyncio.run(main())

    def delete(self, bucket: str, key: str) -> None:
        async def main() -> None:
            await self._container().storage().delete(bucket, key)

        asyncio.run(main())


async def _obtain(provider: Any) -> Any:
    return await obtain(provider)


@pytest.fixture
def other(settings: dict[str, Any]) -> OtherWorker:
    return OtherWorker(settings)
