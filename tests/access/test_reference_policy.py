"""ReferencePolicy: a tenant names only its own prefix; nobody targets the parse cache."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragline.application.access import Caller, ObjectArea, ReferencePolicy, ReferenceRefused
from ragline.application.tasks import ParseTaskCommand

POLICY = ReferencePolicy.of({"sources", "markdown"}, [ObjectArea("parse-cache", "v1")])
TENANT = Caller.tenant("1001")


def task(**changes: object) -> ParseTaskCommand:
    base = ParseTaskCommand(
        task_id="t-1",
        original_file_id=1,
        document_parse_task_id=1,
        user_id=1001,
        dataset_id=1,
        file_type="pdf",
        source_bucket="sources",
        source_object_key="1001/a.pdf",
        source_filename="a.pdf",
        md_bucket="markdown",
        md_object_key="1001/a.md",
    )
    return attrs.evolve(base, **changes)


def test_a_tenant_task_under_its_own_prefix_passes() -> None:
    POLICY.check_task(TENANT, task(image_bucket="markdown", image_prefix="1001/img/"))


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"source_object_key": "2002/a.pdf"}, "source"),
        ({"source_bucket": "other"}, "source"),
        ({"source_object_key": "1001/../2002/a.pdf"}, "source"),
        ({"source_object_key": "/1001/a.pdf"}, "source"),
        ({"md_object_key": "2002/a.md"}, "md"),
        ({"md_bucket": "parse-cache", "md_object_key": "v1/pages/ab/x/basic/1.json"}, "md"),
        ({"md_bucket": "sources", "md_object_key": "1001/a.pdf"}, "md"),
        ({"image_bucket": "markdown", "image_prefix": "2002/img/"}, "image"),
        ({"user_id": 2002, "source_object_key": "2002/a.pdf"}, "user_id"),
    ],
)
def test_a_tenant_is_refused_what_is_not_its_own(changes: dict[str, object], field: str) -> None:
    with pytest.raises(ReferenceRefused) as refused:
        POLICY.check_task(TENANT, task(**changes))
    assert refused.value.field == field


def test_the_service_names_any_object_but_never_the_parse_cache() -> None:
    service = Caller.service()
    POLICY.check_task(service, task(source_bucket="x", source_object_key="2002/a.pdf"))
    with pytest.raises(ReferenceRefused):
        POLICY.check_task(service, task(md_bucket="parse-cache", md_object_key="v1/p.json"))
    with pytest.raises(ReferenceRefused):
        POLICY.check_task(service, task(image_bucket="parse-cache", image_prefix="v1"))
    with pytest.raises(ReferenceRefused):  # a prefix that encloses the cache
        POLICY.check_task(service, task(image_bucket="parse-cache", image_prefix="/"))


def test_markdown_sources_write_nothing_so_their_md_fields_are_not_targets() -> None:
    POLICY.check_task(TENANT, task(file_type="md", source_object_key="1001/a.md", md_bucket=""))


@given(
    owner=st.sampled_from(["1001", "2002", "10010"]),
    caller=st.sampled_from(["1001", "2002", "100"]),
    rest=st.text(st.characters(codec="utf-8"), min_size=1, max_size=12),
)
def test_a_tenant_reads_a_key_only_under_its_own_prefix(owner: str, caller: str, rest: str) -> None:
    key = f"{owner}/{rest}"
    try:
        POLICY.check_read(Caller.tenant(caller), "source", "sources", key)
    except ReferenceRefused:
        return
    assert owner == caller
    assert ".." not in key.split("/")


def test_reserves_names_exactly_the_areas_only_ragline_writes() -> None:
    assert POLICY.reserves("parse-cache", "v1/pages/ab/x/basic/1.json")
    assert POLICY.reserves("parse-cache", "v1")
    assert not POLICY.reserves("parse-cache", "v10/pages/x")
    assert not POLICY.reserves("markdown", "v1/pages/x")
