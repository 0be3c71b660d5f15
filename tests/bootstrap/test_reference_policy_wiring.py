"""The container's one ReferencePolicy: RAGLINE_TENANT_BUCKETS (default: the source and
Markdown buckets) and the parse cache's bucket/prefix as the area nobody targets."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline.application.access import Caller, ObjectArea, ReferenceRefused
from ragline.bootstrap.container import container_for


def test_by_default_tenants_name_their_prefix_of_the_source_and_markdown_buckets(
    tmp_path: Path,
) -> None:
    policy = container_for(tmp_path, source_bucket="in", markdown_bucket="out").reference_policy()
    assert policy.tenant_buckets == {"in", "out"}
    assert policy.reserved == (ObjectArea("parse-cache", "v1"),)
    policy.check_read(Caller.tenant("5"), "source", "in", "5/a.pdf")
    with pytest.raises(ReferenceRefused):
        policy.check_read(Caller.tenant("5"), "source", "elsewhere", "5/a.pdf")


def test_the_tenant_buckets_and_the_cache_area_follow_the_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGLINE_TENANT_BUCKETS", " shared , team-b ,,")
    monkeypatch.setenv("RAGLINE_PARSE_CACHE_BUCKET", "cache")
    monkeypatch.setenv("RAGLINE_PARSE_CACHE_PREFIX", "pages-v2")
    policy = container_for(tmp_path).reference_policy()
    assert policy.tenant_buckets == {"shared", "team-b"}
    assert policy.reserves("cache", "pages-v2/x") and not policy.reserves("cache", "v1/x")
    with pytest.raises(ReferenceRefused):  # the source bucket is no longer a tenant's
        policy.check_read(Caller.tenant("5"), "source", "sources", "5/a.pdf")
