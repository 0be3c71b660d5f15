"""One ingest, measured from outside: `python -m benchmarks.ingest_memory.child DATA_DIR FILE`.

Runs `ragline ingest`'s path in-process (the container's ingest use case with a worker
alongside, embedded defaults) with the constant embedder, so the peak is the pipeline's and
the parser worker's, not a model's. Its own high-water mark (VmHWM) is read at every stage
change, so each stage's rise of the peak is known. Prints one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from benchmarks.ingest.ragline_run import QuietObserver, ingest
from ragline.domain.parse_run import Stage, StageStatus


def vmhwm_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


class PeakByStage(QuietObserver):
    """The ingest process's VmHWM when each stage ended (its rise: that stage's doing)."""

    def __init__(self) -> None:
        self.peaks: dict[str, float] = {"start": vmhwm_mb()}

    def stage_changed(self, task_id: str, stage: Stage, status: StageStatus) -> None:
        if status is not StageStatus.PROCESSING:
            self.peaks[stage.name] = vmhwm_mb()


def main() -> None:
    data_dir, path = Path(sys.argv[1]), Path(sys.argv[2])
    observer = PeakByStage()
    result = asyncio.run(ingest(data_dir, [path], fake=True, keep_texts=False, observer=observer))
    result.pop("_texts")
    result["ingest_vmhwm_mb_after_stage"] = observer.peaks
    print(json.dumps(result))


if __name__ == "__main__":
    main()
