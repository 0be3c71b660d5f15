"""MetadataFilter: what a search keeps, as a small tree every retriever compiles.

Leaves: `Eq` (a string matches a string value or any item of a list; a number or a date
matches its own kind), `In` (any of some strings), `Range` (numbers or dates, each bound
inclusive or not), `Exists` (the key has a value of any kind); `AllOf` / `AnyOf` combine.
Each leaf names the flat fields of `DocumentMetadata.indexed()` it reads, so an adapter
compiles a filter into its engine's own query without knowing the value types, and
`matches` (over that flat form) is the meaning every adapter must agree with.

`parse_condition` reads the CLI's `--filter` text; `filter_from_plain` reads the JSON tree
of the HTTP body (`{"eq": {"author": "Ann"}}`, `{"and": [...]}`; see docs/retrieval.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

import attrs

from ragline.domain.metadata.values import (
    DATE,
    KINDS,
    MAX_LIST_ITEMS,
    NUMBER,
    STRING,
    MetadataError,
    check_key,
    check_number,
    check_string,
    epoch_day,
    field_name,
    parse_date,
    plain_value,
)

MAX_FILTER_LEAVES = 64
MAX_FILTER_DEPTH = 4
Scalar = str | int | float | date
Bound = int | float | date | None


class FilterError(MetadataError):
    """A filter is malformed or over a bound."""


def _indexed_scalar(value: Scalar) -> tuple[str, str | float | int]:
    if isinstance(value, str):
        return STRING, value
    if isinstance(value, date):
        return DATE, epoch_day(value)
    return NUMBER, float(value)


def _check_scalar(key: str, value: object) -> Scalar:
    if isinstance(value, str):
        return check_string(key, value)
    if isinstance(value, date):
        return value
    return check_number(key, value)


def _check_bound(key: str, value: object) -> Bound:
    if value is None or isinstance(value, date):
        return value
    return check_number(key, value)


@attrs.frozen
class Eq:
    key: str = attrs.field(converter=check_key)
    value: Scalar = attrs.field()

    @value.validator
    def _valid(self, _: object, value: object) -> None:
        _check_scalar(self.key, value)

    @property
    def field(self) -> str:
        return field_name(_indexed_scalar(self.value)[0], self.key)

    @property
    def target(self) -> str | float | int:
        """The value as the flat form stores it."""
        return _indexed_scalar(self.value)[1]


def _strings(values: Sequence[str]) -> tuple[str, ...]:
    return tuple(values)


@attrs.frozen
class In:
    key: str = attrs.field(converter=check_key)
    values: tuple[str, ...] = attrs.field(converter=_strings)

    @values.validator
    def _valid(self, _: object, values: tuple[object, ...]) -> None:
        if not 1 <= len(values) <= MAX_LIST_ITEMS:
            raise FilterError(f"filter in {self.key!r}: 1 to {MAX_LIST_ITEMS} values")
        for value in values:
            if not isinstance(value, str):
                raise FilterError(f"filter in {self.key!r}: strings only")
            check_string(self.key, value)

    @property
    def field(self) -> str:
        return field_name(STRING, self.key)


@attrs.frozen
class Range:
    key: str = attrs.field(converter=check_key)
    gte: Bound = None
    gt: Bound = None
    lte: Bound = None
    lt: Bound = None

    def __attrs_post_init__(self) -> None:
        bounds = [_check_bound(self.key, b) for b in (self.gte, self.gt, self.lte, self.lt)]
        given = [b for b in bounds if b is not None]
        if not given:
            raise FilterError(f"filter range {self.key!r}: give at least one bound")
        if (self.gte is not None and self.gt is not None) or (
            self.lte is not None and self.lt is not None
        ):
            raise FilterError(f"filter range {self.key!r}: one lower and one upper bound")
        if len({isinstance(b, date) for b in given}) > 1:
            raise FilterError(f"filter range {self.key!r}: bounds are all numbers or all dates")

    @property
    def kind(self) -> str:
        return DATE if any(isinstance(b, date) for b in self.bounds_given()) else NUMBER

    def bounds_given(self) -> list[int | float | date]:
        return [b for b in (self.gte, self.gt, self.lte, self.lt) if b is not None]

    @property
    def field(self) -> str:
        return field_name(self.kind, self.key)

    def indexed(
        self,
    ) -> tuple[float | int | None, float | int | None, float | int | None, float | int | None]:
        """(gte, gt, lte, lt) as the flat form stores values (numbers as floats, dates as
        epoch days)."""

        def one(bound: Bound) -> float | int | None:
            if bound is None:
                return None
            if isinstance(bound, date):
                return epoch_day(bound)
            return float(bound)

        return one(self.gte), one(self.gt), one(self.lte), one(self.lt)


@attrs.frozen
class Exists:
    key: str = attrs.field(converter=check_key)

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(field_name(kind, self.key) for kind in KINDS)


def _parts(value: Sequence[MetadataFilter]) -> tuple[MetadataFilter, ...]:
    parts = tuple(value)
    if not parts:
        raise FilterError("filter and/or: at least one part")
    return parts


@attrs.frozen
class AllOf:
    parts: tuple[MetadataFilter, ...] = attrs.field(converter=_parts)


@attrs.frozen
class AnyOf:
    parts: tuple[MetadataFilter, ...] = attrs.field(converter=_parts)


MetadataFilter = Eq | In | Range | Exists | AllOf | AnyOf


def check_size(where: MetadataFilter) -> MetadataFilter:
    """`where`, or FilterError if it has more than MAX_FILTER_LEAVES leaves or nests deeper
    than MAX_FILTER_DEPTH: a filter costs each engine work per leaf."""
    leaves = 0

    def walk(node: MetadataFilter, depth: int) -> None:
        nonlocal leaves
        if depth > MAX_FILTER_DEPTH:
            raise FilterError(f"filter nests at most {MAX_FILTER_DEPTH} and/or levels")
        if isinstance(node, AllOf | AnyOf):
            for part in node.parts:
                walk(part, depth + 1)
        else:
            leaves += 1
            if leaves > MAX_FILTER_LEAVES:
                raise FilterError(f"filter holds at most {MAX_FILTER_LEAVES} conditions")

    walk(where, 0)
    return where


def matches(where: MetadataFilter | None, fields: Mapping[str, Any]) -> bool:
    """Whether a point whose flat metadata is `fields` is kept (the reference meaning)."""
    if where is None:
        return True
    if isinstance(where, AllOf):
        return all(matches(part, fields) for part in where.parts)
    if isinstance(where, AnyOf):
        return any(matches(part, fields) for part in where.parts)
    if isinstance(where, Exists):
        return any(name in fields for name in where.fields)
    if isinstance(where, In):
        return bool(set(fields.get(where.field) or ()) & set(where.values))
    if isinstance(where, Eq):
        stored = fields.get(where.field)
        if isinstance(stored, list):
            return where.target in stored
        return stored is not None and stored == where.target
    stored = fields.get(where.field)
    if stored is None:
        return False
    gte, gt, lte, lt = where.indexed()
    return (
        (gte is None or stored >= gte)
        and (gt is None or stored > gt)
        and (lte is None or stored <= lte)
        and (lt is None or stored < lt)
    )


# -- the CLI's text form ----------------------------------------------------------------

_CONDITION = re.compile(r"\s*([a-z][a-z0-9_]*)\s*(>=|<=|!?=|>|<|\?)\s*(.*?)\s*", re.S)
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _text_value(key: str, text: str) -> Scalar:
    """A quoted text is a string; else a number or a YYYY-MM-DD date if it reads as one."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    if _NUMBER.fullmatch(text):
        return float(text) if any(c in text for c in ".eE") else int(text)
    if _DATE.fullmatch(text):
        return parse_date(key, text)
    return text


