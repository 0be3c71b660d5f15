"""The SQLite file behind EmbeddedVectorIndex: schema, connections and transactions.

One file `<path>/vectors.sqlite3` in WAL mode (synchronous=NORMAL: a commit survives a process
crash, the last commits may be lost on power loss, like the SQL truth store). Several
processes may open it at once (ingest worker + search CLI); SQLite serialises the writers and
readers see a snapshot, so no lock lives in Python beyond the pool's own list.

Every call borrows one connection for one short transaction and never holds it across an
await (the async adapter runs each call wholly in a worker thread, or, for a small write, on
the event loop's thread when the write lock is free at once: see `borrow_idle`).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

FILE_NAME = "vectors.sqlite3"
FORMAT = "1"  # bump when the blob layout or the tables change

# `scopes` gives each (user_id, dataset_id) a small integer id and two generation counters,
# bumped in the same transaction as every write that changes that scope's dense or sparse
# vectors, so a process holding arrays in memory knows when they are stale. `points.meta` is
# the document's metadata in the flat form (JSON), read by SQL only: relabelling a document
# changes no vector, so it bumps no generation. Rows of `scopes`
# are never deleted: a generation never goes back, so (scope id, generation) names one state.
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS scopes (
    id INTEGER PRIMARY KEY,
    user_id TEXT NOT NULL,
    dataset_id TEXT NOT NULL,
    dense_generation INTEGER NOT NULL DEFAULT 0,
    sparse_generation INTEGER NOT NULL DEFAULT 0,
    UNIQUE (user_id, dataset_id)
);
CREATE TABLE IF NOT EXISTS points (
    id INTEGER PRIMARY KEY,
    scope_id INTEGER NOT NULL,
    chunk_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    parent_id TEXT,
    extra TEXT,
    meta TEXT,
    dense BLOB,
    sparse BLOB,
    UNIQUE (scope_id, chunk_id)
);
CREATE INDEX IF NOT EXISTS points_by_document ON points (scope_id, doc_id);
-- a scope's points holding each vector: counts without reading rows, scans in id order
CREATE INDEX IF NOT EXISTS points_with_dense ON points (scope_id) WHERE dense IS NOT NULL;
CREATE INDEX IF NOT EXISTS points_with_sparse ON points (scope_id) WHERE sparse IS NOT NULL;
"""


class FormatMismatch(Exception):
    """The file was written by another layout version of this adapter."""


class PoolClosed(Exception):
    """A connection was asked for after close()."""


def _enter_wal(connection: sqlite3.Connection, deadline: float) -> None:
    """Switch the file to WAL. SQLite fails the switch at once with "database is locked" (no
    busy handler) while another connection is opening the fresh file, so retry until the
    busy timeout; a file already in WAL is left alone."""
    delay = 0.005
    while True:
        try:
            mode = connection.execute("PRAGMA journal_mode").fetchone()[0]
            if str(mode).lower() != "wal":
                connection.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)


@contextmanager
def transaction(connection: sqlite3.Connection, *, write: bool) -> Iterator[sqlite3.Connection]:
    """One transaction: IMMEDIATE for writes (takes the write lock up front, so two writers
    never deadlock upgrading read locks), deferred for reads (one snapshot for all SELECTs)."""
    connection.execute("BEGIN IMMEDIATE" if write else "BEGIN")
    try:
        yield connection
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            with suppress(sqlite3.Error):
                connection.execute("ROLLBACK")
        raise


class Connections:
    """A small pool of connections to one file, one per concurrently running worker thread.

    The first connection creates the schema. Connections are opened with
    check_same_thread=False because asyncio.to_thread may run consecutive calls on different
    threads; a connection is only ever used by one thread at a time (borrowed, then returned).
    """

    def __init__(self, directory: Path, busy_timeout_ms: int) -> None:
        self.file = directory / FILE_NAME
        self._directory = directory
        self._busy_timeout_ms = busy_timeout_ms
        self._idle: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._ready = False
        self._closed = False

    def _open(self) -> sqlite3.Connection:
        self._directory.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + self._busy_timeout_ms / 1000
        connection = sqlite3.connect(
            self.file,
            timeout=self._busy_timeout_ms / 1000,
            isolation_level=None,  # autocommit: transactions are explicit (see transaction)
            check_same_thread=False,
        )
        try:
            connection.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")
            _enter_wal(connection, deadline)
            connection.execute("PRAGMA synchronous = NORMAL")
            if not self._ready:
                self._create_schema(connection)
                self._ready = True
        except BaseException:
            connection.close()
            raise
        return connection

    @staticmethod
    def _create_schema(connection: sqlite3.Connection) -> None:
        with transaction(connection, write=True):
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    connection.execute(statement)
            columns = {row[1] for row in connection.execute("PRAGMA table_info(points)")}
            if "meta" not in columns:  # a file from before metadata filters: same format
                connection.execute("ALTER TABLE points ADD COLUMN meta TEXT")
            row = connection.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
            if row is None:
                connection.execute("INSERT INTO meta (key, value) VALUES ('format', ?)", (FORMAT,))
            elif row[0] != FORMAT:
                raise FormatMismatch(
                    f"vector file format {row[0]!r}, this adapter reads {FORMAT!r}"
                )

    @contextmanager
    def borrow(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._closed:
                raise PoolClosed(str(self.file))
            connection = self._idle.pop() if self._idle else None
        if connection is None:
            connection = self._open()
        try:
            yield connection
        finally:
            with self._lock:
                keep = not self._closed and not connection.in_transaction
                if keep:
                    self._idle.append(connection)
            if not keep:  # closed, or left mid-transaction by a failed ROLLBACK
                connection.close()

    @contextmanager
    def borrow_idle(self) -> Iterator[sqlite3.Connection | None]:
        """An idle connection (None if there is none) with its busy handler off for the
        borrow: a statement that would wait for a lock fails at once with SQLITE_BUSY
        instead, so the caller never blocks and can go to a worker thread instead. Never
        opens a connection (opening may wait: WAL switch, schema)."""
        with self._lock:
            if self._closed:
                raise PoolClosed(str(self.file))
            connection = self._idle.pop() if self._idle else None
        if connection is None:
            yield None
            return
        keep = False
        try:
            connection.execute("PRAGMA busy_timeout = 0")
            try:
                yield connection
            finally:
                connection.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")
            keep = not connection.in_transaction
        finally:
            with self._lock:
                keep = keep and not self._closed
                if keep:
                    self._idle.append(connection)
            if not keep:
                connection.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()
