"""Whether a broker's port accepts TCP connections (what `ragline doctor` can say without
joining a consumer group or declaring queues)."""

from __future__ import annotations

import socket


def accepts_connections(host: str, port: int, timeout: float = 3.0) -> str:
    with socket.create_connection((host, port), timeout=timeout):
        return f"{host}:{port} accepts connections"
