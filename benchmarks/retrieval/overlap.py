"""Mean lexical overlap of a gold set with its passages: how much a question reuses the words.

    .venv/bin/python -m benchmarks.retrieval.overlap GOLD.jsonl DATA_DIR

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


def overlaps(gold: Path, data_dir: Path) -> list[float]:
    db = sqlite3.connect(data_dir / "ragline.db")
    rows = db.execute("SELECT text FROM chunk ORDER BY parent_id IS NULL").fetchall()
    passages = [normalise_whitespace(t) for (t,) in rows]  # children first
    tokenizer = JiebaTokenizer()
    values: list[float] = []
    for line in gold.read_text("utf-8").splitlines():
        item = json.loads(line)
        snippet = normalise_whitespace(item["relevant_snippet"])
        passage = next((p for p in passages if snippet in p), None)
        if passage is None:
            raise SystemExit(f"{item['id']}: snippet not in any passage of {data_dir}")
        question = set(tokenizer.tokenize(item["query"]))
        values.append(len(question & set(tokenizer.tokenize(passage))) / max(1, len(question)))
    return values


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("gold", type=Path, nargs="+")
    ap.add_argument("--data-dir", type=Path, required=True)
    args = ap.parse_args()
    for gold in args.gold:
        values = overlaps(gold, args.data_dir)
        print(f"{gold.name}: {len(values)} questions, mean overlap {statistics.fmean(values):.3f}")


if __name__ == "__main__":
    main()
