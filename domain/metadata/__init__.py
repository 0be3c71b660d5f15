"""Typed document metadata and the filters search applies to it.

A document carries a few typed values (string, number, date, list of strings) that every
index copies onto the document's chunks, so a search filter is applied inside each
retriever rather than after it (a post-filter would return fewer than top_k hits).
"""

from ragline.domain.metadata.filters import (
    MAX_FILTER_LEAVES,
    AllOf,
    AnyOf,
    Eq,
    Exists,
    FilterError,
    In,
    MetadataFilter,
    Range,
    check_size,
    filter_as_plain,
    filter_from_plain,
    matches,
    parse_condition,
)
from ragline.domain.metadata.values import (
    MAX_KEY_LENGTH,
    MAX_KEYS,
    MAX_LIST_ITEMS,
    MAX_NUMBER,
    MAX_STRING_LENGTH,
    DocumentMetadata,
    IndexedFields,
    MetadataError,
    MetadataValue,
    epoch_day,
    field_name,
)

__all__ = [
    "MAX_FILTER_LEAVES",
    "MAX_KEYS",
    "MAX_KEY_LENGTH",
    "MAX_LIST_ITEMS",
    "MAX_NUMBER",
    "MAX_STRING_LENGTH",
    "AllOf",
    "AnyOf",
    "DocumentMetadata",
    "Eq",
    "Exists",
    "FilterError",
    "In",
    "IndexedFields",
    "MetadataError",
    "MetadataFilter",
    "MetadataValue",
    "Range",
    "check_size",
    "epoch_day",
    "field_name",
    "filter_as_plain",
    "filter_from_plain",
    "matches",
    "parse_condition",
]
