"""Engines from a database URL, with the per-backend setup the repositories rely on.

- SQLite (sqlite3): WAL, busy_timeout, foreign keys, and `BEGIN IMMEDIATE` for
  every transaction: writers queue at BEGIN (up to busy_timeout) instead of failing later
  with "database is locked" when a read snapshot turns stale. Units of work get an
  InlineEngine (sqlite_connection): the blocking sqlite3 driver called on the event loop's
  thread, and only the wait for the write lock is asynchronous (busy_timeout 0, BEGIN
  IMMEDIATE retried with sleeps).
- PostgreSQL (psycopg 3): READ COMMITTED, session time zone UTC.
- MariaDB/MySQL (asyncmy / pymysql): utf8mb4, READ COMMITTED, session time zone UTC, and
  the FOUND_ROWS client flag (SQLAlchemy sets it) so rowcount counts matched rows.

Plain URLs are accepted and given the right driver: `sqlite:///x.db`,
`postgresql://user@host/db`, `mysql://root@host/db`, `mariadb://...`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url

from ragline.adapters.persistence.sql.sqlite_connection import InlineEngine

if TYPE_CHECKING:  # SQLite never loads the asyncio extension (~50 ms of every start)
    from sqlalchemy.ext.asyncio import AsyncEngine

DEFAULT_BUSY_TIMEOUT_MS = 30_000

# SQLite needs no asyncio driver: units of work call sqlite3 inline (sqlite_connection).
_ASYNC_DRIVERS = {"sqlite": "pysqlite", "postgresql": "psycopg", "mysql": "asyncmy"}
_SYNC_DRIVERS = {"sqlite": "pysqlite", "postgresql": "psycopg", "mysql": "pymysql"}


def backend_of(url: str | URL) -> str:
    """'sqlite', 'postgresql' or 'mysql' (MariaDB counts as mysql); ValueError otherwise."""
    name = make_url(url).get_backend_name()
    backend = {"postgres": "postgresql", "mariadb": "mysql"}.get(name, name)
    if backend not in _ASYNC_DRIVERS:
        raise ValueError(f"unsupported database backend {name!r} (sqlite, postgresql, mysql)")
    return backend


def _with_driver(url: str | URL, drivers: dict[str, str]) -> URL:
    parsed = make_url(url)
    backend = backend_of(parsed)
    dialect = "mariadb" if parsed.get_backend_name() == "mariadb" else backend
    parsed = parsed.set(drivername=f"{dialect}+{drivers[backend]}")
    if backend == "mysql" and "charset" not in parsed.query:
        parsed = parsed.update_query_dict({"charset": "utf8mb4"})
    return parsed


def async_url(url: str | URL) -> URL:
    """The URL with the asyncio driver of its backend."""
    return _with_driver(url, _ASYNC_DRIVERS)


def sync_url(url: str | URL) -> URL:
    """The URL with the blocking driver of its backend (used by migrations)."""
    return _with_driver(url, _SYNC_DRIVERS)


def _refuse_memory_sqlite(url: URL) -> None:
    """An in-memory SQLite database is private to one connection: every unit of work would
    see a different, empty database. Use a file (tmp_path in tests)."""
    database = url.database or ""
    if database in ("", ":memory:") or url.query.get("mode") == "memory":
        raise ValueError("in-memory SQLite is not supported: give a database file path")


def sqlite_parent(url: str | URL) -> None:
    """Create the folder of a SQLite database file (the data dir on first start)."""
    parsed = make_url(url)
    if backend_of(parsed) == "sqlite" and parsed.database and parsed.database != ":memory:":
        Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)


def _engine_kwargs(backend: str) -> dict[str, Any]:
    if backend == "postgresql":
        return {
            "isolation_level": "READ COMMITTED",
            "pool_pre_ping": True,
            "connect_args": {"options": "-c timezone=UTC"},
        }
    if backend == "mysql":
        return {
            "isolation_level": "READ COMMITTED",
            "pool_pre_ping": True,
            "pool_recycle": 3600,
            "connect_args": {"init_command": "SET time_zone = '+00:00'"},
        }
    return {}


def _enter_wal(cursor: Any, busy_timeout_ms: int) -> None:
    """Switch the file to WAL once. The switch needs an exclusive lock and SQLite fails it
    at once with "database is locked" (no busy handler) while another connection is opening
    the fresh file, so it is retried until busy_timeout; a file already in WAL is left alone.
    """
    deadline = time.monotonic() + busy_timeout_ms / 1000
    delay = 0.005
    while True:
        try:
            cursor.execute("PRAGMA journal_mode")
            if str(cursor.fetchone()[0]).lower() == "wal":
                return
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except Exception as exc:  # sqlite3 or SQLAlchemy's wrapper: same message
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)


def _install_sqlite_hooks(engine: Engine, busy_timeout_ms: int, *, inline: bool) -> None:
    """`inline`: the InlineEngine's connections, whose busy handler is off and which begin
    their transactions themselves (asynchronously); otherwise BEGIN IMMEDIATE here."""

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take BEGIN away from the driver (its legacy mode skips BEGIN before SELECT and
        # breaks SAVEPOINT); BEGIN IMMEDIATE is emitted instead.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {0 if inline else int(busy_timeout_ms)}")
            _enter_wal(cursor, busy_timeout_ms)
            cursor.execute("PRAGMA synchronous = NORMAL")
            cursor.execute("PRAGMA foreign_keys = ON")
        finally:
            cursor.close()

    if not inline:

        @event.listens_for(engine, "begin")
        def _on_begin(connection: Any) -> None:
            connection.exec_driver_sql("BEGIN IMMEDIATE")


def _install_hooks(engine: Engine, backend: str, busy_timeout_ms: int) -> None:
    if backend == "sqlite":
        _install_sqlite_hooks(engine, busy_timeout_ms, inline=False)


def create_async_engine_for(
    url: str | URL, *, busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS, echo: bool = False
) -> AsyncEngine | InlineEngine:
    """The engine units of work use for `url` (see the module docstring): an AsyncEngine,
    or on SQLite an InlineEngine with the same interface."""
    backend = backend_of(url)
    if backend == "sqlite":
        _refuse_memory_sqlite(make_url(url))
        engine = create_engine(sync_url(url), echo=echo, connect_args={"check_same_thread": False})
        _install_sqlite_hooks(engine, busy_timeout_ms, inline=True)
        return InlineEngine(engine, busy_timeout_ms / 1000)
    from sqlalchemy.ext.asyncio import create_async_engine

    parsed = async_url(url)
    async_engine = create_async_engine(parsed, echo=echo, **_engine_kwargs(backend))
    _install_hooks(async_engine.sync_engine, backend, busy_timeout_ms)
    return async_engine


def create_sync_engine_for(
    url: str | URL, *, busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS, echo: bool = False
) -> Engine:
    """A blocking Engine for `url` with the same setup (migrations, admin tools)."""
    backend = backend_of(url)
    if backend == "sqlite":
        _refuse_memory_sqlite(make_url(url))
    engine = create_engine(sync_url(url), echo=echo, **_engine_kwargs(backend))
    _install_hooks(engine, backend, busy_timeout_ms)
    return engine
