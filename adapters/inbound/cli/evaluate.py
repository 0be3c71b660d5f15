"""`ragline eval GOLD.jsonl`: R@1/5/10, MRR@10 and nDCG@10 per retriever, and the misses.

One JSON object per line: {"id", "query", "relevant_snippet"} (or "relevant_doc_ids" /
"relevant_chunk_ids", lists). Decoded here, at the edge; the use case gets GoldQuestions.
Candidate recall at depth 40 / 100 / 200 per retriever needs a pool that deep:
RAGLINE_SEARCH_CANDIDATES=20 with the default --top-k 10 gives 200 candidates each.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from ragline.adapters.inbound.cli.app import DATA_DIR_OPTION, app, entry_of, run_session
from ragline.application.evaluation import (
    RANKINGS,
    DegradedEvaluation,
    EvaluationReport,
    GoldQuestion,
)
from ragline.application.search.use_case import NoEmbeddingConfig, SearchUnavailable

console = Console()


def _ids(value: object, name: str) -> frozenset[str]:
    if value is None:
        return frozenset()
    if not isinstance(value, list) or not value:
        raise ValueError(f"{name} must be a non-empty list")
    return frozenset(str(v) for v in value)


def read_gold(path: Path) -> list[GoldQuestion]:
    """The questions of a gold JSONL file; a bad line is a clear error naming it."""
    questions: list[GoldQuestion] = []
    seen: set[str] = set()
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                if not isinstance(item, dict):
                    raise ValueError("expected a JSON object")
                snippet = item.get("relevant_snippet")
                question = GoldQuestion(
                    id=str(item["id"]),
                    query=str(item["query"]),
                    snippet=None if snippet is None else str(snippet),
                    doc_ids=_ids(item.get("relevant_doc_ids"), "relevant_doc_ids"),
                    chunk_ids=_ids(item.get("relevant_chunk_ids"), "relevant_chunk_ids"),
                )
            except (ValueError, KeyError, TypeError) as error:
                raise typer.BadParameter(
                    f"{path}:{number}: expected {{'id', 'query', 'relevant_snippet'}}: {error}"
                ) from error
            if question.id in seen:
                raise typer.BadParameter(f"{path}:{number}: duplicate id {question.id!r}")
            seen.add(question.id)
            questions.append(question)
    if not questions:
        raise typer.BadParameter(f"{path}: no questions")
    return questions


def report_json(report: EvaluationReport) -> dict[str, object]:
    """The documented `--json` shape."""
    return {
        "questions": report.questions,
        "top_k": report.top_k,
        "in_candidates": round(report.in_candidates, 4),
        "candidate_recall": {
            name: {str(depth): round(v, 4) for depth, v in depths.items()}
            for name, depths in report.candidate_recall.items()
        },
        "retrievers": {
            name: {
                "R@1": round(s.recall[0], 4),
                "R@5": round(s.recall[1], 4),
                "R@10": round(s.recall[2], 4),
                "MRR@10": round(s.mrr, 4),
                "nDCG@10": round(s.ndcg, 4),
            }
            for name, s in report.scores.items()
        },
        "misses": [
            {
                "id": m.id,
                "query": m.query,
                "expected": m.expected,
                "ranks": dict(m.ranks),
                "top_hit": None
                if m.top_hit is None
                else {
                    "chunk_id": m.top_hit.chunk_id,
                    "source": m.top_hit.source,
                    "section_path": list(m.top_hit.section_path),
                    "text": m.top_hit.text,
                },
            }
            for m in report.misses
        ],
    }


def _show(report: EvaluationReport, misses: int) -> None:
    table = Table(title=f"{report.questions} questions, top {report.top_k}")
    for column in ("retriever", "R@1", "R@5", "R@10", "MRR@10", "nDCG@10"):
        table.add_column(column, justify="left" if column == "retriever" else "right")
    for name in RANKINGS:
        s = report.scores[name]
        figures = (*s.recall, s.mrr, s.ndcg)
        table.add_row(name, *(f"{f:.3f}" for f in figures))
    console.print(table)
    console.print(f"answer among any retriever's candidates: {report.in_candidates:.3f}")
    for name, depths in report.candidate_recall.items():
        shown = ", ".join(f"top {d} {v:.3f}" for d, v in depths.items())
        console.print(f"answer in {name}'s candidates: {shown}", highlight=False)
    if not report.misses:
        return
    console.print(f"\n{len(report.misses)} misses (answer not in the final hits):")
    for miss in report.misses[:misses]:
        top = miss.top_hit
        shown = "(no hits)" if top is None else " ".join(top.text.split())[:160]
        console.print(f"[bold]{miss.id}[/bold] {miss.query}", highlight=False)
        console.print(f"  expected: {' '.join(miss.expected.split())[:160]}", highlight=False)
        console.print(f"  top hit:  {shown}", highlight=False)


@app.command("eval")
def evaluate(
    ctx: typer.Context,
    gold: Path = typer.Argument(..., exists=True, dir_okay=False, help="Gold JSONL file."),
    top_k: int = typer.Option(10, "--top-k", min=1, max=100, help="Final hits per question."),
    user: str = typer.Option("1", "--user", help="Whose documents (user_id)."),
    dataset: str = typer.Option("1", "--dataset", help="Which dataset (dataset_id)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON for scripts."),
    misses: int = typer.Option(20, "--misses", min=0, help="How many misses to print."),
    data_dir: Path | None = DATA_DIR_OPTION,
) -> None:
    """Score search on gold questions: R@1/5/10, MRR@10, nDCG@10 per retriever, and misses."""
    questions = read_gold(gold)
    entry = entry_of(ctx, data_dir)

    async def main() -> EvaluationReport:
        evaluate_retrieval = await entry.use_cases.evaluate_retrieval()
        report: EvaluationReport = await evaluate_retrieval(questions, user, dataset, top_k)
        return report

    try:
        report = run_session(entry, main)
    except NoEmbeddingConfig as error:
        raise typer.BadParameter(
            f"user {user} has indexed nothing (no EMBEDDING model): ingest first"
        ) from error
    except (DegradedEvaluation, SearchUnavailable) as error:
        Console(stderr=True).print(f"[red]cannot evaluate: {error}[/red]")
        raise typer.Exit(1) from None
    if as_json:
        sys.stdout.write(json.dumps(report_json(report), ensure_ascii=False) + "\n")
    else:
        _show(report, misses)
