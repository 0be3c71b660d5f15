"""A document delete removes only the objects ragline wrote for it (docs/security.md): never
an object another live document's run — any tenant's — names as its source or Markdown, nor
a source of its own, nor anything in the parse cache's area. The producer (the service) may
name any object as a Markdown target, and tasks stored before the reference rule could name
another tenant's objects: the delete must not follow them."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from ragline.application.documents import DeleteDocument
from ragline.application.ports.repositories.scope import DocumentScope
from ragline.domain.parse_run import MarkdownLocation, PipelineStatus
from tests.fakes.harness import MD_BUCKET, SOURCE_BUCKET, Harness


@pytest.fixture
def h(tmp_path: Path) -> Harness:
    harness = Harness(tmp_path)
    harness.configure_embedding()
    harness.configure_embedding(user_id=8)
    return harness


def delete(h: Harness) -> DeleteDocument:
    return DeleteDocument(h.db, h.vectors, h.keywords, h.storage, h.clock, h.references)


async def run(h: Harness, file_type: str = "txt", **overrides: object) -> str:
    task = h.task(file_type, **overrides)
    await h.pipeline.handle(task)
    assert h.run(task.task_id).pipeline_status is PipelineStatus.SUCCESS
    return task.task_id


async def test_a_markdown_target_that_is_another_document_s_source_is_kept(h: Harness) -> None:
    victim = {"original_file_id": 101, "source_object_key": "files/victim.txt"}
    await run(h, **victim, md_object_key="md/victim.md")
    await run(h, md_bucket=SOURCE_BUCKET, md_object_key="files/victim.txt")  # overwrote it
    done = await delete(h)("7", "3", "100")
    assert not done.markdown_deleted
    assert h.storage.data(SOURCE_BUCKET, "files/victim.txt") is not None
    assert done.chunks > 0  # the document itself is gone
    assert h.db.chunks_of(DocumentScope("7", "3", "101"))  # the victim is untouched


async def test_a_shared_markdown_target_goes_with_the_last_live_document(h: Harness) -> None:
    await run(h, md_object_key="md/shared.md")
    await run(h, original_file_id=101, source_object_key="f/101.txt", md_object_key="md/shared.md")
    assert not (await delete(h)("7", "3", "100")).markdown_deleted
    assert h.storage.data(MD_BUCKET, "md/shared.md") is not None
    assert (await delete(h)("7", "3", "101")).markdown_deleted
    assert h.storage.data(MD_BUCKET, "md/shared.md") is None


async def test_another_tenant_s_live_document_protects_what_it_names(h: Harness) -> None:
    await run(h, md_object_key="md/mine.md")
    # user 8's document reads user 7's Markdown as its source (a service's task may)
    await run(h, "md", user_id=8, source_bucket=MD_BUCKET, source_object_key="md/mine.md",
              upload=False)  # fmt: skip
    assert not (await delete(h)("7", "3", "100")).markdown_deleted
    assert h.storage.data(MD_BUCKET, "md/mine.md") is not None


async def test_the_document_s_own_source_is_kept_and_its_markdown_removed(h: Harness) -> None:
    first = await run(h, md_object_key="md/first.md")
    h.storage.add(SOURCE_BUCKET, "files/second.txt", b"The second upload of the document.")
    # a later task of the same document (the service's) names the first source as its target
    await run(h, source_object_key="files/second.txt", upload=False,
              md_bucket=SOURCE_BUCKET, md_object_key="files/doc-100.txt")  # fmt: skip
    assert h.run(first).markdown == MarkdownLocation(MD_BUCKET, "md/first.md")
    assert (await delete(h)("7", "3", "100")).markdown_deleted
    assert h.storage.data(MD_BUCKET, "md/first.md") is None
    assert h.storage.data(SOURCE_BUCKET, "files/doc-100.txt") is not None


async def test_nothing_in_the_parse_cache_is_deleted(h: Harness) -> None:
    """A run stored before the rule with its Markdown in the cache's area keeps the page."""
    task_id = await run(h)
    page = MarkdownLocation("parse-cache", "v1/pages/ab/abcd/basic/1.json")
    h.storage.add(page.bucket, page.object_key, b'{"first": 1, "pages": ["shared"]}')
    h.db.runs[task_id] = attrs.evolve(h.run(task_id), markdown=page)
    assert not (await delete(h)("7", "3", "100")).markdown_deleted
    assert h.storage.data(page.bucket, page.object_key) is not None
