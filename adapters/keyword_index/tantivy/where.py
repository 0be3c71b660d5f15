"""A MetadataFilter as a Tantivy query on the `meta` JSON field (the flat form).

Tantivy's JSON range queries need one numeric type per path, and tantivy-py builds them only
through the query parser; so every number is stored as an int64 of millionths (numbers are
bounded by MAX_NUMBER, so that fits) and a date as its epoch day, and a range is parsed from
text holding integers only. An exclusive bound becomes the next integer in (no float text,
no escaping: field names are checked keys). Strings are raw terms (exact match).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import tantivy

from ragline.domain.metadata import AllOf, AnyOf, Eq, Exists, In, MetadataFilter, Range

SCALE = 1_000_000  # numbers: millionths


def stored_meta(indexed: Mapping[str, Any]) -> dict[str, Any]:
    """The flat form as this index stores it: numbers (`n_`) as int millionths."""
    return {
        name: round(value * SCALE) if name.startswith("n_") else value
        for name, value in indexed.items()
    }


def _low(value: float | int, scaled: bool, exclusive: bool) -> int:
    if not scaled:
        return int(value) + (1 if exclusive else 0)
    x = value * SCALE
    return math.floor(x) + 1 if exclusive else math.ceil(x)


def _high(value: float | int, scaled: bool, exclusive: bool) -> int:
    if not scaled:
        return int(value) - (1 if exclusive else 0)
    x = value * SCALE
    return math.ceil(x) - 1 if exclusive else math.floor(x)


def meta_query(
    index: tantivy.Index, schema: tantivy.Schema, where: MetadataFilter
) -> tantivy.Query:
    def term(field: str, value: object) -> tantivy.Query:
        return tantivy.Query.term_query(schema, f"meta.{field}", value)

    if isinstance(where, AllOf | AnyOf):
        occur = tantivy.Occur.Must if isinstance(where, AllOf) else tantivy.Occur.Should
        return tantivy.Query.boolean_query(
            [(occur, meta_query(index, schema, part)) for part in where.parts]
        )
    if isinstance(where, Exists):
        return tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.exists_query(f"meta.{f}")) for f in where.fields]
        )
    if isinstance(where, In):
        return tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, term(where.field, value)) for value in where.values]
        )
    if isinstance(where, Eq):
        target = where.target
        if isinstance(target, str):
            return term(where.field, target)
        if where.field.startswith("n_"):
            return _range(index, where.field, target, target, False, False, scaled=True)
        return term(where.field, int(target))
    return _bounded(index, where)


def _bounded(index: tantivy.Index, where: Range) -> tantivy.Query:
    gte, gt, lte, lt = where.indexed()
    low = gte if gte is not None else gt
    high = lte if lte is not None else lt
    return _range(
        index, where.field, low, high, gt is not None, lt is not None, scaled=where.kind == "n"
    )


def _range(
    index: tantivy.Index,
    field: str,
    low: float | int | None,
    high: float | int | None,
    low_exclusive: bool,
    high_exclusive: bool,
    *,
    scaled: bool,
) -> tantivy.Query:
    lo = "*" if low is None else str(_low(low, scaled, low_exclusive))
    hi = "*" if high is None else str(_high(high, scaled, high_exclusive))
    if low is not None and high is not None and int(lo) > int(hi):
        return tantivy.Query.empty_query()
    return index.parse_query(f"meta.{field}:[{lo} TO {hi}]", ["meta"])
