"""CrashingTracing: a Tracing that kills its own process at one named point.

Points:
- a stage name (`CLEANING` ... `SPARSE_VECTORIZING`): `delay_ms` after the stage begins
  (0: before its PROCESSING is committed; more: inside its work, wherever it then is);
- `after-commit`: as the last stage's span closes, i.e. once the run's terminal state and
  its outbox row are committed and before the relay has published the result.
`nth` picks the n-th time the point is reached in this process, so a campaign can aim at
different tasks. The kill is SIGKILL to the process group when this process leads one (the
parser sandbox dies with it, as it would in a container), else to this process alone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator, Mapping

import attrs

from ragline.application.ports.tracing import Tracing
from ragline.domain.parse_run import LAST_STAGE, Stage

AFTER_COMMIT = "after-commit"
POINTS: tuple[str, ...] = (*(stage.value for stage in Stage), AFTER_COMMIT)


@attrs.frozen
class CrashPoint:
    """Where (`point`), at which passage (`nth`, from 1) and how long after (`delay_ms`)."""

    point: str
    nth: int = 1
    delay_ms: int = 0

    def __attrs_post_init__(self) -> None:
        if self.point not in POINTS:
            raise ValueError(f"unknown crash point {self.point!r}; one of {', '.join(POINTS)}")
        if self.nth < 1 or self.delay_ms < 0:
            raise ValueError("nth must be at least 1 and delay_ms not negative")


def kill_this_process() -> None:
    if os.getpgrp() == os.getpid():
        os.killpg(os.getpid(), signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGKILL)


class CrashingTracing:
    def __init__(
        self, inner: Tracing, crash: CrashPoint, kill: Callable[[], None] = kill_this_process
    ) -> None:
        self.inner = inner
        self.crash = crash
        self._kill = kill
        self._passages = 0
        self._lock = threading.Lock()

    def span(
        self, name: str, attributes: Mapping[str, str | int]
    ) -> contextlib.AbstractContextManager[None]:
        inner = self.inner.span(name, attributes)
        if name != "ragline.stage":
            return inner
        return self._watched(inner, str(attributes.get("ragline.stage", "")))

    @contextlib.contextmanager
    def _watched(
        self, inner: contextlib.AbstractContextManager[None], stage: str
    ) -> Iterator[None]:
        point = self.crash.point
        if point == stage and self._passed():
            if self.crash.delay_ms == 0:
                self._crash()
            else:
                timer = threading.Timer(self.crash.delay_ms / 1000, self._crash)
                timer.daemon = True
                timer.start()
        with inner:
            yield
        if point == AFTER_COMMIT and stage == LAST_STAGE.value and self._passed():
            self._crash()

    def _passed(self) -> bool:
        with self._lock:
            self._passages += 1
            return self._passages == self.crash.nth

    def _crash(self) -> None:
        self._kill()
