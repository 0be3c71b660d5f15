"""The run view says which engine really parsed: a scanned PDF sent with the producer's default
backend (mineru) and no MinerU token falls back to auto, is OCRed, and the run shows both."""

from __future__ import annotations

import asyncio
from pathlib import Path

from fastapi.testclient import TestClient

from ragline.testing.files.scanned import make_scanned_pdf
from tests.http.conftest import ALICE_TOKEN, SERVICE_TOKEN, bearer, finished_run
from tests.http.test_api import SEED_TASK


def test_the_run_view_shows_the_fallback_and_the_ocr_backend(
    client: TestClient, tmp_path: Path
) -> None:
    pdf = make_scanned_pdf(tmp_path / "scan.pdf").read_bytes()
    storage = client.app.state.container.storage()  # type: ignore[attr-defined]

    async def upload() -> None:
        await storage.ensure_bucket(SEED_TASK["source_bucket"])
        await storage.put_bytes(SEED_TASK["source_bucket"], "raw/scan.pdf", pdf)

    asyncio.run(upload())
    default = client.app.state.container.default_embedding()  # type: ignore[attr-defined]
    embedding = {
        "provider": default.provider,
        "model": default.model,
        "dimension": default.dimension,
    }
    url = "/api/v1/users/1001/model-configs/embedding"
    assert client.put(url, json=embedding, headers=bearer(SERVICE_TOKEN)).status_code == 200
    task = {
        **SEED_TASK,
        "task_id": "scan-1",
        "user_id": 1001,
        "source_object_key": "raw/scan.pdf",
        "md_object_key": "parsed/scan-1.md",
        "pdf_parser_backend": "mineru",
    }
    response = client.post("/api/v1/parser/task/submit", json=task, headers=bearer(SERVICE_TOKEN))
    assert response.status_code == 202, response.text
    run = finished_run(client, "scan-1", ALICE_TOKEN)
    assert run["pipeline_status"] == "SUCCESS", (run["failure_reason"], run["failed_stage"])
    assert run["parse_backend"] == "naive+tesseract"
    assert run["parse_warnings"][0] == "mineru asked for but not configured: fell back to auto"
    assert "OCR: 2 of 2 pages" in run["parse_warnings"]
    listed = client.get("/api/v1/runs", headers=bearer(ALICE_TOKEN)).json()["runs"]
    assert [r["parse_backend"] for r in listed if r["task_id"] == "scan-1"] == ["naive+tesseract"]
