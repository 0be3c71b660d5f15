"""Document metadata and filters: the bounds, the text and JSON forms, and `matches` (the
meaning every index adapter's kit holds it to) on the kits' cases."""

from __future__ import annotations

from datetime import date, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragline.domain.metadata import (
    MAX_FILTER_LEAVES,
    MAX_KEYS,
    AllOf,
    AnyOf,
    DocumentMetadata,
    Eq,
    Exists,
    FilterError,
    In,
    MetadataError,
    Range,
    filter_as_plain,
    filter_from_plain,
    matches,
    parse_condition,
)
from ragline.testing.kits.metadata_cases import CASES, LABELS


@pytest.mark.parametrize(("name", "where", "kept"), CASES, ids=[c[0] for c in CASES])
def test_the_kit_cases_mean_what_matches_says(name: str, where: object, kept: set[str]) -> None:
    found = {doc for doc, labels in LABELS.items() if matches(where, labels.indexed())}  # type: ignore[arg-type]
    assert found == kept, name


def test_the_flat_form_types_each_field_by_its_name() -> None:
    labels = DocumentMetadata(
        {"author": "Ann", "year": 2021, "tags": ["a", "b"], "day": date(1970, 1, 11), "no": []}
    )
    assert labels.indexed() == {
        "s_author": ["Ann"],
        "n_year": 2021.0,
        "s_tags": ["a", "b"],
        "d_day": 10,
    }
    assert DocumentMetadata.from_plain(labels.as_plain()) == labels
    assert labels.as_plain()["day"] == {"date": "1970-01-11"}


@pytest.mark.parametrize(
    "values",
    [
        {"Author": "x"},
        {"1st": "x"},
        {"a-b": "x"},
        {"k" * 65: "x"},
        {"flag": True},
        {"big": 1e13},
        {"nan": float("nan")},
        {"text": "x" * 257},
        {"many": ["x"] * 33},
        {"mixed": ["x", 1]},
        {"when": datetime(2024, 1, 1, 12)},
        {f"k{i}": i for i in range(MAX_KEYS + 1)},
    ],
)
def test_bounds_and_types_are_checked(values: dict[str, object]) -> None:
    with pytest.raises(MetadataError):
        DocumentMetadata(values)


@pytest.mark.parametrize(
    "plain",
    [
        {"when": {"date": "2024-13-01"}},
        {"when": {"date": "2024-1-1"}},
        {"when": {"day": "2024-01-01"}},
        ["not", "an", "object"],
    ],
)
def test_the_plain_form_refuses_what_is_no_metadata(plain: object) -> None:
    with pytest.raises(MetadataError):
        DocumentMetadata.from_plain(plain)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("author=Ann", Eq("author", "Ann")),
        ("author = Ann Lee", Eq("author", "Ann Lee")),
        ("year=2020", Eq("year", 2020)),
        ("score=0.5", Eq("score", 0.5)),
        ("year='2020'", Eq("year", "2020")),
        ("day=2024-05-01", Eq("day", date(2024, 5, 1))),
        ("tags=a|b", In("tags", ("a", "b"))),
        ("year>=2020", Range("year", gte=2020)),
        ("year>2020", Range("year", gt=2020)),
        ("year<=2020", Range("year", lte=2020)),
        ("day<2025-01-01", Range("day", lt=date(2025, 1, 1))),
        ("author?", Exists("author")),
        ("author=Ann or year>2020", AnyOf((Eq("author", "Ann"), Range("year", gt=2020)))),
    ],
)
def test_the_cli_text_form(text: str, where: object) -> None:
    assert parse_condition(text) == where
    assert filter_from_plain(filter_as_plain(where)) == where  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text", ["author", "Author=x", "year>=abc", "year!=3", "a?b", "=x", "year>=2020-02-30"]
)
def test_bad_cli_text_says_how_to_write_it(text: str) -> None:
    with pytest.raises(MetadataError):
        parse_condition(text)


@pytest.mark.parametrize(
    "plain",
    [
        {"eq": {"a": 1}, "in": {"a": ["x"]}},
        {"nope": {"a": 1}},
        {"in": {"a": "x"}},
        {"in": {"a": []}},
        {"in": {"a": [1]}},
        {"range": {"a": {}}},
        {"range": {"a": {"gte": 1, "gt": 2}}},
        {"range": {"a": {"gte": 1, "lt": "2024-01-01"}}},
        {"range": {"a": {"gte": "soon"}}},
        {"range": {"a": {"about": 1}}},
        {"eq": {"a": ["x"]}},
        {"eq": {"a": True}},
        {"exists": 3},
        {"and": []},
        {"and": {"eq": {"a": 1}}},
        {"or": [{"or": [{"or": [{"or": [{"or": [{"exists": "a"}]}]}]}]}]},
        {"or": [{"exists": "a"}] * (MAX_FILTER_LEAVES + 1)},
    ],
)
def test_bad_json_filters_are_refused(plain: object) -> None:
    with pytest.raises(FilterError if not isinstance(plain, dict) else MetadataError):
        filter_from_plain(plain)


def test_a_string_range_bound_in_json_is_a_date() -> None:
    where = filter_from_plain(
        {"range": {"day": {"gte": "2024-01-01", "lt": {"date": "2025-01-01"}}}}
    )
    assert where == Range("day", gte=date(2024, 1, 1), lt=date(2025, 1, 1))


values = st.one_of(
    st.text(max_size=5),
    st.integers(-1000, 1000),
    st.floats(-1e6, 1e6, allow_nan=False),
    st.dates(date(1900, 1, 1), date(2100, 1, 1)),
    st.lists(st.sampled_from(["a", "b", "c"]), max_size=3),
)
labels = st.dictionaries(st.sampled_from(["a", "b", "c"]), values, max_size=3)
leaves = st.one_of(
    st.builds(
        Eq, st.sampled_from(["a", "b"]), st.one_of(st.sampled_from(["a", "b"]), st.integers(-3, 3))
    ),
    st.builds(
        In,
        st.sampled_from(["a", "b"]),
        st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=2),
    ),
    st.builds(Range, st.sampled_from(["a", "b"]), gte=st.integers(-5, 5)),
    st.builds(Exists, st.sampled_from(["a", "b", "c"])),
)
trees = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.builds(AllOf, st.lists(inner, min_size=1, max_size=3)),
        st.builds(AnyOf, st.lists(inner, min_size=1, max_size=3)),
    ),
    max_leaves=6,
)


@given(labels, trees)
def test_and_or_are_all_and_any_of_their_parts(plain: dict[str, object], where: object) -> None:
    fields = DocumentMetadata(plain).indexed()
    if isinstance(where, AllOf):
        assert matches(where, fields) == all(matches(p, fields) for p in where.parts)
    if isinstance(where, AnyOf):
        assert matches(where, fields) == any(matches(p, fields) for p in where.parts)
    assert filter_from_plain(filter_as_plain(where)) == where  # type: ignore[arg-type]
