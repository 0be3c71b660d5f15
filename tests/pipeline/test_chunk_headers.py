"""Contextual chunk headers: the indexes get the section path in front of each child's text,
the chunk rows (and so every hit) keep the plain text; off, the indexes get the plain text."""

from __future__ import annotations

from pathlib import Path

import attrs

from ragline.application.pipeline.chunk_header import chunk_header
from ragline.application.pipeline.settings import PipelineSettings
from ragline.application.ports.repositories.chunks import ChunkRecord
from ragline.domain.parse_run import PipelineStatus
from tests.fakes.harness import Harness

DOC = "# Tea Guide\n\n## Water\n\nUse fresh cold water that was never boiled before.\n"


def _harness(tmp_path: Path, headers: bool) -> Harness:
    settings = PipelineSettings(embed_batch_size=3, sparse_batch_size=3, contextual_headers=headers)
    harness = Harness(tmp_path, settings)
    harness.configure_embedding()
    return harness


async def test_indexes_get_the_header_rows_keep_the_text(tmp_path: Path) -> None:
    h = _harness(tmp_path, headers=True)
    task = h.task("md", content=DOC)
    await h.pipeline.handle(task)
    assert h.run(task.task_id).pipeline_status is PipelineStatus.SUCCESS
    children = [c for c in h.db.chunks_of(h.scope(task)) if not c.is_parent]
    assert children
    water = next(c for c in children if "fresh cold water" in c.text)
    header = chunk_header(water, task.source_filename)
    assert header  # the harness's plan keeps no section path: the file's stem heads it
    assert f"{header}\n\n{water.text}" in h.embedders.embedded
    assert water.text not in h.embedders.embedded  # the indexes never got the bare text
    keyword = h.keywords.docs[water.chunk_id]
    head = h.tokenizer.tokenize(header)
    assert list(keyword.tokens[: len(head)]) == head
    assert list(keyword.tokens[len(head) :]) == h.tokenizer.tokenize(water.text)


async def test_off_the_indexes_get_the_plain_text(tmp_path: Path) -> None:
    h = _harness(tmp_path, headers=False)
    task = h.task("md", content=DOC)
    await h.pipeline.handle(task)
    children = [c for c in h.db.chunks_of(h.scope(task)) if not c.is_parent]
    assert sorted(h.embedders.embedded) == sorted(c.text for c in children)
    water = next(c for c in children if "fresh cold water" in c.text)
    assert list(h.keywords.docs[water.chunk_id].tokens) == h.tokenizer.tokenize(water.text)


def test_a_chunk_without_section_is_headed_by_its_file_name(tmp_path: Path) -> None:
    h = _harness(tmp_path, headers=True)
    task = h.task("md", content=DOC)
    row = ChunkRecord(
        chunk_id="c",
        scope=h.scope(task),
        task_id="t",
        parent_id="p",
        order_index=0,
        text="body",
        section_path=(),
        canonical_path="/",
        structure_node_id=None,
        node_type=None,
        source_type="text",
        span_start=0,
        span_end=4,
    )
    assert chunk_header(row, "notes/2024 minutes.txt") == "2024 minutes"
    assert chunk_header(attrs.evolve(row, section_path=("A", " ", "B")), "x.md") == "A > B"
