"""Fresh databases on the loopback PostgreSQL and MariaDB servers, one per test session,
migrated to head and dropped at the end. A server that does not answer fails the tests
(no skip): the kit must run on all three backends."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pymysql
import pytest

from ragline.adapters.persistence.sql import ApiKeyCipher, upgrade_to_head

PG_ADMIN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres"
MARIADB = {"host": "127.0.0.1", "port": 3306, "user": "root", "password": ""}


def _name() -> str:
    return f"ragline_test_{uuid.uuid4().hex[:12]}"


def create_postgres_database() -> str:
    name = _name()
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE \"{name}\" ENCODING 'UTF8' TEMPLATE template0")
        # A commit returns before its WAL reaches the disk (3.8 ms each on this machine with it
        # on): visibility, locking and isolation are as before, and only a crash of the server
        # itself, which no test causes, could lose the last commits. The ParseRun machine on
        # PostgreSQL: 19.7 -> 12.3 s.
        conn.execute(f'ALTER DATABASE "{name}" SET synchronous_commit = off')
    return name


def drop_postgres_database(name: str) -> None:
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def create_mariadb_database() -> str:
    name = _name()
    conn = pymysql.connect(**MARIADB)
    try:
        with conn.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
    finally:
        conn.close()
    return name


def drop_mariadb_database(name: str) -> None:
    conn = pymysql.connect(**MARIADB)
    try:
        with conn.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS `{name}`")
    finally:
        conn.close()


@pytest.fixture(scope="session")
def postgres_database_url() -> Iterator[str]:
    """A migrated, empty PostgreSQL database for this session."""
    name = create_postgres_database()
    try:
        url = f"postgresql://postgres@127.0.0.1:5432/{name}"
        upgrade_to_head(url)
        yield url
    finally:
        drop_postgres_database(name)


@pytest.fixture(scope="session")
def mariadb_database_url() -> Iterator[str]:
    """A migrated, empty MariaDB database for this session."""
    name = create_mariadb_database()
    try:
        url = f"mysql://root@127.0.0.1:3306/{name}"
        upgrade_to_head(url)
        yield url
    finally:
        drop_mariadb_database(name)


@pytest.fixture(scope="session")
def api_key_secrets() -> tuple[bytes, bytes]:
    """Two different Fernet keys: the configured one and a wrong one."""
    return ApiKeyCipher.generate_key(), ApiKeyCipher.generate_key()
