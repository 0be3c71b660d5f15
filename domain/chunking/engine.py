"""The parent/child chunking engine (docs/design/0004-chunking.md): structure first, pipelines as
the fallback.

Compute, then commit: `chunk_document` only returns candidates; nothing is written.
Parent seeds follow one of three paths — the section tree refined by the remaining steps; the
full pipeline on the whole text when the tree yields no seed; the full pipeline when there is
no structure — then each parent is cut into children from its own span only, three cleanup
rounds drop blanks and duplicates, and a parent with no child gets itself as its only child.
The same Markdown, tree and plan always give the same output.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from enum import StrEnum

import attrs

from ragline.domain.chunking.candidate import NO_ANCHOR, ChunkCandidate, ParentBlock, SourceType
from ragline.domain.chunking.cleanup import (
    CleanupTally,
    Piece,
    Seen,
    Trimmed,
    clean_range,
    cleanup,
    cleanup_children,
    trimmed_children,
)
from ragline.domain.chunking.models import ChunkModels
from ragline.domain.chunking.plan import ChunkPlan, ChunkStep, SizeUnit, StepParams, Strategy
from ragline.domain.chunking.separators import CutIndex
from ragline.domain.chunking.strategies.llm import align_proposal, spans_from_cuts
from ragline.domain.chunking.strategies.recursive import RecursiveSplitter
from ragline.domain.chunking.strategies.semantic import semantic_groups
from ragline.domain.chunking.strategies.structure import (
    Seed,
    structure_child_seeds,
    structure_parent_seeds,
)
from ragline.domain.chunking.structure import NodeType, StructureTree

_NO_HEADINGS: list[int] = []
# anchors whose text holds no heading cut (a section's, the root's); the members are looked up
# once: an enum member lookup costs ~80 ns, per parent
_NO_HEADING_CUTS = (NodeType.SECTION, NodeType.DOCUMENT)
_RECURSIVE = SourceType.RECURSIVE


class ParentPath(StrEnum):
    """Which docs/design/0004-chunking.md path produced the parent seeds."""

    STRUCTURE = "STRUCTURE"  # section seeds, refined by the remaining steps
    STRUCTURE_YIELDED_NOTHING = "STRUCTURE_YIELDED_NOTHING"  # full pipeline on the whole text
    NO_STRUCTURE = "NO_STRUCTURE"  # full pipeline on the whole text


@attrs.frozen
class ChunkingReport:
    """What happened besides the output: the path taken, what cleanup dropped (blank pieces;
    exact duplicates per round: parent seeds, children, final parents; and the spans of parent
    text dropped as duplicates), and how many model-driven cuts fell back to RECURSIVE."""

    parent_path: ParentPath
    blank_dropped: int
    duplicates_dropped: tuple[int, int, int]
    duplicate_parent_spans: tuple[tuple[int, int], ...]
    fallbacks: int


@attrs.frozen
class ChunkingResult:
    markdown: str
    plan_name: str
    parents: tuple[ParentBlock, ...]
    report: ChunkingReport

    @property
    def child_count(self) -> int:
        return sum(len(p.children) for p in self.parents)


def _has(steps: Sequence[ChunkStep], strategy: Strategy) -> bool:
    return any(s.strategy is strategy for s in steps)


def _uncut_below(steps: Sequence[ChunkStep]) -> int:
    """A length under which every step leaves a piece as it is (-1: none known): each step
    is character-sized and only cuts pieces larger than its max_size. Such a parent is its
    own only child without running the pipeline (the same output, measured 1.1-1.3x faster
    on the Chinese corpus, whose parents are short)."""
    sized = (Strategy.RECURSIVE, Strategy.SEMANTIC, Strategy.LLM)
    if not all(s.strategy in sized and s.params.unit is SizeUnit.CHARS for s in steps):
        return -1
    return min((s.params.max_size for s in steps), default=-1)


def _char_step(steps: Sequence[ChunkStep]) -> StepParams | None:
    """The step's parameters when `steps` is one RECURSIVE step sized in characters (the
    char presets' children: cut, trimmed and built in one pass), else None."""
    if len(steps) != 1 or steps[0].strategy is not Strategy.RECURSIVE:
        return None
    params = steps[0].params
    return params if params.unit is SizeUnit.CHARS else None


