"""One qdrant-client per local path per process.

Qdrant local mode locks its storage directory: a second client on the same path (even in the
same process) fails. Adapters therefore borrow the client from this registry, which counts
borrowers and closes the client when the last one returns it. Local mode is not thread-safe,
so calls on a local client are serialised with the lock that comes with it.
"""

from __future__ import annotations

import os
import threading

import attrs
from qdrant_client import QdrantClient


@attrs.define
class SharedClient:
    client: QdrantClient
    lock: threading.Lock | None  # None: server mode, the client is thread-safe
    key: str | None  # registry key for local paths; None for private clients
    borrowers: int = 1


_registry: dict[str, SharedClient] = {}
_registry_lock = threading.Lock()


def borrow_local(path: str) -> SharedClient:
    """The process-wide client for a local storage directory (created on first use)."""
    key = os.path.realpath(path)
    with _registry_lock:
        shared = _registry.get(key)
        if shared is not None:
            shared.borrowers += 1
            return shared
        os.makedirs(key, exist_ok=True)
        client = QdrantClient(path=key, force_disable_check_same_thread=True)
        shared = SharedClient(client=client, lock=threading.Lock(), key=key)
        _registry[key] = shared
        return shared


def in_memory() -> SharedClient:
    """A private in-memory local client (tests, throwaway indexes)."""
    client = QdrantClient(location=":memory:", force_disable_check_same_thread=True)
    return SharedClient(client=client, lock=threading.Lock(), key=None)


def remote(url: str, api_key: str | None, timeout: float) -> SharedClient:
    client = QdrantClient(url=url, api_key=api_key, timeout=int(timeout))
    return SharedClient(client=client, lock=None, key=None)


def borrow_again(shared: SharedClient) -> None:
    """One more borrower of a client already borrowed (another collection on it)."""
    with _registry_lock:
        shared.borrowers += 1


def give_back(shared: SharedClient) -> None:
    """Return a borrowed client; the last borrower closes it."""
    with _registry_lock:
        shared.borrowers -= 1
        if shared.borrowers > 0:
            return
        if shared.key is not None:
            _registry.pop(shared.key, None)
    shared.client.close()
