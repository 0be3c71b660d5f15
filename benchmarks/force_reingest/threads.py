"""CPU seconds per thread name while a block runs, read from /proc/self/task (Linux).

Tantivy's merge threads are native: no Python profiler sees them, and process CPU mixes them
with the pipeline's own. A sampler thread reads every thread's utime + stime each 50 ms and
keeps the last reading per thread; names lose their trailing digits (`merge_thread_3` ->
`merge_thread_`), so a name sums a pool. A thread that ends between two samples loses at
most its last 50 ms.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

TASKS = Path("/proc/self/task")
PERIOD = 0.05


def _read(seen: dict[str, tuple[str, float]], tick: float) -> None:
    for task in TASKS.iterdir():
        try:
            name = (task / "comm").read_text().strip()
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended while being read
            continue
        seen[task.name] = (name.rstrip("0123456789"), (int(fields[11]) + int(fields[12])) / tick)


@contextlib.contextmanager
def thread_cpu() -> Iterator[dict[str, float]]:
    """Yields a dict filled on exit: thread name -> CPU seconds spent inside the block."""
    if not TASKS.is_dir():
        yield {}
        return
    tick = float(os.sysconf("SC_CLK_TCK"))
    before: dict[str, tuple[str, float]] = {}
    _read(before, tick)
    seen = dict(before)
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(PERIOD):
            _read(seen, tick)

    sampler = threading.Thread(target=sample, name="cpu-sampler", daemon=True)
    sampler.start()
    out: dict[str, float] = {}
    try:
        yield out
    finally:
        stop.set()
        sampler.join()
        _read(seen, tick)
        sums: dict[str, float] = defaultdict(float)
        for tid, (name, cpu) in seen.items():
            if name != "cpu-sampler":
                sums[name] += cpu - before.get(tid, (name, 0.0))[1]
        out.update({k: round(v, 2) for k, v in sorted(sums.items(), key=lambda kv: -kv[1]) if v})
