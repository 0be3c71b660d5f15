"""A MetadataFilter as a SQLAlchemy condition on the points' `meta` jsonb (the flat form).

Every value and field name is a bound parameter. Strings (and lists) are stored as JSON
arrays and numbers/dates as JSON numbers, so equality and `In` are containment (`@>`: a
one-item array is contained in any array holding it, a number in the same number),
`Exists` is the top-level key operator `?`, and a range compares the field cast to float8
(a missing field is NULL, which no comparison keeps).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, and_, or_

from ragline.domain.metadata import AllOf, AnyOf, Eq, Exists, In, MetadataFilter, Range


def condition(meta: Any, where: MetadataFilter) -> ColumnElement[bool]:
    """`where` over the jsonb column `meta` (a JSONB-typed column of the points table)."""
    if isinstance(where, AllOf):
        return and_(*(condition(meta, part) for part in where.parts))
    if isinstance(where, AnyOf):
        return or_(*(condition(meta, part) for part in where.parts))
    if isinstance(where, Exists):
        return or_(*(meta.has_key(field) for field in where.fields))
    if isinstance(where, In):
        return or_(*(meta.contains({where.field: [value]}) for value in where.values))
    if isinstance(where, Eq):
        target = where.target
        holds: ColumnElement[bool] = meta.contains(
            {where.field: [target] if isinstance(target, str) else target}
        )
        return holds
    return _range(meta, where)


def _range(meta: Any, where: Range) -> ColumnElement[bool]:
    value = meta[where.field].as_float()
    gte, gt, lte, lt = where.indexed()
    parts: list[ColumnElement[bool]] = []
    if gte is not None:
        parts.append(value >= float(gte))
    if gt is not None:
        parts.append(value > float(gt))
    if lte is not None:
        parts.append(value <= float(lte))
    if lt is not None:
        parts.append(value < float(lt))
    return and_(*parts)
