"""Mean lexical overlap of a gold set with its passages: how much a question reuses the words.

    .venv/bin/python -m benchmarks.retrieval.overlap GOLD.jsonl --data-dir DATA_DIR
    .venv/bin/python -m benchmarks.retrieval.overlap GOLD.jsonl --chunks DIR   # chunk_corpus output

Per question: |question tokens ∩ passage tokens| / |question tokens| over unique tokens, with
ragline's own tokenizer (jieba for Han text, Unicode words casefolded otherwise), where the
passage is the child chunk holding the answer snippet (what is indexed), else its parent.
Real users' questions sit around 0.2-0.3; a known-item question that copies a sentence ~1.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
from pathlib import Path

from ragline.adapters.tokenizer.jieba import JiebaTokenizer
from ragline.domain.evaluation import normalise_whitespace


def indexed_passages(data_dir: Path) -> list[str]:
    """Every chunk's text in an ingested data dir, children first."""
    db = sqlite3.connect(data_dir / "ragline.db")
    rows = db.execute("SELECT text FROM chunk ORDER BY parent_id IS NULL").fetchall()
    return [normalise_whitespace(t) for (t,) in rows]


def chunked_passages(chunks: Path) -> list[str]:
    """The same from benchmarks.retrieval.chunk_corpus output, children first."""
    children: list[str] = []
    parents: list[str] = []
    for path in sorted(chunks.rglob("*.json")):
        for parent in json.loads(path.read_text("utf-8"))["parents"]:
            parents.append(normalise_whitespace(parent["text"]))
            children += [normalise_whitespace(c["text"]) for c in parent["children"]]
    return children + parents


def overlaps(gold: Path, passages: list[str]) -> list[float]:
    tokenizer = JiebaTokenizer()
    values: list[float] = []
    for line in gold.read_text("utf-8").splitlines():
        item = json.loads(line)
        snippet = normalise_whitespace(item["relevant_snippet"])
        passage = next((p for p in passages if snippet in p), None)
        if passage is None:
            raise SystemExit(f"{item['id']}: snippet not in any passage")
        question = set(tokenizer.tokenize(item["query"]))
        values.append(len(question & set(tokenizer.tokenize(passage))) / max(1, len(question)))
    return values


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("gold", type=Path, nargs="+")
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--data-dir", type=Path, help="an ingested data dir")
    where.add_argument("--chunks", type=Path, help="benchmarks.retrieval.chunk_corpus output")
    args = ap.parse_args()
    passages = indexed_passages(args.data_dir) if args.data_dir else chunked_passages(args.chunks)
    for gold in args.gold:
        values = overlaps(gold, passages)
        print(f"{gold.name}: {len(values)} questions, mean overlap {statistics.fmean(values):.3f}")


if __name__ == "__main__":
    main()
