"""The documents and filters both index kits' `MetadataFilterContract`s run.

Each case is a filter and the documents it must keep; `matches` (the reference meaning)
agrees with every expectation here (tests/domain/test_metadata.py checks that), so an
adapter that passes means what the domain means.
"""

from __future__ import annotations

from datetime import date

from ragline.domain.metadata import (
    AllOf,
    AnyOf,
    DocumentMetadata,
    Eq,
    Exists,
    In,
    MetadataFilter,
    Range,
)

LABELS: dict[str, DocumentMetadata] = {
    "ann-2019": DocumentMetadata(
        {"author": "Ann", "year": 2019, "tags": ["tea", "green"], "published": date(2019, 3, 1)}
    ),
    "ann-2021": DocumentMetadata({"author": "Ann", "year": 2021, "score": 0.5, "tags": ["tea"]}),
    "bob-2020": DocumentMetadata(
        {"author": "Bob", "year": 2020, "score": -1.25, "published": date(2020, 12, 31)}
    ),
    "cy-none": DocumentMetadata({"author": "Cy", "tags": []}),
    "bare": DocumentMetadata(),
}
"""doc_id -> its metadata (`cy-none` has an empty list: no `tags` value)."""

CASES: list[tuple[str, MetadataFilter, set[str]]] = [
    ("eq string", Eq("author", "Ann"), {"ann-2019", "ann-2021"}),
    ("eq is exact", Eq("author", "ann"), set()),
    ("eq list item", Eq("tags", "green"), {"ann-2019"}),
    ("eq number", Eq("year", 2020), {"bob-2020"}),
    ("eq float", Eq("score", 0.5), {"ann-2021"}),
    ("eq date", Eq("published", date(2020, 12, 31)), {"bob-2020"}),
    ("string is not number", Eq("year", "2020"), set()),
    ("in", In("author", ("Bob", "Cy", "Dee")), {"bob-2020", "cy-none"}),
    ("in list", In("tags", ("green", "black")), {"ann-2019"}),
    ("range gte", Range("year", gte=2020), {"ann-2021", "bob-2020"}),
    ("range gt", Range("year", gt=2020), {"ann-2021"}),
    ("range lt lte", Range("year", gt=2018.5, lt=2021), {"ann-2019", "bob-2020"}),
    ("range negative float", Range("score", lte=-1.25), {"bob-2020"}),
    ("range float exclusive", Range("score", gt=-1.25, lt=1), {"ann-2021"}),
    ("range date", Range("published", gte=date(2020, 1, 1)), {"bob-2020"}),
    ("range date lt", Range("published", lt=date(2020, 12, 31)), {"ann-2019"}),
    ("range empty", Range("year", gt=2021, lt=2019), set()),
    ("exists", Exists("published"), {"ann-2019", "bob-2020"}),
    ("exists not empty list", Exists("tags"), {"ann-2019", "ann-2021"}),
    ("exists unknown", Exists("nothing"), set()),
    (
        "and",
        AllOf((Eq("author", "Ann"), Range("year", gte=2020))),
        {"ann-2021"},
    ),
    (
        "or",
        AnyOf((Eq("author", "Cy"), Range("score", lt=0))),
        {"cy-none", "bob-2020"},
    ),
    (
        "nested",
        AllOf((AnyOf((Eq("tags", "tea"), Eq("author", "Bob"))), AnyOf((Exists("score"),)))),
        {"ann-2021", "bob-2020"},
    ),
]
