"""NicedThread runs its work on one thread at the nice it was given (Linux: ragline's
platform; the thread's own nice), off the event loop."""

from __future__ import annotations

import os
import threading

import pytest

from ragline.adapters.background_work.niced_thread import NicedThread


async def test_the_work_runs_at_the_given_nice_and_the_caller_keeps_its_own() -> None:
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    work = NicedThread(mine + 5)
    try:
        seen = await work.run(lambda: (os.getpriority(os.PRIO_PROCESS, 0), threading.get_ident()))
        again = await work.run(lambda: threading.get_ident())
    finally:
        work.close()
    assert seen[0] == min(mine + 5, 19)
    assert seen[1] == again != threading.get_ident()  # one thread, not the loop's
    assert os.getpriority(os.PRIO_PROCESS, 0) == mine


async def test_an_error_in_the_work_reaches_the_caller() -> None:
    work = NicedThread(0)

    def fails() -> None:
        raise ValueError("model refused")

    try:
        with pytest.raises(ValueError, match="model refused"):
            await work.run(fails)
    finally:
        work.close()
