"""Grid search of fusion weights and post-fusion steps on dev gold sets, in one process.

    .venv/bin/python -m benchmarks.retrieval.tune --data-dir DIR GOLD.jsonl[@DIR]... [--top 15]
        [--pool 20] [--feedback K:W] [--depths 4:0,4:20] [--weights 1:0.5:0.5]
        [--compressed] [--json OUT]

Traces every question once through HybridSearch.trace_many (each retriever's `--pool` x 10
candidates; 4 x 10 = 40 by default, as `ragline eval` sees them), then re-fuses those lists
under each setting with the application's own fusion and evidence functions and scores them
with the domain's metrics. A setting's per-retriever depth (candidates_per_retriever,
dense_candidates) cuts each traced list to its pool first, so one deep trace measures every
shallower pool. `GOLD@DIR` reads that gold set against another data dir (the large set's
questions and the small known-item guard in one objective). `--feedback K:W` traces with
Rocchio feedback on (it changes the dense list itself, so it cannot be re-fused from a
plain trace). The application scales each list over its own candidates (a common window
was tried and measured worse on the large set: docs/retrieval.md). `--compressed` scores
every setting a second time with each list's top kept at its z-score over the lexical
pools' depth and its deep tail squeezed between that and its last score (a prototype, not in
the application: `compressed_zscore`). `--json`
writes every setting's figures per gold set (not only the printed top), best first. Only tune
on dev sets; confirm the pick with `ragline eval` (benchmarks.retrieval.run).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import math
from pathlib import Path
from typing import Any

import attrs

from ragline.adapters.inbound.cli.evaluate import read_gold
from ragline.application.evaluation import GoldQuestion
from ragline.application.health import obtain
from ragline.application.search.evidence import by_parent, dedupe
from ragline.application.search.fusion import score_fusion
from ragline.application.search.tuning import FUSIONS, SearchTuning
from ragline.application.search.use_case import SearchTrace, fuse
from ragline.bootstrap.container import container_for
from ragline.bootstrap.entry import shut_down
from ragline.domain.evaluation import mean_scores, score_ranking

TOP_K = 10


async def traces(
    golds: list[tuple[Path, Path]], tuning: SearchTuning
) -> dict[str, list[tuple[GoldQuestion, Any]]]:
    """Each gold set's questions with their traces, from its own data dir."""
    out: dict[str, list[tuple[GoldQuestion, Any]]] = {}
    for data_dir in dict.fromkeys(d for _, d in golds):
        container = container_for(data_dir)
        try:
            search = await obtain(container.hybrid_search)
            search.tuning = tuning
            for gold, where in golds:
                if where != data_dir:
                    continue
                questions = read_gold(gold)
                got: list[SearchTrace] = []
                for start in range(0, len(questions), 32):
                    batch = questions[start : start + 32]
                    got += await search.trace_many([q.query for q in batch], "1", "1", TOP_K)
                out[gold.stem] = list(zip(questions, got, strict=True))
        finally:
            await shut_down(container)
    return out


def compressed_zscore(
    scored: dict[str, list[tuple[str, float]]], tuning: SearchTuning, window: int
) -> list[tuple[str, float]]:
    """Z-score fusion where a list deeper than `window` keeps its top's value at the window's
    (top - window floor) / window deviation, and every score maps linearly between that and 0
    at its last score: the deep tail adds candidates below the window's floor without lifting
    the top. That is min-max fusion (`score_fusion`) with each list's weight multiplied by its
    top's window z-score; a list no deeper than the window scores as plain z-score fusion."""
    weights = dict(tuning.weights)
    for name, ranked in scored.items():
        head = [v for _, v in ranked[:window]]
        if not head:
            continue
        mean = math.fsum(head) / len(head)
        spread = math.sqrt(math.fsum((v - mean) ** 2 for v in head) / len(head))
        top = max(v for _, v in ranked)
        weights[name] = weights.get(name, 1.0) * (
            0.0 if spread == 0 else (top - min(head)) / spread
        )
    return score_fusion(scored, weights=weights)


def final_hits(trace: SearchTrace, tuning: SearchTuning, *, compressed: bool = False) -> list[Any]:
    """The top_k the search would answer with under `tuning`; `compressed` uses
    `compressed_zscore` instead of the application's fusion (z-score settings only)."""
    hydrated = {h.chunk_id: h for hits in trace.rankings.values() for h in hits}
    scored = {
        name: [(h.chunk_id, h.score) for h in trace.rankings[name][: tuning.pool(name, TOP_K)]]
        for name in ("dense", "sparse", "bm25")
    }
    if compressed and tuning.fusion == "zscore":
        fused = compressed_zscore(scored, tuning, tuning.pool("bm25", TOP_K))
    else:
        fused = fuse(scored, tuning)
    hits = [attrs.evolve(hydrated[i], score=s) for i, s in fused]
    if tuning.parent_evidence:
        hits = by_parent(hits, tuning.sibling_bonus)
    if tuning.dedupe:
        hits = dedupe(hits)
    return hits[:TOP_K]


