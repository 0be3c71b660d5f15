"""Entry: what bootstrap hands a driving adapter, typed end to end.

The use cases (`UseCases`), the settings an entry point reads, the worker it may run in its
own process, and the close of every resource the wiring opened. Nothing here names a
provider: the container stays in bootstrap.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import NoReturn, Protocol

import attrs
from pydantic import SecretStr

from ragline.adapters.inbound.task_consumer import Worker
from ragline.application.ports.messaging import MessageBus
from ragline.application.use_cases import Build, UseCases


class EntrySettings(Protocol):
    """The settings the CLI and the HTTP API read (bootstrap's `Settings` has them all)."""

    @property
    def data_dir(self) -> Path: ...
    @property
    def log_format(self) -> str: ...
    @property
    def secret_values(self) -> list[str]: ...
    @property
    def secret_key_source(self) -> str: ...
    @property
    def worker_concurrency(self) -> int: ...
    @property
    def parse_batch_workers(self) -> int: ...
    @property
    def parse_task_topic(self) -> str: ...
    @property
    def api_tokens(self) -> SecretStr | None: ...
    @property
    def http_max_body_mb(self) -> int: ...
    @property
    def http_cpu_workers(self) -> int: ...
    @property
    def http_cpu_queue(self) -> int: ...
    @property
    def http_header_timeout_seconds(self) -> float: ...
    @property
    def http_body_timeout_seconds(self) -> float: ...
    def model_dump(self) -> Mapping[str, object]:
        """Every setting by name (`ragline doctor` shows them, secrets hidden)."""
        ...


class WorkerFactory(Protocol):
    """A worker (consumers + relay); None keeps the configured count."""

    def __call__(
        self, *, consumers: int | None = None, concurrency: int | None = None
    ) -> Awaitable[Worker]: ...


@attrs.frozen
class Entry:
    use_cases: UseCases
    settings: Callable[[], EntrySettings]
    bus: Build[MessageBus]
    """Asked before building a worker: only an in-process bus needs one in this process."""
    worker: WorkerFactory
    close: Callable[[], Awaitable[None]]
    """Close every resource opened (database pools, indexes, the bus)."""


def _unwired(*args: object, **kwargs: object) -> NoReturn:
    raise RuntimeError("this app was built to read its routes only: nothing is wired")


def unwired() -> Entry:
    """An Entry whose every part refuses: for reading an app's routes (the API document)
    without building the wiring."""
    every = {field.name: _unwired for field in attrs.fields(UseCases)}
    return Entry(
        use_cases=UseCases(**every),
        settings=_unwired,
        bus=_unwired,
        worker=_unwired,
        close=_unwired,
    )
