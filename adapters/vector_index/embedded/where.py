"""A MetadataFilter as a SQLite condition on `points.meta` (the flat form as JSON).

Only `?` parameters: a field's JSON path is a parameter too. String fields hold JSON arrays,
so an equality on one asks json_each whether any item matches.
"""

from __future__ import annotations

from ragline.domain.metadata import AllOf, AnyOf, Eq, Exists, In, MetadataFilter, Range

Params = list[object]


def _path(field: str) -> str:
    return f"$.{field}"  # field: s_/n_/d_ + a checked key (a-z, 0-9, _)


def condition(where: MetadataFilter, params: Params) -> str:
    """SQL over the `points` row (alias `points`), appending its parameters to `params`."""
    if isinstance(where, AllOf | AnyOf):
        glue = " AND " if isinstance(where, AllOf) else " OR "
        return "(" + glue.join(condition(part, params) for part in where.parts) + ")"
    if isinstance(where, Exists):
        params.extend(_path(f) for f in where.fields)
        return (
            "(" + " OR ".join("json_type(points.meta, ?) IS NOT NULL" for _ in where.fields) + ")"
        )
    if isinstance(where, In):
        params.append(_path(where.field))
        params.extend(where.values)
        marks = ",".join("?" * len(where.values))
        # only ? marks: the values are parameters
        return f"EXISTS (SELECT 1 FROM json_each(points.meta, ?) WHERE value IN ({marks}))"  # nosec B608
    if isinstance(where, Eq):
        params.extend((_path(where.field), where.target))
        if isinstance(where.target, str):
            return "EXISTS (SELECT 1 FROM json_each(points.meta, ?) WHERE value = ?)"
        return "json_extract(points.meta, ?) = ?"
    return _range(where, params)


def _range(where: Range, params: Params) -> str:
    parts = []
    for op, bound in zip((">=", ">", "<=", "<"), where.indexed(), strict=True):
        if bound is not None:
            params.extend((_path(where.field), bound))
            parts.append(f"json_extract(points.meta, ?) {op} ?")
    return "(" + " AND ".join(parts) + ")"
