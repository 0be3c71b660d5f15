"""Embedding cache keyed by sha256(model + side + text): an in-memory LRU in front of an
optional SQLite file under the data dir.

Re-ingesting a changed file mostly re-embeds unchanged chunks; retries and resumes re-embed
chunks whose vectors were computed but not stored. A hit costs a hash and a lookup instead of
a forward pass. Vectors are stored as float32 bytes, exactly as the model returned them.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from pathlib import Path


def cache_key(model_name: str, side: str, text: str) -> bytes:
    """sha256 over the model, the side ("query"/"passage") and the text."""
    digest = hashlib.sha256()
    for part in (model_name, side, text):
        data = part.encode("utf-8", "surrogatepass")  # any str, even from bad bytes
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.digest()


class EmbeddingCache:
    """Thread-safe. `path=None` keeps it in memory only."""

    def __init__(self, path: Path | str | None = None, memory_items: int = 50_000) -> None:
        self._memory: OrderedDict[bytes, bytes] = OrderedDict()
        self._memory_items = memory_items
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS embeddings (key BLOB PRIMARY KEY, vector BLOB NOT NULL)"
            )

    def get_many(self, keys: Iterable[bytes]) -> dict[bytes, bytes]:
        """The cached vectors among `keys` (memory first, then disk)."""
        found: dict[bytes, bytes] = {}
        missing: list[bytes] = []
        with self._lock:
            for key in keys:
                value = self._memory.get(key)
                if value is None:
                    missing.append(key)
                else:
                    self._memory.move_to_end(key)
                    found[key] = value
            if self._db is not None and missing:
                for start in range(0, len(missing), 500):
                    part = missing[start : start + 500]
                    marks = ",".join("?" * len(part))
                    rows = self._db.execute(
                        f"SELECT key, vector FROM embeddings WHERE key IN ({marks})",  # nosec B608
                        part,  # (above) only ? marks in the text; the values are bound
                    ).fetchall()
                    for key, value in rows:
                        found[bytes(key)] = bytes(value)
                        self._remember(bytes(key), bytes(value))
        return found

    def put_many(self, items: Mapping[bytes, bytes]) -> None:
        with self._lock:
            for key, value in items.items():
                self._remember(key, value)
            if self._db is not None and items:
                self._db.execute("BEGIN")
                self._db.executemany(
                    "INSERT OR REPLACE INTO embeddings (key, vector) VALUES (?, ?)",
                    list(items.items()),
                )
                self._db.execute("COMMIT")

    def _remember(self, key: bytes, value: bytes) -> None:
        self._memory[key] = value
        self._memory.move_to_end(key)
        while len(self._memory) > self._memory_items:
            self._memory.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._memory)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
