"""CommitWindow: with tasks of one partition finishing in any order, the committed position
never passes an unsettled offset, only moves forward, and reaches the end once all settle."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ragline.adapters.messaging.kafka.offsets import CommitWindow, PartitionOffsets


@st.composite
def schedules(draw: st.DrawFn) -> tuple[list[int], list[tuple[str, int]]]:
    """Increasing offsets (with gaps, as compaction and transaction markers leave them) and
    an interleaving of deliveries and settlements: each offset is delivered before it is
    settled, deliveries in offset order, settlements in any order; some stay unsettled."""
    gaps = draw(st.lists(st.integers(1, 3), min_size=1, max_size=40))
    start = draw(st.integers(0, 1_000))
    offsets = [start + sum(gaps[:i]) for i in range(len(gaps))]
    settle_order = draw(st.permutations(offsets))
    keep_open = draw(st.sets(st.sampled_from(offsets), max_size=len(offsets) // 3))
    steps: list[tuple[str, int]] = []
    delivered = 0
    pending_settles = [o for o in settle_order if o not in keep_open]
    while delivered < len(offsets) or pending_settles:
        ready = [
            o
            for o in pending_settles
            if o < (offsets[delivered] if delivered < len(offsets) else 1 << 62)
        ]
        if delivered < len(offsets) and (not ready or draw(st.booleans())):
            steps.append(("deliver", offsets[delivered]))
            delivered += 1
            continue
        choice = draw(st.sampled_from(ready))
        pending_settles.remove(choice)
        steps.append(("settle", choice))
    return offsets, steps


@given(schedules())
def test_never_commits_past_an_unsettled_offset(
    schedule: tuple[list[int], list[tuple[str, int]]],
) -> None:
    _, steps = schedule
    window = CommitWindow()
    delivered: set[int] = set()
    settled: set[int] = set()
    last = -1
    for action, offset in steps:
        if action == "deliver":
            window.delivered(offset)
            delivered.add(offset)
            continue
        settled.add(offset)
        position = window.settled(offset)
        if position is None:
            continue
        assert position > last, "a commit went backwards or repeated"
        last = position
        unsettled_below = {o for o in delivered - settled if o < position}
        assert not unsettled_below, f"committed {position} past unsettled {unsettled_below}"
        assert window.in_flight == len(delivered - settled)


@given(schedules())
def test_commits_everything_once_all_settle(
    schedule: tuple[list[int], list[tuple[str, int]]],
) -> None:
    offsets, steps = schedule
    window = CommitWindow()
    for action, offset in steps:
        if action == "deliver":
            window.delivered(offset)
        else:
            window.settled(offset)
    open_offsets = sorted({o for o in offsets} - {o for a, o in steps if a == "settle"})
    for offset in open_offsets:  # the rest finish, in order or not, it does not matter
        window.settled(offset)
    assert window.in_flight == 0
    assert window.committed == offsets[-1] + 1


@given(schedules())
def test_the_lowest_open_offset_holds_the_commit(
    schedule: tuple[list[int], list[tuple[str, int]]],
) -> None:
    """While offset o runs, the committed position stays at most o, so a crash replays o."""
    offsets, steps = schedule
    window = CommitWindow()
    unsettled = set(offsets) - {o for a, o in steps if a == "settle"}
    for action, offset in steps:
        if action == "deliver":
            window.delivered(offset)
        else:
            window.settled(offset)
    if unsettled:
        assert window.committed is None or window.committed <= min(unsettled)


def test_a_revoked_partition_starts_a_new_epoch() -> None:
    offsets: PartitionOffsets[str] = PartitionOffsets()
    assert offsets.delivered("p0", 5) == 0
    offsets.revoked({"p0"})
    assert offsets.epoch["p0"] == 1
    assert offsets.settled("p0", 5) is None  # the old assignment's window is gone
    assert offsets.delivered("p0", 5) == 1
    assert offsets.settled("p0", 5) == 6
