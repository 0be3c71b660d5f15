"""A Hypothesis machine over the re-embedding domain (issue 21), playing the application.

Random runs vectorize and succeed (or fail) for a few documents of one user while a
re-embedding is planned, copied in leased batches by workers that may die (their lease runs
out), caught up, swapped, cancelled or failed. After every step it checks the properties of
docs/state-machine.md ("The re-embedding machine"):

P1  search answers from exactly one generation, and that generation holds a vector for every
    chunk of every SUCCESS lineage, each of that generation's dimension (no mixed spaces);
P2  a swap happens only when every SUCCESS chunk has a vector in the new generation;
P3  a run that finishes during the copy lands in both generations (it writes to every target,
    and owes the targets it had not seen before its SUCCESS);
P4  a cancel (or a failure) leaves the old generation untouched and the new one empty;
P5  progress never passes the total, and a chunk is embedded into the new generation at most
    once per claim of its batch.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta
from typing import ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from ragline.domain.reembedding import (
    CopyBatch,
    CopyBatchStatus,
    EmbeddingSpec,
    Generations,
    IllegalReembeddingMove,
    NotCaughtUp,
    Reembedding,
    ReembeddingStatus,
    split,
    within,
)

EPOCH = datetime(2026, 1, 1)
LEASE = timedelta(seconds=10)
DOCS = ("d0", "d1", "d2", "d3")
FIRST_DIMENSION = 4


class ReembeddingMachine(RuleBasedStateMachine):
    # tests/domain/test_reembedding.py turns this off to show P1 finds the missing guard.
    runs_catch_up: ClassVar[bool] = True

    def __init__(self) -> None:
        super().__init__()
        self.tick = 0
        self.next_chunk = 0
        self.gens = Generations(user_id="u")
        self.dimensions: dict[int, int] = {0: FIRST_DIMENSION}
        self.index: dict[int, dict[str, int]] = {0: {}}  # generation -> chunk_id -> dimension
        self.lineages: dict[str, frozenset[str]] = {}  # doc -> chunks of its SUCCESS lineage
        self.inflight: dict[str, tuple[frozenset[str], frozenset[int]]] = {}
        self.current: Reembedding | None = None
        self.finished: list[Reembedding] = []
        self.batches: list[CopyBatch] = []
        self.held: list[tuple[int, int]] = []  # (batch seq, claims) a worker believes it holds
        self.embeds: Counter[tuple[int, str]] = Counter()  # (seq, chunk) -> copies

    # -- helpers --------------------------------------------------------------------------

    def now(self) -> datetime:
        return EPOCH + timedelta(seconds=self.tick)

    def required(self) -> frozenset[str]:
        return frozenset().union(*self.lineages.values()) if self.lineages else frozenset()

    def write(self, generations: frozenset[int], chunks: frozenset[str]) -> None:
        for generation in generations:
            points = self.index.setdefault(generation, {})
            points.update(dict.fromkeys(chunks, self.dimensions[generation]))

    def erase(self, chunks: frozenset[str]) -> None:
        for points in self.index.values():
            for chunk in chunks:
                points.pop(chunk, None)

    def missing(self) -> frozenset[str]:
        assert self.current is not None
        return self.required() - set(self.index.get(self.current.target_generation, {}))

    def active_status(self, *statuses: ReembeddingStatus) -> bool:
        return self.current is not None and self.current.status in statuses

    def close(self) -> None:
        assert self.current is not None
        self.finished.append(self.current)
        self.current = None
        self.batches = []
        self.held = []
        self.embeds = Counter()

    def add_catch_up(self, missing: frozenset[str], size: int) -> None:
        assert self.current is not None
        extra = split(self.current.id, sorted(missing), size, first_seq=len(self.batches))
        self.current.catch_up(len(missing))
        self.batches.extend(extra)

    # -- runs of the user's documents -------------------------------------------------------

    @rule(doc=st.sampled_from(DOCS), size=st.integers(1, 3))
    def vectorize(self, doc: str, size: int) -> None:
        """A run's VECTORIZING writes its new lineage to the targets it reads now."""
        if doc in self.inflight:
            return
        chunks = frozenset(f"c{self.next_chunk + n:04d}" for n in range(size))
        self.next_chunk += size
        targets = self.gens.write_targets
        self.write(targets, chunks)
        self.inflight[doc] = (chunks, targets)

    @precondition(lambda self: self.inflight)
    @rule(data=st.data())
    def succeed(self, data: st.DataObject) -> None:
        """SUCCESS: first the targets the run had not seen (P3), then the old lineage goes."""
        doc = data.draw(st.sampled_from(sorted(self.inflight)))
        chunks, written = self.inflight.pop(doc)
        if self.runs_catch_up:
            self.write(self.gens.catch_up(written), chunks)
        old = self.lineages.get(doc, frozenset())
        self.lineages[doc] = chunks
        self.erase(old)

    @precondition(lambda self: self.inflight)
    @rule(data=st.data())
    def fail_run(self, data: st.DataObject) -> None:
        doc = data.draw(st.sampled_from(sorted(self.inflight)))
        chunks, _ = self.inflight.pop(doc)
        self.erase(chunks)

    @precondition(lambda self: self.lineages)
    @rule(data=st.data())
    def delete_document(self, data: st.DataObject) -> None:
        doc = data.draw(st.sampled_from(sorted(self.lineages)))
        self.erase(self.lineages.pop(doc))

    # -- the re-embedding -------------------------------------------------------------------

    @precondition(lambda self: self.current is None)
    @rule(dimension=st.integers(2, 6))
    def plan(self, dimension: int) -> None:
        """One transaction: the re-embedding row and the user's shadow generation."""
        target = self.gens.next_generation
        self.current = Reembedding.plan(
            f"r{len(self.finished)}",
            "u",
            self.gens.active,
            target,
            EmbeddingSpec("p", f"m{dimension}", dimension),
            self.now(),
        )
        self.dimensions[target] = dimension
        self.gens = self.gens.open_shadow(target)

    @precondition(lambda self: self.active_status(ReembeddingStatus.PLANNED))
    @rule(size=st.integers(1, 3))
    def start(self, size: int) -> None:
        assert self.current is not None
        required = sorted(self.required())
        self.batches = split(self.current.id, required, size)
        self.current.start(len(required), self.now())

    @precondition(lambda self: self.active_status(ReembeddingStatus.COPYING))
    @rule(data=st.data())
    def claim(self, data: st.DataObject) -> None:
        open_batches = [b for b in self.batches if b.claimable(self.now())]
        if not open_batches:
            return
        batch = data.draw(st.sampled_from(open_batches))
        claimed = batch.claim("w", self.now(), LEASE)
        self.batches[batch.seq] = claimed
        self.held.append((claimed.seq, claimed.claims))

    @precondition(lambda self: self.held)
    @rule(data=st.data(), dies=st.booleans())
    def copy(self, data: st.DataObject, dies: bool) -> None:
        """A worker embeds its batch's chunks (read from the chunk rows), then finishes the
        batch by compare-and-set on its claim; a dead worker never finishes."""
        seq, claims = data.draw(st.sampled_from(self.held))
        self.held.remove((seq, claims))
        batch = self.batches[seq]
        current = self.current
        if current is None or current.status is not ReembeddingStatus.COPYING:
            return
        if batch.claims != claims or batch.status is not CopyBatchStatus.COPYING:
            return  # the claim was lost: nothing is read, nothing written
        chunks = frozenset(c for c in self.required() if within(batch, c))
        self.write(frozenset({current.target_generation}), chunks)
        self.embeds.update((seq, c) for c in chunks)
        if dies:
            return
        self.batches[seq] = batch.finish(len(chunks))
        current.copied(len(chunks))

    @rule(seconds=st.integers(1, 15))
    def time_passes(self, seconds: int) -> None:
        self.tick += seconds

    @precondition(lambda self: self.active_status(ReembeddingStatus.COPYING))
    @rule(size=st.integers(1, 3))
    def finish_copy(self, size: int) -> None:
        """Every batch done: READY if nothing is missing, else the missing chunks join."""
        assert self.current is not None
        if any(b.status is not CopyBatchStatus.DONE for b in self.batches):
            return
        missing = self.missing()
        if missing:
            self.add_catch_up(missing, size)
        else:
            self.current.mark_ready(0, self.now())

    @precondition(lambda self: self.active_status(ReembeddingStatus.READY))
    @rule(size=st.integers(1, 3))
    def swap(self, size: int) -> None:
        """One transaction: the re-embedding SWAPPED and the user's active generation flipped."""
        assert self.current is not None
        missing = self.missing()
        if missing:
            self.add_catch_up(missing, size)
            return
        self.current.swap(0, self.now())
        self.gens = self.gens.swap(self.current.target_generation)
        self.close()

    @precondition(lambda self: self.current is not None and self.current.is_active)
    @rule(fails=st.booleans())
    def cancel(self, fails: bool) -> None:
        assert self.current is not None
        before = dict(self.index.get(self.gens.active, {}))
        target = self.current.target_generation
        if fails:
            self.current.fail("embedder down", self.now())
        else:
            self.current.cancel(self.now())
        self.gens = self.gens.drop_shadow(target)
        self.index.pop(target, None)
        assert self.index.get(self.gens.active, {}) == before, (
            "P4: a cancel touched the old generation"
        )
        self.close()

    @precondition(lambda self: self.current is not None)
    @rule()
    def early_swap_is_refused(self) -> None:
        """P2 in the domain: a swap with a missing chunk, or from another status, is refused
        and changes nothing."""
        assert self.current is not None
        missing = len(self.missing())
        if self.current.status is ReembeddingStatus.READY and not missing:
            return
        version = self.current.version
        try:
            self.current.swap(missing, self.now())
        except (IllegalReembeddingMove, NotCaughtUp):
            pass
        else:
            raise AssertionError("P2: a swap was accepted with missing chunks or out of READY")
        assert self.current.version == version

    @rule()
    def collect_old_generations(self) -> None:
        """After the grace period: generations neither active nor shadow lose their points."""
        for generation in list(self.index):
            if generation not in self.gens.write_targets:
                del self.index[generation]

    # -- properties -------------------------------------------------------------------------

    @invariant()
    def search_answers_from_one_complete_generation(self) -> None:
        searched = self.index.get(self.gens.active, {})
        lost = self.required() - set(searched)
        assert not lost, f"P1: generation {self.gens.active} lacks SUCCESS chunks {sorted(lost)}"
        for generation, points in self.index.items():
            spaces = set(points.values())
            assert spaces <= {self.dimensions[generation]}, f"P1: mixed spaces in {generation}"

    @invariant()
    def swapped_ones_were_complete(self) -> None:
        if self.finished and self.finished[-1].status is ReembeddingStatus.SWAPPED:
            assert self.finished[-1].target_generation == self.gens.active or self.current

    @invariant()
    def cancelled_generations_are_empty(self) -> None:
        for done in self.finished:
            if done.status in (ReembeddingStatus.CANCELLED, ReembeddingStatus.FAILED):
                assert not self.index.get(done.target_generation), "P4: new generation kept"

    @invariant()
    def progress_is_bounded_and_copies_counted(self) -> None:
        if self.current is None:
            return
        assert 0 <= self.current.done <= self.current.total
        for (seq, chunk), copies in self.embeds.items():
            assert copies <= self.batches[seq].claims, f"P5: {chunk} embedded {copies} times"

    @invariant()
    def generations_are_consistent(self) -> None:
        if self.current is None:
            assert self.gens.shadow is None
        else:
            assert self.gens.shadow == self.current.target_generation
            assert self.gens.active == self.current.source_generation


__all__ = ["ReembeddingMachine"]
