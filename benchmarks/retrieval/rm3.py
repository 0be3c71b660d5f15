"""Pseudo-relevance feedback for BM25 (RM3), measured before it is built: the share of
questions whose answer is in the BM25 top 40 / 100 / 200, with and without the expansion.

    .venv/bin/python -m benchmarks.retrieval.rm3 DATA_DIR GOLD.jsonl [GOLD.jsonl ...]

DATA_DIR is a `ragline ingest` data dir with the embedded Tantivy index (an index built with
the constant embedder is exact for BM25: benchmarks.retrieval.constant_embeddings). The
first row re-runs the product's BM25 query (one Should clause per distinct query token, as
the Tantivy adapter builds it) and reproduces `ragline eval`'s bm25 candidate recall; the
others expand the query with RM3 as Anserini runs it (Lavrenko and Croft 2001; Abdul-Jaleel
et al. 2004): the first `docs` hits weighted by their normalised exp(score), P(w|D) from
each hit's indexed tokens, the `terms` heaviest terms whose document frequency is at most
10 % of the index (so no function word is added), mixed with the original query at weight
`alpha` and searched again with each term boosted by its weight. An answer counts when its
snippet is in the hit's text or its parent's, as in `ragline eval`.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import sqlite3
from pathlib import Path
from typing import Any

import tantivy

from ragline.adapters.keyword_index.tantivy.index import build_schema
from ragline.adapters.tokenizer.jieba.tokenizer import JiebaTokenizer
from ragline.domain.evaluation.relevance import contains_snippet

DEPTHS = (40, 100, 200)
SETTINGS = ((10, 10, 0.5), (5, 10, 0.5), (3, 10, 0.5), (10, 20, 0.5), (10, 10, 0.7), (10, 10, 0.3))
"""(docs, terms, alpha): Anserini's defaults (10, 10, 0.5) and their neighbours."""
MAX_DF = 0.1

Hit = tuple[str, float, str]  # chunk id, BM25 score, indexed tokens


class Probe:
    def __init__(self, data: Path) -> None:
        self._index = tantivy.Index(build_schema(), path=str(data / "tantivy"), reuse=True)
        self._searcher = self._index.searcher()
        self._docs = self._searcher.num_docs
        self._df: dict[str, int] = {}
        with sqlite3.connect(data / "ragline.db") as db:
            rows = db.execute("SELECT chunk_id, text, parent_id FROM chunk WHERE live").fetchall()
        self.text = {cid: text for cid, text, _ in rows}
        self.parent = {cid: parent for cid, _, parent in rows}

    def search(self, weights: dict[str, float], limit: int) -> list[Hit]:
        schema = self._index.schema
        clauses = [
            (
                tantivy.Occur.Should,
                tantivy.Query.boost_query(tantivy.Query.term_query(schema, "text", t), w),
            )
            for t, w in weights.items()
        ]
        found = self._searcher.search(tantivy.Query.boolean_query(clauses), limit, count=False)
        hits: list[Hit] = []
        for score, address in found.hits:
            stored = self._searcher.doc(address)
            chunk_id = stored["chunk_id"][0]
            chunk_id = chunk_id.decode() if isinstance(chunk_id, bytes) else chunk_id
            hits.append((chunk_id, score, stored["text"][0]))
        return hits

    def rm3(self, terms: list[str], docs: int, count: int, alpha: float) -> dict[str, float]:
        first = self.search(dict.fromkeys(terms, 1.0), docs)
        query = {t: alpha / len(terms) for t in terms}
        if not first:
            return query
        best = max(score for _, score, _ in first)
        weights = [math.exp(score - best) for _, score, _ in first]
        total = sum(weights)
        model: dict[str, float] = collections.defaultdict(float)
        for (_, _, body), weight in zip(first, weights, strict=True):
            tokens = body.split()
            for term, tf in collections.Counter(tokens).items():
                model[term] += weight / total * tf / len(tokens)
        kept = [
            (term, p)
            for term, p in sorted(model.items(), key=lambda item: -item[1])
            if len(term) > 1 and self._doc_freq(term) <= MAX_DF * self._docs
        ][:count]
        mass = sum(p for _, p in kept) or 1.0
        for term, p in kept:
            query[term] = query.get(term, 0.0) + (1 - alpha) * p / mass
        return query

    def rank(self, question: dict[str, Any], hits: list[Hit]) -> int | None:
        for rank, (chunk_id, _, _) in enumerate(hits, 1):
            parent = self.parent.get(chunk_id)
            parent_text = self.text.get(parent) if parent else None
            if contains_snippet(question["relevant_snippet"], self.text[chunk_id], parent_text):
                return rank
        return None

    def _doc_freq(self, term: str) -> int:
        if term not in self._df:
            self._df[term] = self._searcher.doc_freq("text", term)
        return self._df[term]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("data", type=Path)
    ap.add_argument("gold", type=Path, nargs="+")
    ap.add_argument("--json", type=Path, help="also write the rows here")
    args = ap.parse_args()
    probe = Probe(args.data)
    tokenizer = JiebaTokenizer()
    rows = []
    for gold in args.gold:
        questions = [json.loads(line) for line in gold.read_text().splitlines() if line.strip()]
        print(f"== {gold.name} ({len(questions)} questions)")
        for setting in (None, *SETTINGS):
            ranks = []
            for question in questions:
                terms = list(dict.fromkeys(t for t in tokenizer.tokenize(question["query"]) if t))
                weights = (
                    dict.fromkeys(terms, 1.0) if setting is None else probe.rm3(terms, *setting)
                )
                ranks.append(probe.rank(question, probe.search(weights, max(DEPTHS))))
            name = "bm25"
            if setting is not None:
                name = "rm3 docs {} terms {} alpha {:.1f}".format(*setting)
            recall = {d: sum(1 for r in ranks if r and r <= d) / len(ranks) for d in (10, *DEPTHS)}
            rows.append(
                {
                    "set": gold.name,
                    "setting": name,
                    **{f"in_top_{d}": round(v, 3) for d, v in recall.items()},
                }
            )
            print(
                f"{name:34s} R@10 {recall[10]:.3f}   top 40 / 100 / 200: "
                + " / ".join(f"{recall[d]:.3f}" for d in DEPTHS)
            )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
