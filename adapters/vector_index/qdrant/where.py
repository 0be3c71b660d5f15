"""A MetadataFilter as a Qdrant payload filter on the point's `meta` object (the flat form).

Qdrant applies it while it searches (on a server through its payload indexes when present,
in local mode per point), so a filtered query still returns `limit` hits when that many match.
A match on an array payload matches any item, which is `Eq`'s meaning for string lists.
"""

from __future__ import annotations

from qdrant_client import models

from ragline.domain.metadata import AllOf, AnyOf, Eq, Exists, In, MetadataFilter, Range


def _key(field: str) -> str:
    return f"meta.{field}"


def payload_filter(where: MetadataFilter) -> models.Filter:
    """`where` as one Filter (a leaf as a Filter of one condition)."""
    if isinstance(where, AllOf):
        return models.Filter(must=[payload_filter(part) for part in where.parts])
    if isinstance(where, AnyOf):
        return models.Filter(should=[payload_filter(part) for part in where.parts])
    if isinstance(where, Exists):
        present: list[models.Condition] = [
            models.Filter(
                must_not=[models.IsEmptyCondition(is_empty=models.PayloadField(key=_key(f)))]
            )
            for f in where.fields
        ]
        return models.Filter(should=present)
    return models.Filter(must=[_leaf(where)])


def _leaf(where: Eq | In | Range) -> models.FieldCondition:
    if isinstance(where, In):
        return models.FieldCondition(
            key=_key(where.field), match=models.MatchAny(any=list(where.values))
        )
    if isinstance(where, Eq):
        target = where.target
        if isinstance(target, str):
            return models.FieldCondition(
                key=_key(where.field), match=models.MatchValue(value=target)
            )
        return models.FieldCondition(
            key=_key(where.field), range=models.Range(gte=target, lte=target)
        )
    gte, gt, lte, lt = where.indexed()
    return models.FieldCondition(
        key=_key(where.field), range=models.Range(gte=gte, gt=gt, lte=lte, lt=lt)
    )
