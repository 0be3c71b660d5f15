"""Column types that behave the same on SQLite, PostgreSQL and MariaDB/MySQL.

Times are stored as naive UTC with microseconds (MySQL needs DATETIME(6) for that) and come
back as aware UTC datetimes on every backend; a naive datetime is refused on the way in,
because its meaning would depend on the machine that wrote it.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import DateTime, LargeBinary, Text
from sqlalchemy.dialects import mysql
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine


class UtcDateTime(TypeDecorator[datetime]):
    """Aware datetime in, aware UTC datetime out; naive UTC in storage."""

    impl = DateTime
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[datetime]:
        if dialect.name in ("mysql", "mariadb"):
            return dialect.type_descriptor(mysql.DATETIME(fsp=6))
        return dialect.type_descriptor(DateTime(timezone=False))

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"naive datetime refused (store aware UTC times): {value!r}")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


def long_text() -> TypeEngine[str]:
    """Unbounded text: TEXT, LONGTEXT on MySQL (plain TEXT stops at 64 KiB there)."""
    return Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")


def long_binary() -> TypeEngine[bytes]:
    """Unbounded bytes: BLOB/BYTEA, LONGBLOB on MySQL."""
    return LargeBinary().with_variant(mysql.LONGBLOB(), "mysql", "mariadb")