def _own_child(parent: Trimmed) -> ChunkCandidate:
    """The child that is its whole parent (a parent no child step cuts, or one whose
    children all went in cleanup)."""
    start, end, text, source, anchor = parent
    return tuple.__new__(ChunkCandidate, (*anchor, 0, source, start, end, text, start))


class _Run:
    """One engine run over one document: the model ports, splitters and tallies."""

    def __init__(self, markdown: str, tree: StructureTree | None, models: ChunkModels) -> None:
        self.text = markdown
        # a tree without sections carries no structure signal: path C
        self.tree = tree if tree is not None and tree.section_starts else None
        self.models = models
        self.tally = CleanupTally()
        self.fallbacks = 0
        self._splitters: dict[StepParams, RecursiveSplitter] = {}

    def splitter(self, params: StepParams) -> RecursiveSplitter:
        sp = self._splitters.get(params)
        if sp is None:
            sp = self._splitters[params] = RecursiveSplitter(params, self.models.token_counter)
        return sp

    # -- pipelines -------------------------------------------------------------------------

    def pipeline(self, pieces: list[Piece], steps: Sequence[ChunkStep]) -> list[Piece]:
        for step in steps:
            if step.strategy is Strategy.RECURSIVE:
                pieces = self._recursive(pieces, step.params)
            elif step.strategy is Strategy.SEMANTIC:
                pieces = self._semantic(pieces, step.params)
            elif step.strategy is Strategy.LLM:
                pieces = self._llm(pieces, step.params)
            # STRUCTURE inside a pipeline: already applied, or no tree to follow
        return pieces

    def _recursive(self, pieces: list[Piece], params: StepParams) -> list[Piece]:
        sp = self.splitter(params)
        fits, split = sp.fits, sp.split
        out: list[Piece] = []
        append = out.append
        recursive = SourceType.RECURSIVE
        for piece in pieces:
            s, e, _, anchor, index = piece
            if fits(index, s, e):
                append(piece)
                continue
            for a, b in split(index, s, e):
                append((a, b, recursive, anchor, index))
        return out

    def _refine(
        self, piece: Piece, spans: list[tuple[int, int]], source: SourceType, params: StepParams
    ) -> list[Piece]:
        """Model-chosen spans, each still too large one cut recursively to fit."""
        sp = self.splitter(params)
        _, _, _, anchor, index = piece
        out: list[Piece] = []
        for a, b in spans:
            if sp.fits(index, a, b):
                out.append((a, b, source, anchor, index))
            else:
                out.extend(
                    (x, y, SourceType.RECURSIVE, anchor, index) for x, y in sp.split(index, a, b)
                )
        return out

    def _semantic(self, pieces: list[Piece], params: StepParams) -> list[Piece]:
        sp = self.splitter(params)
        todo = [i for i, p in enumerate(pieces) if not sp.fits(p[4], p[0], p[1])]
        embedder = self.models.embedder
        if not todo:
            return pieces
        if embedder is None:
            self.fallbacks += len(todo)
            return self._recursive(pieces, params)
        try:
            groups = semantic_groups(
                [(pieces[i][4], pieces[i][0], pieces[i][1]) for i in todo],
                embedder,
                params.percentile,
                params.batch_size,
            )
        except Exception:  # any model failure: cut recursively instead
            self.fallbacks += len(todo)
            return self._recursive(pieces, params)
        by_index = dict(zip(todo, groups, strict=True))
        out: list[Piece] = []
        for i, piece in enumerate(pieces):
            spans = by_index.get(i)
            if spans is None:
                out.append(piece)
            else:
                out.extend(self._refine(piece, spans, SourceType.SEMANTIC, params))
        return out

    def _llm(self, pieces: list[Piece], params: StepParams) -> list[Piece]:
        sp = self.splitter(params)
        proposer = self.models.proposer
        out: list[Piece] = []
        for piece in pieces:
            s, e, _, _, index = piece
            if sp.fits(index, s, e):
                out.append(piece)
                continue
            cuts: list[int] | None = None
            if proposer is not None:
                local = index.slice(s, e)
                try:
                    cuts = align_proposal(local, proposer.propose(local))
                except Exception:  # timeout, HTTP error, garbage: fall back
                    cuts = None
            if not cuts:
                self.fallbacks += 1
                out.extend(self._recursive([piece], params))
                continue
            spans = spans_from_cuts(s, e, [s + c for c in cuts])
            out.extend(self._refine(piece, spans, SourceType.LLM, params))
        return out

    # -- seeds -----------------------------------------------------------------------------

    def parents(self, steps: Sequence[ChunkStep]) -> tuple[Iterator[Trimmed], ParentPath]:
        """Parents in document order, cleaned (round 1) as they are cut, and the path taken.
        On path A seed by seed, so a seed's text can be released once its parents are cut."""
        seen: Seen = {}
        if not (_has(steps, Strategy.STRUCTURE) and self.tree is not None):
            whole = self.pipeline([self._whole()], steps)
            return self._cleaned([whole], seen), ParentPath.NO_STRUCTURE
        seeds = structure_parent_seeds(self.text, self.tree)
        if not seeds:
            whole = self.pipeline([self._whole()], steps)
            return self._cleaned([whole], seen), ParentPath.STRUCTURE_YIELDED_NOTHING
        rest = [s for s in steps if s.strategy is not Strategy.STRUCTURE]
        by_chars = _char_step(rest)
        if by_chars is not None:
            return self._char_refined(seeds, by_chars, seen), ParentPath.STRUCTURE
        return self._cleaned(self._refined(seeds, rest), seen), ParentPath.STRUCTURE

    def _cleaned(self, batches: Iterable[list[Piece]], seen: Seen) -> Iterator[Trimmed]:
        for batch in batches:
            yield from cleanup(batch, self.tally, 0, seen)

    def _refined(self, seeds: list[Seed], rest: Sequence[ChunkStep]) -> Iterator[list[Piece]]:
        text = self.text
        for s, e, src, anchor in seeds:
            # each seed gets its own compact text; a section holds no heading outside code
            piece: Piece = (s, e, src, anchor, CutIndex(text[s:e], s, _NO_HEADINGS))
            yield self.pipeline([piece], rest) if rest else [piece]

    def _char_refined(self, seeds: list[Seed], params: StepParams, seen: Seen) -> Iterator[Trimmed]:
        """`_cleaned(_refined(...))` for one character-sized RECURSIVE refinement: a seed that
        fits is cleaned as it is, a longer one is cut first; no pipeline and no piece tuples
        (most seeds fit: on the Chinese corpus 5 in 6)."""
        text, tally = self.text, self.tally
        mx = params.max_size
        split = self.splitter(params).split
        recursive = SourceType.RECURSIVE
        # Seeds are sections, each with its own canonical path (build_tree's), so only the
        # parents cut from one seed can repeat each other: the duplicate check (keyed by path)
        # runs per cut seed and a seed that fits needs none. Repeated paths (a tree built by
        # other means): one scope for all, as `_cleaned` keeps.
        shared = seen if len({seed[3].canonical_path for seed in seeds}) < len(seeds) else None
        for s, e, source, anchor in seeds:
            if e - s <= mx:
                parent = clean_range(text, 0, s, e, source, anchor, shared, tally)
                if parent is not None:
                    yield parent
                continue
            seed_text = text[s:e]  # compact: it is sliced again, not the document
            scope: Seen = {} if shared is None else shared
            for a, b in split(CutIndex(seed_text, s, _NO_HEADINGS), s, e):
                parent = clean_range(seed_text, s, a, b, recursive, anchor, scope, tally)
                if parent is not None:
                    yield parent

    def _whole(self) -> Piece:
        headings = list(self.tree.section_starts) if self.tree is not None else None
        index = CutIndex(self.text, 0, headings)
        return (0, len(self.text), SourceType.ORIGINAL, NO_ANCHOR, index)

    def child_seeds(
        self, parent: Trimmed, steps: Sequence[ChunkStep], structure: bool
    ) -> list[Piece]:
        """Children cut from the parent's text only; `structure`: the child pipeline has a
        STRUCTURE step (it needs a parent anchored in the tree to follow)."""
        ps, pe, _, source, anchor = parent
        own: Piece = (ps, pe, source, anchor, _parent_index(parent))
        if structure and self.tree is not None and anchor.structure_node_id is not None:
            seeds = structure_child_seeds(self.tree, own) or [own]
            rest = [s for s in steps if s.strategy is not Strategy.STRUCTURE]
            return self.pipeline(seeds, rest) if rest else seeds
        return self.pipeline([own], steps)

    def char_children(self, parent: Trimmed, sp: RecursiveSplitter) -> tuple[ChunkCandidate, ...]:
        """The children of one character-sized RECURSIVE step (cut by `sp`), cleaned (round
        2): the output of child_seeds + cleanup_children, built straight from the cut spans.
        Only for a parent longer than the step's max_size (a shorter one is its own child)."""
        ps, pe, ptext, _, anchor = parent
        spans = sp.split(_parent_index(parent), ps, pe)
        return trimmed_children(ptext, ps, spans, _RECURSIVE, anchor, self.tally)


