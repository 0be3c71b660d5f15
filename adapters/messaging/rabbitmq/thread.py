"""One pika BlockingConnection on its own thread, driven from asyncio.

pika's BlockingConnection is not thread-safe and blocks; the event loop must not block. So
each adapter owns one connection on a dedicated thread: the thread runs pika's I/O loop
(keeping heartbeats alive however long a task takes), work is handed to it with pika's own
`add_callback_threadsafe`, and results come back through `loop.call_soon_threadsafe`.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import pika
from pika.adapters.blocking_connection import BlockingChannel

from ragline.application.ports.messaging import MessageBusError

T = TypeVar("T")


class PikaThread:
    def __init__(
        self,
        parameters: pika.connection.Parameters,
        setup: Callable[[BlockingChannel], None],
        *,
        name: str,
        on_exit: Callable[[BaseException | None], None] | None = None,
    ) -> None:
        self._parameters = parameters
        self._setup = setup
        self._name = name
        self._on_exit = on_exit
        self._connection: pika.BlockingConnection | None = None
        self._channel: BlockingChannel | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._pending: set[asyncio.Future[Any]] = set()
        self._pending_lock = threading.Lock()
        self.error: BaseException | None = None

    async def start(self) -> None:
        """Connect and run `setup(channel)` on the thread; raise MessageBusError on failure."""
        self._loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = self._loop.create_future()
        self._track(ready)
        self._thread = threading.Thread(target=self._run, args=(ready,), name=self._name)
        self._thread.daemon = True
        self._thread.start()
        await ready

    async def call(self, work: Callable[[BlockingChannel], T]) -> T:
        """Run `work(channel)` on the connection's thread and return its result."""
        loop = asyncio.get_running_loop()
        connection = self._connection
        if connection is None or self._stopping.is_set() or not self.alive:
            raise MessageBusError(f"{self._name}: connection closed")
        future: asyncio.Future[T] = loop.create_future()
        self._track(future)

        def run() -> None:
            try:
                assert self._channel is not None  # narrows for mypy  # nosec B101
                result = work(self._channel)
            except BaseException as error:
                self._resolve(future, error=error)
            else:
                self._resolve(future, result=result)

        try:
            connection.add_callback_threadsafe(run)
        except Exception as error:
            self._resolve(future, error=error)
        try:
            return await future
        except MessageBusError:
            raise
        except Exception as error:
            raise MessageBusError(f"{self._name}: {error!r}") from error

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    async def stop(self) -> None:
        """Close the channel and connection (the broker requeues unacked deliveries)."""
        self._stopping.set()
        connection, thread = self._connection, self._thread
        if connection is not None and thread is not None and thread.is_alive():
            with contextlib.suppress(Exception):  # already closing: nothing to wake
                connection.add_callback_threadsafe(lambda: None)  # wake the I/O loop
        if thread is not None:
            await asyncio.get_running_loop().run_in_executor(None, thread.join)

    # --- on the pika thread -------------------------------------------------------------

    def _run(self, ready: asyncio.Future[None]) -> None:
        error: BaseException | None = None
        try:
            self._connection = pika.BlockingConnection(self._parameters)
            self._channel = self._connection.channel()
            self._setup(self._channel)
        except BaseException as failure:
            self._close()
            self._resolve(ready, error=MessageBusError(f"{self._name}: {failure!r}"))
            self._finish(failure)
            return
        self._resolve(ready, result=None)
        try:
            while not self._stopping.is_set():
                self._connection.process_data_events(time_limit=1)
                if not self._channel.is_open:
                    raise MessageBusError(f"{self._name}: channel closed by the broker")
        except BaseException as failure:
            error = failure
        self._close()
        self._finish(error)

    def _close(self) -> None:
        connection = self._connection
        if connection is not None and connection.is_open:
            with contextlib.suppress(Exception):
                connection.close()

    def _finish(self, error: BaseException | None) -> None:
        self.error = error
        with self._pending_lock:
            pending = list(self._pending)
        for future in pending:
            self._resolve(future, error=MessageBusError(f"{self._name}: connection closed"))
        if self._on_exit is not None:
            self._on_exit(error)

    # --- either thread ------------------------------------------------------------------

    def _track(self, future: asyncio.Future[Any]) -> None:
        with self._pending_lock:
            self._pending.add(future)

    def _resolve(
        self,
        future: asyncio.Future[Any],
        *,
        result: Any = None,
        error: BaseException | None = None,
    ) -> None:
        with self._pending_lock:
            if future not in self._pending:
                return
            self._pending.discard(future)

        def settle() -> None:
            if future.done():
                return
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(result)

        assert self._loop is not None  # narrows for mypy  # nosec B101
        with contextlib.suppress(RuntimeError):  # the loop is gone; nobody is waiting any more
            self._loop.call_soon_threadsafe(settle)
