"""A tenant with no EMBEDDING config gets no system fallback from a worker
(docs/design/0001-pipeline-contract.md: EMBEDDING required; docs/design/0001-pipeline-contract.md):
its run fails LLM_CONFIG_MISSING before any chunk moves, the reason says how to set one, and nothing
is provisioned behind the business side's back. Only `ragline ingest` gives RAGLINE_EMBEDDER's model
to a user without one (docs/operations.md)."""

from __future__ import annotations

from pathlib import Path

from ragline.domain.parse_run import PipelineStatus
from tests.fakes.harness import Harness


async def test_a_new_tenant_fails_config_missing_and_is_told_how_to_configure(
    tmp_path: Path,
) -> None:
    h = Harness(tmp_path)  # no configure_embedding: user 7 is new
    task = h.task("md")
    await h.pipeline.handle(task)
    run = h.run(task.task_id)
    assert run.pipeline_status is PipelineStatus.FAILED
    assert run.failure_reason is not None
    reason = run.failure_reason.text
    assert reason.startswith("LLM_CONFIG_MISSING:user 7 has no default EMBEDDING config")
    assert "PUT /api/v1/users/7/model-configs/embedding" in reason
    assert "ragline models set-embedding --user 7" in reason
    assert "7" not in h.db.configs, "a worker provisions nothing"
    assert h.embedders.embedded == []