def _parent_index(parent: Trimmed) -> CutIndex:
    """A cut index over the parent's own text; a section's text holds no heading cut."""
    ps, _, ptext, _, anchor = parent
    in_section = anchor.node_type in _NO_HEADING_CUTS
    return CutIndex(ptext, ps, _NO_HEADINGS if in_section else None)


def chunk_document(
    markdown: str,
    plan: ChunkPlan,
    *,
    tree: StructureTree | None = None,
    models: ChunkModels | None = None,
) -> ChunkingResult:
    """Cut `markdown` into parent blocks with children, following `plan`.

    `tree` is the document's structure (from a StructureBuilder); without it the STRUCTURE
    steps have nothing to follow and the pipelines run on the full text. `models` supplies the
    embedder / boundary proposer / token counter the SEMANTIC, LLM and token-sized steps use.
    Raises IncompletePlanError when the plan lacks a PARENT or CHILD pipeline.
    """
    parent_steps = plan.parent_steps
    child_steps = plan.child_steps
    run = _Run(markdown, tree, models or ChunkModels())
    tally = run.tally
    structure_children = _has(child_steps, Strategy.STRUCTURE)
    uncut = -1 if structure_children else _uncut_below(child_steps)
    by_chars = None if structure_children else _char_step(child_steps)
    # one char-sized step: `uncut` is its max_size, so the parents it sees are all longer
    char_splitter = None if by_chars is None else run.splitter(by_chars)
    found, path = run.parents(parent_steps)
    parents: list[ParentBlock] = []
    new = tuple.__new__
    for parent in found:
        ps, pe, ptext, psource, anchor = parent
        children: tuple[ChunkCandidate, ...]
        if pe - ps <= uncut:  # trimmed already: it is its own only child
            children = (_own_child(parent),)
        elif char_splitter is not None:
            children = run.char_children(parent, char_splitter) or (_own_child(parent),)
        else:
            kids = cleanup_children(run.child_seeds(parent, child_steps, structure_children), tally)
            children = tuple(
                new(ChunkCandidate, (*a, i, src, s, e, ptext, ps))
                for i, (s, e, src, a, _) in enumerate(kids)
            ) or (_own_child(parent),)
        # Round 3 (the final parents) is round 1's: round 1 kept one parent per (canonical
        # path, text) over the whole document and parents do not change after it, so a
        # third pass could drop nothing (its count in the report stays 0).
        fields = (*anchor, len(parents), ptext, psource, ps, pe, children)
        parents.append(new(ParentBlock, fields))
    del found
    report = ChunkingReport(
        parent_path=path,
        blank_dropped=tally.blank,
        duplicates_dropped=(tally.duplicates[0], tally.duplicates[1], tally.duplicates[2]),
        duplicate_parent_spans=tuple(tally.duplicate_spans),
        fallbacks=run.fallbacks,
    )
    return ChunkingResult(markdown, plan.name, tuple(parents), report)
