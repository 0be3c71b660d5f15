"""docs/design/0004-chunking.md paths, one by one: plan validation, the three parent-seed paths,
child paths, the child fallback, the three cleanup rounds, trimming, ids."""

from __future__ import annotations

import pytest

from ragline.adapters.structure.markdown import LineScanStructureBuilder
from ragline.domain.chunking import (
    DEFAULT_PLAN,
    PRESETS,
    ChunkPlan,
    ChunkStep,
    IncompletePlanError,
    NodeType,
    ParentPath,
    Pipeline,
    SourceType,
    StepParams,
    Strategy,
    chunk_document,
    chunk_id,
    preset,
)

P, C = Pipeline.PARENT, Pipeline.CHILD
BUILD = LineScanStructureBuilder().build

DOC = """Preamble before any heading.

# Chapter 1

## 1.1 Intro

Intro text of one point one.

## 1.2 Shell

### 1.2.1 Leaf

Leaf text.

# Chapter 2

Chapter two has its own body.

## 2.1 Child

Child text.

## 2.2 Trailing shell
"""


def plan(*steps: ChunkStep) -> ChunkPlan:
    return ChunkPlan("test", steps)


def test_steps_sorted_by_pipeline_step_number_and_id() -> None:
    steps = [
        ChunkStep(C, 1, Strategy.RECURSIVE, id="c"),
        ChunkStep(P, 2, Strategy.RECURSIVE, id="b"),
        ChunkStep(P, 1, Strategy.RECURSIVE, id="z"),
        ChunkStep(P, 1, Strategy.STRUCTURE, id="a"),
    ]
    p = ChunkPlan("x", steps)
    assert [s.id for s in p.steps] == ["a", "z", "b", "c"]
    assert [s.id for s in p.parent_steps] == ["a", "z", "b"]
    assert [s.id for s in p.child_steps] == ["c"]


@pytest.mark.parametrize("missing", [P, C])
def test_a_plan_without_both_pipelines_is_an_internal_state_error(missing: Pipeline) -> None:
    present = C if missing is P else P
    broken = plan(ChunkStep(present, 1, Strategy.RECURSIVE))
    with pytest.raises(IncompletePlanError):
        chunk_document("text", broken)
    assert issubclass(IncompletePlanError, RuntimeError)


def test_step_params_are_validated() -> None:
    with pytest.raises(ValueError):
        StepParams(0)
    with pytest.raises(ValueError):
        StepParams(10, min_size=11)
    with pytest.raises(ValueError):
        StepParams(10, overlap=10)


def test_presets_are_complete_and_named() -> None:
    assert DEFAULT_PLAN is PRESETS["default"]
    assert {"default", "fine", "coarse", "semantic", "llm", "structure", "tokens"} <= set(PRESETS)
    for name, p in PRESETS.items():
        assert p.name == name and p.parent_steps and p.child_steps
    with pytest.raises(KeyError, match="known"):
        preset("nope")


def test_path_a_content_bearing_sections_become_parents() -> None:
    result = chunk_document(
        DOC,
        plan(
            ChunkStep(P, 1, Strategy.STRUCTURE),
            ChunkStep(C, 1, Strategy.RECURSIVE, StepParams(500)),
        ),
        tree=BUILD(DOC),
    )
    assert result.report.parent_path is ParentPath.STRUCTURE
    paths = [p.section_path for p in result.parents]
    # preamble (root), 1.1 (with the Chapter 1 shell heading), 1.2.1 (with the 1.2 shell),
    # Chapter 2's own body, 2.1 (with the trailing shell 2.2 appended: nothing is lost)
    assert paths == [
        (),
        ("Chapter 1", "1.1 Intro"),
        ("Chapter 1", "1.2 Shell", "1.2.1 Leaf"),
        ("Chapter 2",),
        ("Chapter 2", "2.1 Child"),
    ]
    texts = [p.text for p in result.parents]
    assert texts[1].startswith("# Chapter 1\n\n## 1.1 Intro")
    assert texts[2].startswith("## 1.2 Shell\n\n### 1.2.1 Leaf")
    assert texts[3] == "# Chapter 2\n\nChapter two has its own body."
    assert texts[4].endswith("## 2.2 Trailing shell")
    assert all(p.source_type is SourceType.STRUCTURE for p in result.parents)
    assert result.parents[0].node_type is NodeType.DOCUMENT
    assert all(p.node_type is NodeType.SECTION for p in result.parents[1:])
    assert result.parents[1].canonical_path == "/s1/s1"
    assert result.parents[2].canonical_path == "/s1/s2/s1"


def test_path_a_remaining_steps_refine_large_sections() -> None:
    body = " ".join(f"Sentence number {i} is here." for i in range(60))
    md = f"# Big\n\n{body}\n\n# Small\n\nTiny.\n"
    p = plan(
        ChunkStep(P, 1, Strategy.STRUCTURE),
        ChunkStep(P, 2, Strategy.RECURSIVE, StepParams(400)),
        ChunkStep(C, 1, Strategy.RECURSIVE, StepParams(120)),
    )
    result = chunk_document(md, p, tree=BUILD(md))
    big = [x for x in result.parents if x.section_path == ("Big",)]
    assert len(big) > 1 and all(x.source_type is SourceType.RECURSIVE for x in big)
    assert all(len(x.text) <= 400 for x in big)
    assert all(x.structure_node_id == big[0].structure_node_id for x in big)
    small = [x for x in result.parents if x.section_path == ("Small",)]
    assert [x.source_type for x in small] == [SourceType.STRUCTURE]


