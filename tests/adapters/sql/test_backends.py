"""What the SQL adapter promises beyond the kit: the migrated schema equals the metadata,
the per-backend session setup is really in force, and misuse fails loudly."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, Engine, inspect, text

from ragline.adapters.persistence.sql import (
    async_url,
    backend_of,
    create_sync_engine_for,
    create_unit_of_work_factory,
    current_revision,
    head_revision,
    sync_url,
    upgrade_to_head,
)
from ragline.adapters.persistence.sql.schema_revision import (
    HEAD_REVISION,
    VERSION_TABLE,
    revisions_recorded,
    upgrade_when_behind,
)
from ragline.adapters.persistence.sql.tables import metadata

from .conftest import (
    create_mariadb_database,
    create_postgres_database,
    drop_mariadb_database,
    drop_postgres_database,
)

BACKENDS = ["sqlite", "postgresql", "mariadb"]


@pytest.fixture(params=BACKENDS)
def empty_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A brand-new, never migrated database on each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'fresh.db'}"
    elif request.param == "postgresql":
        name = create_postgres_database()
        try:
            yield f"postgresql://postgres@127.0.0.1:5432/{name}"
        finally:
            drop_postgres_database(name)
    else:
        name = create_mariadb_database()
        try:
            yield f"mariadb://root@127.0.0.1:3306/{name}"
        finally:
            drop_mariadb_database(name)


@pytest.fixture
def engine(empty_database: str) -> Iterator[Engine]:
    upgrade_to_head(empty_database)
    engine = create_sync_engine_for(empty_database)
    yield engine
    engine.dispose()


def test_migrations_from_empty_match_the_metadata_and_are_idempotent(
    empty_database: str,
) -> None:
    assert current_revision(empty_database) is None
    upgrade_to_head(empty_database)
    upgrade_to_head(empty_database)
    assert current_revision(empty_database) == head_revision()
    engine = create_sync_engine_for(empty_database)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(
                conn, opts={"compare_type": True, "version_table": VERSION_TABLE}
            )
            assert compare_metadata(context, metadata) == []
            tables = set(inspect(conn).get_table_names())
        assert tables == {*metadata.tables, VERSION_TABLE}
    finally:
        engine.dispose()


def _downgrade(url: str, revision: str) -> None:
    from alembic import command

    from ragline.adapters.persistence.sql.migrations import alembic_config

    engine = create_sync_engine_for(url)
    try:
        with engine.begin() as conn:
            config = alembic_config()
            config.attributes["connection"] = conn
            command.downgrade(config, revision)
    finally:
        engine.dispose()


def test_the_head_a_start_up_checks_is_the_head_of_the_shipped_scripts() -> None:
    assert head_revision() == HEAD_REVISION


def test_a_start_up_migrates_a_database_behind_head_and_leaves_one_at_head_alone(
    empty_database: str,
) -> None:
    assert revisions_recorded(empty_database) == []
    assert upgrade_when_behind(empty_database) is True
    assert revisions_recorded(empty_database) == [HEAD_REVISION]
    assert upgrade_when_behind(empty_database) is False
    _downgrade(empty_database, "-1")
    assert revisions_recorded(empty_database) not in ([], [HEAD_REVISION])
    assert upgrade_when_behind(empty_database) is True
    assert current_revision(empty_database) == HEAD_REVISION


def test_a_process_that_finds_the_schema_at_head_does_not_import_alembic(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'at-head.db'}"
    upgrade_to_head(url)
    probe = (
        "import sys\n"
        "from ragline.adapters.persistence.sql.schema_revision import upgrade_when_behind\n"
        "import ragline.adapters.persistence.sql\n"
        f"assert upgrade_when_behind({url!r}) is False\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'alembic'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_downgrade_to_base_and_back(empty_database: str) -> None:
    upgrade_to_head(empty_database)
    _downgrade(empty_database, "base")
    engine = create_sync_engine_for(empty_database)
    try:
        with engine.connect() as conn:
            assert set(inspect(conn).get_table_names()) <= {VERSION_TABLE}
    finally:
        engine.dispose()
    upgrade_to_head(empty_database)
    assert current_revision(empty_database) == head_revision()


def test_session_setup_is_in_force(empty_database: str, engine: Engine) -> None:
    backend = backend_of(empty_database)
    with engine.connect() as conn:
        if backend == "sqlite":
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30_000
        elif backend == "postgresql":
            assert conn.exec_driver_sql("SHOW TIME ZONE").scalar() == "UTC"
            isolation = conn.exec_driver_sql("SHOW transaction_isolation").scalar()
            assert isolation == "read committed"
        else:
            assert conn.exec_driver_sql("SELECT @@session.time_zone").scalar() == "+00:00"
            isolation = conn.exec_driver_sql("SELECT @@session.tx_isolation").scalar()
            assert isolation == "READ-COMMITTED"
            assert conn.exec_driver_sql("SELECT @@character_set_client").scalar() == "utf8mb4"
            collation = conn.exec_driver_sql(
                "SELECT table_collation FROM information_schema.tables "
                "WHERE table_schema = DATABASE() AND table_name = 'chunk'"
            ).scalar()
            assert collation == "utf8mb4_bin"


async def test_async_sessions_have_the_same_setup(empty_database: str, engine: Engine) -> None:
    factory = create_unit_of_work_factory(empty_database)
    backend = backend_of(empty_database)
    try:
        async with factory.engine.connect() as conn:
            if backend == "sqlite":
                mode = (await conn.exec_driver_sql("PRAGMA journal_mode")).scalar()
                assert mode == "wal"
                assert (await conn.exec_driver_sql("PRAGMA foreign_keys")).scalar() == 1
            elif backend == "postgresql":
                assert (await conn.exec_driver_sql("SHOW TIME ZONE")).scalar() == "UTC"
            else:
                zone = (await conn.exec_driver_sql("SELECT @@session.time_zone")).scalar()
                assert zone == "+00:00"
                level = (await conn.exec_driver_sql("SELECT @@session.tx_isolation")).scalar()
                assert level == "READ-COMMITTED"
    finally:
        await factory.dispose()


async def test_rowcount_counts_matched_rows_not_changed_rows(
    empty_database: str, engine: Engine
) -> None:
    """MySQL reports changed rows unless FOUND_ROWS is set; the CAS checks need matched."""
    factory = create_unit_of_work_factory(empty_database)
    try:
        async with factory.engine.begin() as conn:
            await conn.execute(
                text(
                    "INSERT INTO outbox (task_id, topic, routing_key, body, attempts,"
                    " next_attempt_at, status, created_at, updated_at) VALUES"
                    " ('t', 'x', 'k', :b, 0, :d, 'PENDING', :d, :d)"
                ),
                {"b": b"x", "d": datetime(2026, 1, 1)},
            )
            same = await conn.execute(text("UPDATE outbox SET status = 'PENDING'"))
            assert same.rowcount == 1
    finally:
        await factory.dispose()


def test_url_drivers() -> None:
    assert str(async_url("sqlite:///a.db")) == "sqlite+pysqlite:///a.db"
    assert str(sync_url("sqlite+aiosqlite:///a.db")) == "sqlite+pysqlite:///a.db"
    assert async_url("postgres://u@h/db").drivername == "postgresql+psycopg"
    assert sync_url("postgresql+asyncpg://u@h/db").drivername == "postgresql+psycopg"
    mysql = async_url("mysql://root@h/db")
    assert (mysql.drivername, mysql.query["charset"]) == ("mysql+asyncmy", "utf8mb4")
    assert sync_url("mariadb://root@h/db").drivername == "mariadb+pymysql"
    assert sync_url("mysql://root@h/db?charset=utf8mb4").query["charset"] == "utf8mb4"
    with pytest.raises(ValueError, match="unsupported"):
        backend_of("oracle://u@h/db")
    for memory in ("sqlite://", "sqlite:///:memory:", "sqlite+aiosqlite://"):
        with pytest.raises(ValueError, match="in-memory"):
            create_unit_of_work_factory(memory)
        with pytest.raises(ValueError, match="in-memory"):
            create_sync_engine_for(memory)


def test_migration_command_line(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    done = subprocess.run(
        [sys.executable, "-m", "ragline.adapters.persistence.sql.migrations", url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert f"at revision {head_revision()}" in done.stdout
    assert current_revision(url) == head_revision()


def test_concurrent_migrations_from_empty_all_succeed(empty_database: str) -> None:
    """Several processes (threads here) starting at once: one migrates, the others wait."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=3) as pool:
        for future in [pool.submit(upgrade_to_head, empty_database) for _ in range(3)]:
            future.result(timeout=300)
    assert current_revision(empty_database) == head_revision()


