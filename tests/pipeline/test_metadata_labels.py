"""The indexing stages' labels: one read after each stage's writes doubles as the next stage's
read before its writes, and a PUT that commits between two stages still reaches every index."""

from __future__ import annotations

from collections.abc import Sequence

from ragline.application.ports.repositories.documents import StoredMetadata
from ragline.application.ports.vector_index import SparsePoint
from ragline.domain.metadata import DocumentMetadata
from ragline.domain.parse_run import PipelineStatus
from tests.fakes.harness import Harness

OLD = DocumentMetadata.from_plain({"team": "old"})
NEW = DocumentMetadata.from_plain({"team": "new"})


async def test_a_run_reads_the_documents_metadata_once_per_indexing_stage_plus_one(
    h: Harness,
) -> None:
    task = h.task("txt")
    await h.pipeline.handle(task)
    assert h.run(task.task_id).pipeline_status is PipelineStatus.SUCCESS
    # before VECTORIZING, then after each of VECTORIZING, KEYWORD_INDEXING, SPARSE_VECTORIZING
    assert h.faults.hits["uow.documents.metadata_of"] == 4


async def test_a_put_between_two_stages_reaches_the_points_the_next_stage_wrote(
    h: Harness,
) -> None:
    """SPARSE_VECTORIZING starts from the labels KEYWORD_INDEXING read after its writes; a PUT
    that commits (and relabels what exists) after that read, before the sparse points exist,
    is caught by the sparse stage's own read after its writes."""
    task = h.task("txt")
    scope = h.scope(task)
    h.db.labels[scope] = StoredMetadata(OLD, 1)
    upsert_sparse = h.vectors.upsert_sparse
    put = False

    async def put_then_upsert(points: Sequence[SparsePoint]) -> None:
        nonlocal put
        if not put:  # the PUT commits v2, and its relabel covers the points of that moment
            put = True
            h.db.labels[scope] = StoredMetadata(NEW, 2)
            await h.vectors.relabel_document(scope.user_id, scope.dataset_id, scope.doc_id, NEW)
            await h.keywords.relabel_document(scope.user_id, scope.dataset_id, scope.doc_id, NEW)
        await upsert_sparse(points)

    h.vectors.upsert_sparse = put_then_upsert  # type: ignore[method-assign]
    await h.pipeline.handle(task)
    assert h.run(task.task_id).pipeline_status is PipelineStatus.SUCCESS
    assert put
    labels = [p.metadata for _, p in h.vectors.dense.values()]
    labels += [p.metadata for _, p in h.vectors.sparse.values()]
    labels += [d.metadata for d in h.keywords.docs.values()]
    assert len(labels) > 3 and all(label == NEW for label in labels)
