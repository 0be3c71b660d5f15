"""TcpGate: a loopback TCP proxy in front of one server that can be cut and restored.

Cut = every open connection is aborted and the port stops listening (clients get
"connection refused", as from a stopped server); restore = the same port listens again.
The shared servers of this machine (PostgreSQL, RabbitMQ) cannot be stopped for one test,
so the campaign points ragline at a gate instead. The gates run on their own event loop in
a thread: ragline's blocking calls (migrations, boto3) must not stop the proxying.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class GateLoop:
    """One event loop on a daemon thread, hosting every gate."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="fault-gates")
        self._thread.daemon = True
        self._thread.start()

    def call(self, work: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
        """Run `work` on the gates' loop and wait for it (from any other thread)."""
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(timeout)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)


class TcpGate:
    def __init__(self, loop: GateLoop, host: str, port: int) -> None:
        self._loop = loop
        self._upstream = (host, port)
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.port = 0
        self.cuts = 0

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> TcpGate:
        self._loop.call(self._listen())
        return self

    def cut(self) -> None:
        """Abort every connection and stop listening (callable from any thread but the
        gates' own)."""
        self._loop.call(self._cut())

    def restore(self) -> None:
        self._loop.call(self._listen())

    def close(self) -> None:
        self._loop.call(self._cut())

    @property
    def is_cut(self) -> bool:
        return self._server is None

    async def _listen(self) -> None:
        if self._server is not None:
            return
        self._server = await asyncio.start_server(
            self._pipe, "127.0.0.1", self.port, reuse_address=True
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def _cut(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
            self.cuts += 1
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()
        if server is not None:
            with contextlib.suppress(Exception):
                await server.wait_closed()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._server is None:
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self._upstream)
        except OSError:
            writer.transport.abort()
            return
        self._writers.update((writer, up_writer))
        await asyncio.gather(
            _pump(reader, up_writer), _pump(up_reader, writer), return_exceptions=True
        )
        for end in (writer, up_writer):
            self._writers.discard(end)
            end.transport.abort()


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(65536):
            writer.write(chunk)
            await writer.drain()
    finally:
        with contextlib.suppress(Exception):
            writer.transport.abort()
