"""Cut a corpus into parents and children without indexing it (what `ragline chunk --json`
prints, for every file, in one process), to check gold snippets and overlap before an ingest.

    .venv/bin/python -m benchmarks.retrieval.chunk_corpus CORPUS_DIR OUT_DIR

Ingesting the ~34k-children corpus with the e5 model takes hours on two shared cores; the
chunks come out the same either way (the default plan, the same parser), so the question
sets can be checked against them first: benchmarks.retrieval.overlap --chunks OUT_DIR.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from ragline.adapters.inbound.cli.app import run_session
from ragline.application.chunking.preview import preview_json
from ragline.bootstrap.container import container_for
from ragline.bootstrap.entry import entry_for


def chunk_corpus(corpus: Path, out: Path) -> int:
    """Write OUT/<relative path>.json for every file under `corpus`; returns the file count."""
    files = sorted(p for p in corpus.rglob("*") if p.is_file())
    with tempfile.TemporaryDirectory() as scratch:
        entry = entry_for(container_for(Path(scratch)))

        async def main() -> int:
            preview = await entry.use_cases.preview_chunks()
            for path in files:
                target = out / path.relative_to(corpus).with_suffix(".json")
                target.parent.mkdir(parents=True, exist_ok=True)
                kind = path.suffix.lower().lstrip(".") or "txt"
                result = await preview.file(path.read_bytes(), kind, "default")
                target.write_text(json.dumps(preview_json(result), ensure_ascii=False), "utf-8")
            return len(files)

        return run_session(entry, main)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("out", type=Path)
    args = ap.parse_args()
    print(f"{chunk_corpus(args.corpus, args.out)} files -> {args.out}")


if __name__ == "__main__":
    main()
