"""Peak memory of one ingest: `python -m benchmarks.ingest.rss_child DATA_DIR FILE`.

Runs in its own process, with the constant embedder. Its peak is VmHWM from /proc (the
memory map's high-water mark, fresh after exec): ru_maxrss is not, Linux carries the
forking parent's peak across exec, so a child of the big benchmark process would report
the parent's RSS. The parser sandbox worker is kept warm, so it is never waited for and
would not show in RUSAGE_CHILDREN: its VmHWM is read while it still runs. Prints one JSON
line.
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
from pathlib import Path

import psutil  # type: ignore[import-untyped]

from benchmarks.ingest.ragline_run import ingest


def _vmhwm_mb(pid: int | str = "self") -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return 0.0


def main() -> None:
    data_dir, path = Path(sys.argv[1]), Path(sys.argv[2])
    result = asyncio.run(ingest(data_dir, [path], fake=True, keep_texts=False))
    workers = psutil.Process().children(recursive=True)  # the warm parser sandbox worker
    result.pop("_texts")
    result["self_vmhwm_mb"] = _vmhwm_mb()
    result["self_maxrss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    result["children_maxrss_mb"] = round(
        resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1
    )
    result["worker_vmhwm_mb"] = max((_vmhwm_mb(w.pid) for w in workers), default=0.0)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