def parse_condition(text: str) -> MetadataFilter:
    """One `--filter` text: `key=value`, `key=a|b|c` (any of), `key>=v`, `key>v`, `key<=v`,
    `key<v` (numbers or YYYY-MM-DD dates), `key?` (has a value); `A or B` for either."""
    alternatives = [part for part in re.split(r"\s+or\s+", text.strip()) if part]
    if len(alternatives) > 1:
        return check_size(AnyOf(tuple(parse_condition(part) for part in alternatives)))
    found = _CONDITION.fullmatch(text)
    if found is None:
        raise FilterError(
            f"filter {text[:80]!r}: write key=value, key=a|b, key>=v, key<v or key?"
            " (keys: a-z, 0-9, _)"
        )
    key, op, raw = found.groups()
    if op == "?":
        if raw:
            raise FilterError(f"filter {text[:80]!r}: nothing follows ?")
        return Exists(key)
    if op == "!=":
        raise FilterError(f"filter {text[:80]!r}: != is not supported")
    if op == "=":
        if "|" in raw and raw[:1] not in "\"'":
            return In(key, [v.strip() for v in raw.split("|")])
        return Eq(key, _text_value(key, raw))
    bound = _text_value(key, raw)
    if isinstance(bound, str):
        raise FilterError(f"filter {text[:80]!r}: a range bound is a number or YYYY-MM-DD")
    names = {">=": "gte", ">": "gt", "<=": "lte", "<": "lt"}
    return Range(key, **{names[op]: bound})


