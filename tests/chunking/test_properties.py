"""Properties of the engine on generated Markdown (headings, lists, tables, code, CJK)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ragline.adapters.structure.markdown import LineScanStructureBuilder
from ragline.domain.chunking import (
    PRESETS,
    ChunkingResult,
    ChunkPlan,
    ChunkStep,
    Pipeline,
    SizeUnit,
    StepParams,
    Strategy,
    WhitespaceCjkTokenCounter,
    chunk_document,
)
from tests.chunking.markdown_gen import markdown_document

BUILDER = LineScanStructureBuilder()
COUNTER = WhitespaceCjkTokenCounter()


@st.composite
def plans(draw: st.DrawFn) -> ChunkPlan:
    """Small bounds so that every document gets cut; structure on or off, chars or tokens."""
    unit = draw(st.sampled_from([SizeUnit.CHARS, SizeUnit.TOKENS]))
    scale = 1 if unit is SizeUnit.CHARS else 4  # ~4 characters per token
    parent_max = draw(st.integers(80, 600)) // scale
    child_max = draw(st.integers(20, max(21, parent_max * scale // 2))) // scale
    child_max = max(child_max, 3)
    child_min = draw(st.integers(0, child_max // 2))
    overlap = draw(st.integers(0, child_max // 3))
    parent_steps = []
    if draw(st.booleans()):
        parent_steps.append(ChunkStep(Pipeline.PARENT, 1, Strategy.STRUCTURE, id="s"))
    parent_steps.append(
        ChunkStep(Pipeline.PARENT, 2, Strategy.RECURSIVE, StepParams(parent_max, unit=unit), id="r")
    )
    child_steps = []
    if draw(st.booleans()):
        child_steps.append(ChunkStep(Pipeline.CHILD, 1, Strategy.STRUCTURE, id="cs"))
    child_steps.append(
        ChunkStep(
            Pipeline.CHILD,
            2,
            Strategy.RECURSIVE,
            StepParams(child_max, child_min, overlap, unit=unit),
            id="cr",
        )
    )
    steps = draw(st.permutations([*parent_steps, *child_steps]))  # order comes from sorting
    return ChunkPlan("generated", steps)


def _run(md: str, plan: ChunkPlan, structure: bool = True) -> ChunkingResult:
    tree = BUILDER.build(md, blocks=plan.child_uses_structure) if structure else None
    return chunk_document(md, plan, tree=tree)


def _size(text: str, unit: SizeUnit) -> int:
    return len(text) if unit is SizeUnit.CHARS else COUNTER.count(text)


documents = markdown_document()
# a fifth of the profile's examples per property ("ci": 40, "long": 1000): seven properties
# share the budget of one state-machine test
FEW = settings(max_examples=max(20, settings.default.max_examples // 5))


@FEW
@given(documents, plans(), st.booleans())
def test_every_chunk_is_the_markdown_at_its_span(md: str, plan: ChunkPlan, structure: bool) -> None:
    result = _run(md, plan, structure)
    for p in result.parents:
        assert md[p.start : p.end] == p.text
        for c in p.children:
            assert md[c.start : c.end] == c.text
            assert p.start <= c.start <= c.end <= p.end
            assert c.text in p.text


@FEW
@given(documents, plans(), st.booleans())
def test_nothing_is_lost_except_reported_duplicates(
    md: str, plan: ChunkPlan, structure: bool
) -> None:
    result = _run(md, plan, structure)
    covered = bytearray(len(md))
    for s, e in [p.span for p in result.parents] + list(result.report.duplicate_parent_spans):
        covered[s:e] = b"\x01" * (e - s)
    lost = [i for i, ch in enumerate(md) if not ch.isspace() and not covered[i]]
    assert lost == []
    if result.report.duplicates_dropped[1] == 0:  # children cover their parent too
        for p in result.parents:
            in_child = bytearray(len(md))
            for c in p.children:
                in_child[c.start : c.end] = b"\x01" * (c.end - c.start)
            assert all(md[i].isspace() or in_child[i] for i in range(p.start, p.end))


@FEW
@given(documents, plans(), st.booleans())
def test_no_empty_chunks_texts_trimmed(md: str, plan: ChunkPlan, structure: bool) -> None:
    result = _run(md, plan, structure)
    for p in result.parents:
        assert p.text and p.text == p.text.strip()
        assert p.children
        for c in p.children:
            assert c.text and c.text == c.text.strip()


@FEW
@given(documents, plans(), st.booleans())
def test_no_duplicate_within_each_cleanup_scope(md: str, plan: ChunkPlan, structure: bool) -> None:
    result = _run(md, plan, structure)
    parent_keys = [(p.canonical_path, p.text) for p in result.parents]
    assert len(parent_keys) == len(set(parent_keys))
    for p in result.parents:
        child_keys = [(c.canonical_path, c.text) for c in p.children]
        assert len(child_keys) == len(set(child_keys))


@FEW
@given(documents, plans(), st.booleans())
def test_sizes_within_bounds(md: str, plan: ChunkPlan, structure: bool) -> None:
    result = _run(md, plan, structure)
    parent_params = plan.parent_steps[-1].params
    child_params = plan.child_steps[-1].params
    for p in result.parents:
        assert _size(p.text, parent_params.unit) <= parent_params.max_size
        for c in p.children:
            assert _size(c.text, child_params.unit) <= child_params.max_size


@FEW
@given(documents, plans(), st.booleans())
def test_order_follows_the_document(md: str, plan: ChunkPlan, structure: bool) -> None:
    result = _run(md, plan, structure)
    starts = [p.start for p in result.parents]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    assert [p.item_index for p in result.parents] == list(range(len(result.parents)))
    for p in result.parents:
        child_starts = [c.start for c in p.children]
        assert child_starts == sorted(child_starts)
        assert [c.item_index for c in p.children] == list(range(len(p.children)))


@FEW
@given(documents, st.sampled_from(sorted(PRESETS)) | plans(), st.booleans())
def test_same_input_same_plan_same_output(md: str, plan: ChunkPlan | str, structure: bool) -> None:
    chosen = PRESETS[plan] if isinstance(plan, str) else plan
    first = _run(md, chosen, structure)
    second = _run(md, chosen, structure)
    assert repr(first) == repr(second)
    assert first == second
