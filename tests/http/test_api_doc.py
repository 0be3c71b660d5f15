"""docs/http-api.md is generated from the OpenAPI document; it must not drift."""

from pathlib import Path

from ragline.adapters.http.api_doc import render

DOC = Path(__file__).resolve().parents[2] / "docs" / "http-api.md"


def test_the_http_api_page_is_current() -> None:
    assert DOC.read_text(encoding="utf-8") == render(), (
        "regenerate: .venv/bin/python -m ragline.adapters.http.api_doc > docs/http-api.md"
    )


def test_every_operation_has_a_curl_example() -> None:
    page = render()
    assert page.count("### `") == page.count("curl -sS")
    assert "### `POST /api/v1/parser/extract_sync`" in page
