"""Bounded work in the parse cache's HTTP face (issue 18): a page range past the cap or past
the document's last page, and a batch id past what a database holds, are 422 problems before
anything is planned, read or allocated per page."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ragline.adapters.inbound.http import ApiTokens, create_app
from ragline.bootstrap.container import container_for
from ragline.bootstrap.entry import entry_for
from ragline.domain.parse_batch import MAX_PAGE
from tests.http.conftest import SERVICE_TOKEN, TOKENS, bearer
from tests.parse_cache.conftest import OtherWorker, make_pdf
from tests.parse_cache.test_cli import Cli

REF = "uploads/four.pdf"
SERVICE = bearer(SERVICE_TOKEN)
HUGE = "1-99999999999999999999"


@pytest.fixture
def api(settings: dict[str, Any], other: OtherWorker, tmp_path: Path) -> Iterator[TestClient]:
    other.put("uploads", "four.pdf", make_pdf(tmp_path / "four.pdf"))
    options = dict(settings)
    container = container_for(options.pop("data_dir"), **options)
    with TestClient(
        create_app(entry_for(container), ApiTokens.parse(json.dumps(TOKENS)), run_worker=False)
    ) as client:
        yield client


def unprocessable(response: Any, *words: str) -> None:
    assert response.status_code == 422, response.text
    assert response.headers["content-type"] == "application/problem+json"
    for word in words:
        assert word in response.json()["detail"]


def test_a_range_past_the_cap_is_refused_on_every_route(api: TestClient) -> None:
    unprocessable(
        api.post("/api/v1/parses", json={"doc_ref": REF, "page_range": HUGE}, headers=SERVICE),
        str(MAX_PAGE),
    )
    unprocessable(
        api.post(
            "/parses", json={"doc_ref": REF, "page_range": f"1-{MAX_PAGE + 1}"}, headers=SERVICE
        ),
        str(MAX_PAGE),
    )
    sha256 = api.post("/api/v1/parses", json={"doc_ref": REF}, headers=SERVICE).json()["sha256"]
    for path in ("/api/v1/parses", "/api/v1/parses/markdown", "/parses/markdown"):
        for ref in (sha256, REF):
            asked = {"doc_ref": ref, "page_range": HUGE}
            unprocessable(api.get(path, params=asked, headers=SERVICE), str(MAX_PAGE))
        unprocessable(
            api.get(
                path, params={"doc_ref": sha256, "page_range": "1-" + "9" * 5000}, headers=SERVICE
            )
        )


def test_a_range_past_the_last_page_is_refused_before_it_is_read(api: TestClient) -> None:
    sha256 = api.post("/api/v1/parses", json={"doc_ref": REF}, headers=SERVICE).json()["sha256"]
    for path in ("/api/v1/parses", "/api/v1/parses/markdown"):
        asked = {"doc_ref": sha256, "page_range": f"1-{MAX_PAGE}"}
        unprocessable(api.get(path, params=asked, headers=SERVICE), "past the last page (4)")
    covered = api.get(
        "/api/v1/parses", params={"doc_ref": sha256, "page_range": "2-4"}, headers=SERVICE
    )
    assert covered.status_code == 200 and covered.json()["missing_pages"] == [2, 3, 4]
    unknown = {"doc_ref": "e" * 64, "page_range": "1-3"}  # no batches: no page count either
    assert api.get("/api/v1/parses", params=unknown, headers=SERVICE).status_code == 404


def test_batch_ids_past_a_database_column_are_refused(api: TestClient) -> None:
    for ids in (str(2**63), f"1,{2**64}", "9" * 400):
        unprocessable(api.get("/api/v1/parses", params={"ids": ids}, headers=SERVICE), "ids")
    largest = api.get("/api/v1/parses", params={"ids": str(2**63 - 1)}, headers=SERVICE)
    assert largest.status_code == 200 and largest.json() == {"parses": []}


def test_ragline_parse_refuses_a_range_past_the_cap(
    settings: dict[str, Any], tmp_path: Path
) -> None:
    pdf = make_pdf(tmp_path / "four.pdf")
    code, _out, err = Cli(settings)(str(pdf), "--pages", HUGE)
    assert code == 2 and str(MAX_PAGE) in err
    code, _out, err = Cli(settings)(str(pdf), "--pages", "1-50")
    assert code == 2 and "past the last page (4)" in err