# -- the JSON tree (HTTP) ----------------------------------------------------------------


def filter_from_plain(plain: object) -> MetadataFilter:
    """`{"eq": {k: v}}`, `{"in": {k: [..]}}`, `{"range": {k: {"gte": .., "lt": ..}}}`,
    `{"exists": k}`, `{"and": [..]}`, `{"or": [..]}`; dates as `{"date": "YYYY-MM-DD"}`
    (a string bound in a range is read as a date too)."""
    return check_size(_node(plain))


def _single(plain: object, what: str) -> tuple[str, Any]:
    if not isinstance(plain, Mapping) or len(plain) != 1:
        raise FilterError(f"filter {what}: an object with exactly one key")
    ((key, value),) = plain.items()
    return str(key), value


def _node(plain: object) -> MetadataFilter:
    op, body = _single(plain, "node")
    if op in ("and", "or"):
        if not isinstance(body, list):
            raise FilterError(f"filter {op}: a list of filters")
        parts = tuple(_node(part) for part in body)
        return AllOf(parts) if op == "and" else AnyOf(parts)
    if op == "exists":
        if not isinstance(body, str):
            raise FilterError("filter exists: a key name")
        return Exists(body)
    key, value = _single(body, op)
    if op == "eq":
        scalar = plain_value(key, value)
        if isinstance(scalar, list | tuple):
            raise FilterError(f"filter eq {key!r}: one value (use in for any of several)")
        return Eq(key, scalar)  # type: ignore[arg-type]  # checked by Eq
    if op == "in":
        if not isinstance(value, list):
            raise FilterError(f"filter in {key!r}: a list of strings")
        return In(key, tuple(value))
    if op == "range":
        if not isinstance(value, Mapping) or not set(value) <= {"gte", "gt", "lte", "lt"}:
            raise FilterError(f"filter range {key!r}: an object of gte, gt, lte, lt")
        bounds = {
            name: parse_date(key, b) if isinstance(b, str) else plain_value(key, b)
            for name, b in value.items()
        }
        return Range(key, **bounds)  # type: ignore[arg-type]  # checked by Range
    raise FilterError(f"filter: unknown operator {op[:40]!r} (eq, in, range, exists, and, or)")


def filter_as_plain(where: MetadataFilter) -> dict[str, Any]:
    """The JSON tree `filter_from_plain` reads."""

    def scalar(value: Scalar | None) -> Any:
        return {"date": value.isoformat()} if isinstance(value, date) else value

    if isinstance(where, AllOf | AnyOf):
        return {
            "and" if isinstance(where, AllOf) else "or": [filter_as_plain(p) for p in where.parts]
        }
    if isinstance(where, Exists):
        return {"exists": where.key}
    if isinstance(where, In):
        return {"in": {where.key: list(where.values)}}
    if isinstance(where, Eq):
        return {"eq": {where.key: scalar(where.value)}}
    bounds = {
        name: scalar(b)
        for name, b in (("gte", where.gte), ("gt", where.gt), ("lte", where.lte), ("lt", where.lt))
        if b is not None
    }
    return {"range": {where.key: bounds}}
