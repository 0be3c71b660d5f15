"""The peer as a process of its own, as a user runs a script: `python -m
benchmarks.ingest_cli.llama_child OUT_DIR PAGE...`. LlamaIndex's IngestionPipeline with
MockEmbedding(384) + Qdrant local on the pages (benchmarks.ingest.llama_run); its imports
and start-up are inside the wall time the parent measures. Prints its own figures as JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from benchmarks.ingest.llama_run import ingest


def main() -> None:
    out, pages = Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]]
    result = ingest(pages, out, 10, mock=True)
    result.pop("_texts", None)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
