"""Slow clients are cut off (issue 18: a client trickling its request held a connection
forever): uvicorn runs ragline's DeadlineProtocol, which answers a request head or body that
does not arrive in time with 408 and closes the connection, over a real socket."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn

from ragline.adapters.inbound.http.deadlines import deadline_protocol
from ragline.testing.services.fixtures import free_port

DEADLINE = 0.3
SOCKET_TIMEOUT = 30.0  # only so that a regression fails instead of hanging


async def echo_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Reads the whole body, then answers its length (after a pause for /slow)."""
    if scope["type"] != "http":
        return
    size, more = 0, True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        size += len(message.get("body", b""))
        more = message.get("more_body", False)
    if scope["path"] == "/slow":
        await asyncio.sleep(DEADLINE * 4)  # a slow route: the request is in, no deadline
    body = str(size).encode()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-length", str(len(body)).encode())]})  # fmt: skip
    await send({"type": "http.response.body", "body": body})


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, int]]:
    port = free_port()
    config = uvicorn.Config(
        echo_app,
        host="127.0.0.1",
        port=port,
        http=deadline_protocol(DEADLINE, DEADLINE),
        log_config=None,
        lifespan="off",
    )
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    for _ in range(500):
        if running.started:
            break
        threading.Event().wait(0.01)
    assert running.started
    yield "127.0.0.1", port
    running.should_exit = True
    thread.join(10)


def connect(server: tuple[str, int]) -> socket.socket:
    sock = socket.create_connection(server, timeout=SOCKET_TIMEOUT)
    return sock


def read_all(sock: socket.socket) -> bytes:
    """Everything until the server closes the connection."""
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def read_response(sock: socket.socket) -> bytes:
    """One response: its head, then as many body bytes as its content-length says."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"closed mid-response: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, f"closed mid-body: {data!r}"
        body += chunk
    return head + b"\r\n\r\n" + body


def test_a_head_that_does_not_arrive_in_time_is_408_and_closed(server: tuple[str, int]) -> None:
    with connect(server) as sock:
        sock.sendall(b"POST /x HTTP/1.1\r\nhost: 127.0.0.1\r\n")  # ... and never the end
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert b"application/problem+json" in answer and b"connection: close" in answer


def test_a_connection_that_sends_nothing_is_closed(server: tuple[str, int]) -> None:
    with connect(server) as sock:
        assert read_all(sock) == b""


def test_a_body_that_does_not_arrive_in_time_is_408_and_closed(server: tuple[str, int]) -> None:
    with connect(server) as sock:
        sock.sendall(b"POST /x HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 100\r\n\r\n")
        sock.sendall(b"0123456789")  # 10 of the 100 bytes
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n")


def test_whole_requests_are_answered_however_slow_the_route_and_kept_alive(
    server: tuple[str, int],
) -> None:
    with connect(server) as sock:
        for path in ("/slow", "/x"):  # two requests on one connection, each re-armed
            head = f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 5\r\n\r\n"
            sock.sendall(head.encode() + b"hello")
            answer = read_response(sock)
            assert answer.startswith(b"HTTP/1.1 200 OK\r\n") and answer.endswith(b"\r\n\r\n5")
        assert read_all(sock) == b""  # then idle: closed, nothing more said
