"""DocumentMetadata: a document's typed values, bounded, and the flat form indexes store.

Values are a string, a number, a date or a list of strings. Keys are short lower-case names
(`[a-z][a-z0-9_]*`), so they can be spliced into an engine's field path without escaping.
The bounds keep one document's labels small: they are copied onto every chunk of it.

`indexed()` is the one flat form every index stores, one field per key named by the
value's kind (`s_author`, `n_year`, `d_published`): strings (and lists) as keywords,
numbers as floats, dates as days since 1970-01-01. A field's name fixes its type, so an
engine that types a field by its first value (Elasticsearch, Tantivy) never meets a clash,
and a filter compares like with like.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from datetime import date
from typing import Any

import attrs

MAX_KEYS = 32
MAX_KEY_LENGTH = 64
MAX_STRING_LENGTH = 256
MAX_LIST_ITEMS = 32
MAX_NUMBER = 1e12  # |x| bound: a millionth's precision still fits an int64 (Tantivy)
KEY = re.compile(r"[a-z][a-z0-9_]*")
EPOCH = date(1970, 1, 1)

MetadataValue = str | int | float | date | tuple[str, ...]
IndexedFields = dict[str, list[str] | float | int]
"""The flat form: `s_<key>` -> strings, `n_<key>` -> number, `d_<key>` -> epoch day."""

STRING, NUMBER, DATE = "s", "n", "d"
KINDS = (STRING, NUMBER, DATE)


class MetadataError(ValueError):
    """A metadata key or value is malformed or over a bound (the message says which)."""


def check_key(key: object) -> str:
    if not isinstance(key, str) or not KEY.fullmatch(key) or len(key) > MAX_KEY_LENGTH:
        raise MetadataError(
            f"metadata key {str(key)[:80]!r}: use 1-{MAX_KEY_LENGTH} of a-z, 0-9 and _,"
            " starting with a letter"
        )
    return key


def check_string(key: str, value: str) -> str:
    if len(value) > MAX_STRING_LENGTH:
        raise MetadataError(f"metadata {key!r}: a string is at most {MAX_STRING_LENGTH} characters")
    return value


def check_number(key: str, value: object) -> int | float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MetadataError(f"metadata {key!r}: not a number")
    if not math.isfinite(value) or abs(value) > MAX_NUMBER:
        raise MetadataError(f"metadata {key!r}: a number is finite and at most {MAX_NUMBER:g}")
    return value


def check_value(key: str, value: object) -> MetadataValue:
    """The value as stored (lists become tuples), or MetadataError."""
    if isinstance(value, str):
        return check_string(key, value)
    if isinstance(value, date):
        if type(value) is not date:  # a datetime is a date too: keep the day only
            raise MetadataError(f"metadata {key!r}: a date has no time of day")
        return value
    if isinstance(value, list | tuple):
        if len(value) > MAX_LIST_ITEMS:
            raise MetadataError(f"metadata {key!r}: a list holds at most {MAX_LIST_ITEMS} items")
        if not all(isinstance(item, str) for item in value):
            raise MetadataError(f"metadata {key!r}: a list holds strings only")
        return tuple(check_string(key, item) for item in value)
    return check_number(key, value)


def kind_of(value: MetadataValue) -> str:
    if isinstance(value, str | tuple):
        return STRING
    if isinstance(value, date):
        return DATE
    return NUMBER


def field_name(kind: str, key: str) -> str:
    """The flat field holding `key`'s values of one kind (see the module docstring)."""
    return f"{kind}_{key}"


def epoch_day(day: date) -> int:
    return (day - EPOCH).days


def _checked(values: Mapping[str, object]) -> Mapping[str, MetadataValue]:
    if len(values) > MAX_KEYS:
        raise MetadataError(f"metadata holds at most {MAX_KEYS} keys")
    return {check_key(k): check_value(k, v) for k, v in sorted(values.items())}


@attrs.frozen
class DocumentMetadata(Mapping[str, MetadataValue]):
    """A document's metadata: validated on construction, immutable, keys sorted."""

    entries: Mapping[str, MetadataValue] = attrs.field(factory=dict, converter=_checked)

    def __getitem__(self, key: str) -> MetadataValue:
        return self.entries[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def indexed(self) -> IndexedFields:
        fields: IndexedFields = {}
        for key, value in self.entries.items():
            name = field_name(kind_of(value), key)
            if isinstance(value, str):
                fields[name] = [value]
            elif isinstance(value, tuple):
                if value:  # an empty list is no value: `exists` is false for it everywhere
                    fields[name] = list(value)
            elif isinstance(value, date):
                fields[name] = epoch_day(value)
            else:
                fields[name] = float(value)
        return fields

    def as_plain(self) -> dict[str, Any]:
        """JSON-ready: a date is `{"date": "YYYY-MM-DD"}` (a bare string stays a string)."""
        plain: dict[str, Any] = {}
        for key, value in self.entries.items():
            if isinstance(value, date):
                plain[key] = {"date": value.isoformat()}
            elif isinstance(value, tuple):
                plain[key] = list(value)
            else:
                plain[key] = value
        return plain

    @classmethod
    def from_plain(cls, plain: object) -> DocumentMetadata:
        """The inverse of `as_plain`; MetadataError on anything else."""
        if plain is None:
            return cls()
        if not isinstance(plain, Mapping):
            raise MetadataError("metadata is an object of key: value")
        return cls({str(k): plain_value(str(k), v) for k, v in plain.items()})


def plain_value(key: str, value: object) -> object:
    """A JSON value as a metadata value: `{"date": "YYYY-MM-DD"}` becomes a date."""
    if isinstance(value, Mapping):
        if set(value) != {"date"} or not isinstance(value["date"], str):
            raise MetadataError(f'metadata {key!r}: an object value is {{"date": "YYYY-MM-DD"}}')
        return parse_date(key, value["date"])
    return value


def parse_date(key: str, text: str) -> date:
    try:
        if len(text) != 10:
            raise ValueError(text)
        return date.fromisoformat(text)
    except ValueError:
        raise MetadataError(f"metadata {key!r}: a date is YYYY-MM-DD") from None
