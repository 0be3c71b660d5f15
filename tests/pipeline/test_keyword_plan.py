"""The keyword plan is spooled to the task's workspace file, read back in batches, and gone
when the run ends."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ragline.application.pipeline.keyword_plan import SUFFIX, KeywordPlan
from ragline.application.ports.keyword_index import KeywordDoc
from ragline.domain.parse_run import PipelineStatus
from tests.fakes.harness import Harness


def _doc(i: int) -> KeywordDoc:
    return KeywordDoc(
        chunk_id=f"c{i}",
        doc_id="d",
        user_id="u",
        dataset_id="ds",
        parent_id=None if i % 2 else f"p{i}",
        tokens=["北京", "大学", f"word{i}", "\u00e9t\u00e9"],
        payload={"canonical_path": f"/s{i}", "task_id": "t"},
    )


def test_a_plan_reads_back_what_was_added_in_batches(tmp_path: Path) -> None:
    plan = KeywordPlan(tmp_path / "ws" / f"task.{SUFFIX}")
    docs = [_doc(i) for i in range(7)]
    plan.add(docs[:4])
    plan.add(docs[4:])
    assert plan.count == 7
    batches = list(plan.batches(3))
    assert [len(b) for b in batches] == [3, 3, 1]
    assert [d for b in batches for d in b] == docs
    plan.discard()
    assert not plan.path.exists()


async def test_the_plan_is_a_workspace_file_until_the_run_ends(h: Harness) -> None:
    seen: list[list[str]] = []
    original = h.keywords.write

    async def spying_write(docs: Sequence[KeywordDoc]) -> None:
        seen.append([p.suffix for p in h.workspace.leftovers()])
        await original(docs)

    h.keywords.write = spying_write  # type: ignore[method-assign]
    task = h.task("md")
    await h.pipeline.handle(task)
    assert h.run(task.task_id).pipeline_status is PipelineStatus.SUCCESS
    assert seen and all(suffixes == [f".{SUFFIX}"] for suffixes in seen)
    assert h.workspace.leftovers() == []