def test_path_b_structure_that_yields_nothing_runs_the_full_pipeline() -> None:
    md = "# Only\n\n## Headings\n\n### Here\n"
    p = plan(
        ChunkStep(P, 1, Strategy.STRUCTURE),
        ChunkStep(P, 2, Strategy.RECURSIVE, StepParams(14)),
        ChunkStep(C, 1, Strategy.RECURSIVE, StepParams(14)),
    )
    result = chunk_document(md, p, tree=BUILD(md))
    assert result.report.parent_path is ParentPath.STRUCTURE_YIELDED_NOTHING
    assert [x.text for x in result.parents] == ["# Only", "## Headings", "### Here"]
    assert all(x.structure_node_id is None for x in result.parents)


def test_path_c_without_structure_runs_the_full_pipeline() -> None:
    md = "Plain text.\n\nNo headings at all.\n"
    result = chunk_document(md, DEFAULT_PLAN, tree=BUILD(md))
    assert result.report.parent_path is ParentPath.NO_STRUCTURE  # the tree has only a root
    assert [x.text for x in result.parents] == ["Plain text.\n\nNo headings at all."]
    assert result.parents[0].source_type is SourceType.ORIGINAL
    no_step = plan(
        ChunkStep(P, 1, Strategy.RECURSIVE, StepParams(2000)),
        ChunkStep(C, 1, Strategy.RECURSIVE, StepParams(500)),
    )
    assert (
        chunk_document(DOC, no_step, tree=BUILD(DOC)).report.parent_path is ParentPath.NO_STRUCTURE
    )
    assert chunk_document(DOC, DEFAULT_PLAN).report.parent_path is ParentPath.NO_STRUCTURE


def test_structure_children_follow_the_anchored_sections_blocks() -> None:
    md = "# S\n\nFirst paragraph.\n\n- a\n- b\n\n| x | y |\n| - | - |\n\n```\ncode\n```\n"
    result = chunk_document(md, PRESETS["structure"], tree=BUILD(md, blocks=True))
    (parent,) = result.parents
    kinds = [c.node_type for c in parent.children]
    assert kinds == [NodeType.PARAGRAPH, NodeType.LIST, NodeType.TABLE, NodeType.CODE]
    assert parent.children[0].text == "# S\n\nFirst paragraph."  # the heading rides along
    assert [c.source_type for c in parent.children] == [SourceType.STRUCTURE] * 4


def test_structure_children_need_an_anchored_parent() -> None:
    md = "no headings\n\nat all\n"
    p = plan(
        ChunkStep(P, 1, Strategy.RECURSIVE, StepParams(100)),
        ChunkStep(C, 1, Strategy.STRUCTURE),
        ChunkStep(C, 2, Strategy.RECURSIVE, StepParams(8)),
    )
    (parent,) = chunk_document(md, p, tree=BUILD(md, blocks=True)).parents
    assert [c.text for c in parent.children] == ["no", "headings", "at all"]
    assert {c.source_type for c in parent.children} == {SourceType.RECURSIVE}


def test_a_parent_with_no_child_gets_itself_as_only_child() -> None:
    md = "# T\n\nsome body text\n"
    p = plan(ChunkStep(P, 1, Strategy.STRUCTURE), ChunkStep(C, 1, Strategy.STRUCTURE))
    (parent,) = chunk_document(md, p, tree=BUILD(md, blocks=False)).parents
    (child,) = parent.children
    assert (child.text, child.span, child.source_type) == (
        parent.text,
        parent.span,
        parent.source_type,
    )


def test_cleanup_rounds_drop_duplicates_only_within_their_scope() -> None:
    para = "Same words again."
    md = f"# A\n\n{para}\n\n{para}\n\n# B\n\n{para}\n"
    p = plan(
        ChunkStep(P, 1, Strategy.STRUCTURE),
        ChunkStep(P, 2, Strategy.RECURSIVE, StepParams(20)),
        ChunkStep(C, 1, Strategy.RECURSIVE, StepParams(20)),
    )
    result = chunk_document(md, p, tree=BUILD(md))
    texts = [(x.section_path, x.text) for x in result.parents]
    assert texts == [(("A",), "# A"), (("A",), para), (("B",), "# B"), (("B",), para)]
    assert result.report.duplicates_dropped == (1, 0, 0)
    (dup_span,) = result.report.duplicate_parent_spans
    assert md[dup_span[0] : dup_span[1]] == para
    # children of one parent: repeated text inside one parent is dropped there
    md2 = f"{para}\n\n{para}\n"
    p2 = plan(
        ChunkStep(P, 1, Strategy.RECURSIVE, StepParams(100)),
        ChunkStep(C, 1, Strategy.RECURSIVE, StepParams(20)),
    )
    r2 = chunk_document(md2, p2)
    assert [c.text for c in r2.parents[0].children] == [para]
    assert r2.report.duplicates_dropped == (0, 1, 0)


def test_texts_are_trimmed_and_blanks_dropped() -> None:
    md = "   \n\n  leading and trailing  \n\n\t\n"
    (parent,) = chunk_document(md, DEFAULT_PLAN).parents
    assert parent.text == "leading and trailing"
    assert md[parent.start : parent.end] == parent.text
    assert chunk_document("  \n\t\n", DEFAULT_PLAN).parents == ()


def test_chunk_id_is_stable_and_sensitive() -> None:
    a = chunk_id("doc-1", (0, 5), "hello")
    assert a == chunk_id("doc-1", (0, 5), "hello") and len(a) == 64
    assert (
        len(
            {
                a,
                chunk_id("doc-2", (0, 5), "hello"),
                chunk_id("doc-1", (1, 6), "hello"),
                chunk_id("doc-1", (0, 5), "hellO"),
            }
        )
        == 4
    )
