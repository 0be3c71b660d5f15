"""docs/http-api.md is generated from the OpenAPI document; it must not drift, and every
example names what its call needs (tests/docs/test_curl_examples.py runs them)."""

from pathlib import Path
from typing import Annotated

import pytest
from fastapi import FastAPI, Query

from ragline.adapters.inbound.http.api_doc import MissingExample, render

DOC = Path(__file__).resolve().parents[2] / "docs" / "http-api.md"


def test_the_http_api_page_is_current() -> None:
    assert DOC.read_text(encoding="utf-8") == render(), (
        "regenerate: .venv/bin/python -m ragline.adapters.inbound.http.api_doc > docs/http-api.md"
    )


def test_every_operation_has_a_curl_example() -> None:
    sections = render().split("\n### `")[1:]
    assert sections and all("curl -sS" in section for section in sections)
    extract = next(s for s in sections if s.startswith("POST /api/v1/parser/extract_sync`"))
    assert "-F file=@document.pdf" in extract and "-F source=tolink-rag-docs/" in extract


def test_an_example_without_a_required_parameter_is_refused() -> None:
    app = FastAPI()

    @app.delete("/things/{thing_id}")
    def delete(thing_id: str, owner: Annotated[str, Query()]) -> None: ...

    with pytest.raises(MissingExample, match="thing_id"):
        render(app.openapi())