def test_the_migration_lock_outlives_the_commit_of_the_last_migration(
    empty_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A waiter takes the lock only when the version row of the newest migration is
    committed: released before the commit (MySQL's DDL commits each migration but the
    last), a waiter read the one before and ran the newest migration again (CI, MariaDB:
    "Duplicate column name 'live'")."""
    import ragline.adapters.persistence.sql.migrations as migrations

    seen: list[str | None] = []
    release = migrations._release_session_lock

    def look_then_release(connection: Connection) -> None:
        seen.append(current_revision(empty_database))  # what a waiter would read now
        release(connection)

    monkeypatch.setattr(migrations, "_release_session_lock", look_then_release)
    upgrade_to_head(empty_database)
    assert seen == [head_revision()]


def test_sqlite_data_dir_is_created(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'new' / 'data' / 'ragline.db'}"
    upgrade_to_head(url)
    assert (tmp_path / "new" / "data" / "ragline.db").is_file()


def test_task_sources_are_filled_in_from_the_tasks_stored_before_them(
    empty_database: str,
) -> None:
    """0007_task_sources: a parsed log written before it names its source in payload_json
    only; the migration records it, so a delete protects those sources as well."""
    upgrade_to_head(empty_database, "0006_parse_holdings")
    task = '{"task_id": "old-1", "source_bucket": "uploads", "source_object_key": "原/a.pdf"}'
    rows = [
        ("old-1", task),
        ("old-2", '{"rejected": "bad", "body": "{\\"task_id\\": \\"old-2\\"}"}'),
        ("old-3", "not json at all"),
        ("old-4", '{"source_bucket": 7, "source_object_key": "k"}'),
    ]
    engine = create_sync_engine_for(empty_database)
    try:
        with engine.begin() as conn:
            for task_id, payload in rows:
                conn.execute(
                    text(
                        "INSERT INTO parsed_log (task_id, payload_json, created_at)"
                        " VALUES (:t, :p, :d)"
                    ),
                    {"t": task_id, "p": payload, "d": datetime(2026, 1, 1)},
                )
        upgrade_to_head(empty_database)
        with engine.connect() as conn:
            found = conn.execute(
                text(
                    "SELECT task_id, source_bucket, source_object_key FROM parsed_log"
                    " ORDER BY task_id"
                )
            ).all()
    finally:
        engine.dispose()
    assert [tuple(row) for row in found] == [
        ("old-1", "uploads", "原/a.pdf"),
        ("old-2", None, None),
        ("old-3", None, None),
        ("old-4", None, None),
    ]