def grid(depths: list[tuple[int, int]]) -> list[SearchTuning]:
    out = []
    for fusion, dense, sparse, bm25, k in itertools.product(
        FUSIONS, (1.0, 1.5, 2.0, 3.0, 4.0), (0.0, 0.5, 1.0), (0.5, 1.0), (60, 20)
    ):
        if fusion != "rrf" and k != 60:
            continue
        for (lexical, deep), (parent, bonus) in itertools.product(
            depths, ((False, 0.0), (True, 0.0), (True, 0.2))
        ):
            out.append(
                SearchTuning(
                    candidates_per_retriever=lexical,
                    dense_candidates=deep,
                    weights={"dense": dense, "sparse": sparse, "bm25": bm25},
                    rrf_k=k,
                    fusion=fusion,
                    parent_evidence=parent,
                    sibling_bonus=bonus,
                )
            )
    return out


def describe(t: SearchTuning) -> str:
    w = t.weights
    parent = f" parent+{t.sibling_bonus}" if t.parent_evidence else ""
    k = f" k={t.rrf_k}" if t.fusion == "rrf" else ""
    pools = f" pool {t.candidates_per_retriever}/{t.dense_candidates or t.candidates_per_retriever}"
    return f"{t.fusion}{k} d{w['dense']} s{w['sparse']} b{w['bm25']}{parent}{pools}"


def _gold_and_dir(arg: str, default: Path) -> tuple[Path, Path]:
    gold, _, data_dir = arg.partition("@")
    return Path(gold), Path(data_dir) if data_dir else default


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("gold", nargs="+", help="GOLD.jsonl, or GOLD.jsonl@DATA_DIR")
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--fusion", choices=FUSIONS, help="only this fusion")
    ap.add_argument("--pool", type=int, default=4, help="traced depth, x top_k (10)")
    ap.add_argument("--weights", default="", help="only these D:S:B weights, e.g. 1:0.5:0.5")
    ap.add_argument("--depths", default="", help="LEXICAL:DENSE pools to try, e.g. 4:4,4:20")
    ap.add_argument("--feedback", default="", help="K:W, trace with Rocchio feedback")
    ap.add_argument(
        "--compressed", action="store_true", help="also each setting with compressed_zscore"
    )
    ap.add_argument("--json", type=Path, help="write every setting's figures here")
    args = ap.parse_args()
    golds = [_gold_and_dir(str(g), args.data_dir) for g in args.gold]
    k, w = args.feedback.split(":") if args.feedback else ("0", "0.5")
    traced = SearchTuning(
        candidates_per_retriever=args.pool, dense_feedback=int(k), feedback_weight=float(w)
    )
    sets = asyncio.run(traces(golds, traced))
    pairs = [d.split(":") for d in args.depths.split(",") if d]
    depths = [(int(a), int(b)) for a, b in pairs] or [(4, 0)]
    rows = []
    only = [tuple(float(x) for x in w.split(":")) for w in args.weights.split(",") if w]
    tried = [
        t
        for t in grid(depths)
        if args.fusion in (None, t.fusion)
        and (not only or tuple(t.weights[n] for n in ("dense", "sparse", "bm25")) in only)
    ]
    modes = (False, True) if args.compressed else (False,)
    for tuning, compressed in [(SearchTuning(), False), *itertools.product(tried, modes)]:
        figures = {}
        for name, pairs in sets.items():
            mean = mean_scores(
                score_ranking(q.found(final_hits(t, tuning, compressed=compressed)), q.relevant)
                for q, t in pairs
            )
            figures[name] = mean
        rows.append((tuning, compressed, figures))
    paraphrased = [n for n in sets if "known" not in n]
    known = [n for n in sets if "known" in n]

    def objective(row: tuple[SearchTuning, bool, dict[str, Any]]) -> float:
        f = row[2]
        gain = sum(f[n].recall_at(5) + f[n].mrr for n in paraphrased)
        penalty = sum(max(0.0, 0.95 - f[n].recall_at(1)) * 4 for n in known)
        return float(gain - penalty)

    baseline = rows[0]
    rows.sort(key=objective, reverse=True)

    def label(tuning: SearchTuning, compressed: bool) -> str:
        return describe(tuning) + (" compressed" if compressed else "")

    for tuning, compressed, f in [baseline, *rows[: args.top]]:
        cells = "  ".join(
            f"{n}: R@1 {f[n].recall_at(1):.3f} R@5 {f[n].recall_at(5):.3f} MRR {f[n].mrr:.3f}"
            for n in sets
        )
        print(f"{label(tuning, compressed):45} {cells}")
    if args.json:
        out = [
            {
                "setting": label(row[0], row[1]),
                "default": row is baseline,
                "objective": round(objective(row), 4),
                "sets": {
                    n: {
                        "R@1": round(row[2][n].recall_at(1), 4),
                        "R@5": round(row[2][n].recall_at(5), 4),
                        "R@10": round(row[2][n].recall_at(10), 4),
                        "MRR@10": round(row[2][n].mrr, 4),
                    }
                    for n in sets
                },
            }
            for row in rows  # best first; the defaults' row is among them, marked
        ]
        args.json.write_text(json.dumps(out, indent=1) + "\n", "utf-8")


if __name__ == "__main__":
    main()
