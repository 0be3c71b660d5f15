"""WriterGate: in-process queueing for SQLite's single write lock.

Every SQLite unit of work begins with BEGIN IMMEDIATE, so two of them never run at once.
Meeting at the lock means polling it (with sleeps), and a waiter often sleeps long after the
holder is done. Connections of one InlineEngine queue here first, FIFO, each holding the
gate from open to close, and the next one starts the moment the previous one closes.
Waiting longer than busy_timeout fails as SQLite would have. Other processes still meet at
the SQLite lock.
"""

from __future__ import annotations

import asyncio
import weakref

from ragline.application.ports.repositories.errors import PersistenceError


class WriterGate:
    """One asyncio.Lock per event loop (a lock belongs to the loop that first waits on it)."""

    def __init__(self, timeout_seconds: float) -> None:
        self._timeout = timeout_seconds
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )
        self._waiting = 0

    @property
    def waiting(self) -> int:
        """Callers queued behind the unit of work holding the gate (tests observe the queue
        through it instead of guessing with sleeps)."""
        return self._waiting

    async def enter(self) -> asyncio.Lock:
        """Wait for the gate; the caller releases the returned lock when it closes."""
        loop = asyncio.get_running_loop()
        lock = self._locks.get(loop)
        if lock is None:
            lock = self._locks[loop] = asyncio.Lock()
        if not lock.locked():
            await lock.acquire()
            return lock
        self._waiting += 1
        try:
            await asyncio.wait_for(lock.acquire(), self._timeout)
        except TimeoutError as error:
            raise PersistenceError(
                f"open unit of work failed: database is locked (waited {self._timeout:g} s "
                "for another unit of work of this process)"
            ) from error
        finally:
            self._waiting -= 1
        return lock
