"""Deadlines for slow clients: a request's head and its body must arrive in time.

uvicorn has no such timeout (its keep-alive timer is reset by every byte, so a client
trickling one byte at a time holds a connection forever; uvicorn issue #157), and an ASGI
middleware cannot help with the head: it runs once the head is parsed. So the protocol
uvicorn runs per connection is its own h11 protocol with two deadlines, following h11's
view of the client (`their_state`):

- IDLE (waiting for a request head, from the connection's start or the end of the previous
  response): `header_timeout`. A client that sent part of a head is answered 408; an idle
  connection that sent nothing is closed.
- SEND_BODY (head read, body still coming): `body_timeout`, counted from the end of the
  head. A 408 when no response has started, and the connection is closed either way; the
  route waiting for the body sees the client gone.

Once the whole request is in (DONE) no deadline runs: a slow route is not the client's fault.
`h11_max_incomplete_event_size` (16 KiB) already bounds what a head may hold in memory.
"""

from __future__ import annotations

import asyncio
import json

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from ragline.adapters.inbound.http.problems import PROBLEM_JSON

HEAD, BODY = "head", "body"


def _request_timeout() -> bytes:
    body = json.dumps(
        {
            "type": "about:blank",
            "title": "Request Timeout",
            "status": 408,
            "detail": "the request did not arrive in time",
        }
    ).encode()
    head = (
        "HTTP/1.1 408 Request Timeout\r\n"
        f"content-type: {PROBLEM_JSON}\r\n"
        f"content-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


REQUEST_TIMEOUT = _request_timeout()


class DeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol with the head and body deadlines (see the module)."""

    header_timeout: float = 10.0
    body_timeout: float = 120.0
    # each connection's own once set (no __init__ of ours: uvicorn's signature stays its own)
    _phase: str | None = None
    _timer: asyncio.TimerHandle | None = None
    _head_started = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._follow()

    def data_received(self, data: bytes) -> None:
        if self._phase == HEAD and data:
            self._head_started = True
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        super().connection_lost(exc)

    def _follow(self) -> None:
        """Arm the deadline of the phase the client is in, when it changed."""
        state = self.conn.their_state
        phase = HEAD if state is h11.IDLE else BODY if state is h11.SEND_BODY else None
        if phase == self._phase or self.transport is None or self.transport.is_closing():
            return
        self._cancel()
        self._phase = phase
        if phase is None:
            return
        self._head_started = False
        seconds = self.header_timeout if phase == HEAD else self.body_timeout
        self._timer = self.loop.call_later(seconds, self._expired, phase)

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expired(self, phase: str) -> None:
        self._timer = None
        if self.transport.is_closing():
            return
        answering = self._head_started if phase == HEAD else not self._response_started()
        if answering:
            self.transport.write(REQUEST_TIMEOUT)
        self.transport.close()

    def _response_started(self) -> bool:
        return self.cycle is not None and self.cycle.response_started


def deadline_protocol(header_timeout: float, body_timeout: float) -> type[DeadlineProtocol]:
    """The protocol class to give uvicorn (`http=`), with these deadlines in seconds."""
    if header_timeout <= 0 or body_timeout <= 0:
        raise ValueError("deadlines must be positive")
    return type(
        "DeadlineProtocol",
        (DeadlineProtocol,),
        {"header_timeout": header_timeout, "body_timeout": body_timeout},
    )
