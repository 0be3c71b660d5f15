"""Fault injection shared by the fakes: arm a named point to raise on its next calls."""

from __future__ import annotations

from collections import Counter


class Faults:
    """`arm("storage.get", error, times=1)`; each fake calls `check(point)` on entry."""

    def __init__(self) -> None:
        self._armed: dict[str, list[BaseException | None]] = {}
        self._forever: dict[str, BaseException] = {}
        self.hits: Counter[str] = Counter()

    def arm(self, point: str, error: BaseException, times: int | None = 1) -> None:
        """Raise `error` on the next `times` calls of `point` (None: on every call)."""
        if times is None:
            self._forever[point] = error
        else:
            self._armed.setdefault(point, []).extend([error] * times)

    def arm_after(self, point: str, error: BaseException, skip: int) -> None:
        """Let `skip` calls pass, then raise once."""
        self._armed.setdefault(point, []).extend([None] * skip + [error])

    def disarm(self, point: str | None = None) -> None:
        if point is None:
            self._armed.clear()
            self._forever.clear()
        else:
            self._armed.pop(point, None)
            self._forever.pop(point, None)

    def check(self, point: str) -> None:
        self.hits[point] += 1
        if point in self._forever:
            raise self._forever[point]
        queue = self._armed.get(point)
        if queue:
            error = queue.pop(0)
            if not queue:
                del self._armed[point]
            if error is not None:
                raise error
