"""`ragline search "..."`: hybrid retrieval with parent context; `--batch` for evaluations."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TextIO

import typer
from rich.console import Console, Group, RenderableType
from rich.markdown import Markdown
from rich.markup import escape
from rich.panel import Panel
from rich.text import Text

from ragline.adapters.inbound.cli.app import DATA_DIR_OPTION, app, entry_of, run_session
from ragline.application.search.tuning import RETRIEVERS
from ragline.application.search.use_case import (
    NoEmbeddingConfig,
    SearchAnswer,
    SearchHit,
    SearchUnavailable,
)
from ragline.domain.metadata import (
    AllOf,
    MetadataError,
    MetadataFilter,
    check_size,
    parse_condition,
)

err = Console(stderr=True)


def explanation(hit: SearchHit) -> dict[str, object]:
    """Why a hit ranks where it does: its rank in each retriever (null: not among its
    candidates) and its fused score (the final score differs after parent evidence or
    re-ranking)."""
    return {
        "ranks": {name: hit.ranks.get(name) for name in RETRIEVERS},
        "fused_score": hit.fused_score,
    }


def _explained(hit: SearchHit) -> str:
    ranks = " · ".join(
        f"{name} #{hit.ranks[name]}" if name in hit.ranks else f"{name} –" for name in RETRIEVERS
    )
    return f"{ranks} · fused {hit.fused_score:.4f}"


def hit_json(hit: SearchHit, explain: bool = False) -> dict[str, object]:
    """The documented `--json` shape of one hit (`explain` adds its "explain" object)."""
    shape: dict[str, object] = {
        "chunk_id": hit.chunk_id,
        "doc_id": hit.doc_id,
        "source": hit.source,
        "section_path": list(hit.section_path),
        "text": hit.text,
        "parent_text": hit.parent_text,
        "score": hit.score,
    }
    if explain:
        shape["explain"] = explanation(hit)
    return shape


def _show(query: str, hits: list[SearchHit], explain: bool) -> None:
    """Each hit's Markdown rendered (a hard-wrapped paragraph reflows to the panel, a table
    aligns), its parent context below it, dimmed."""
    console = Console()
    if not hits:
        console.print(f"no hits for {query!r}")
        return
    for rank, hit in enumerate(hits, start=1):
        where = " > ".join(hit.section_path) or "(no section)"
        body: list[RenderableType] = [Markdown(hit.text)]
        if hit.parent_text and hit.parent_text != hit.text:
            context = (
                hit.parent_text if len(hit.parent_text) <= 600 else hit.parent_text[:600] + "…"
            )
            body += [Text(""), Markdown(context, style="dim")]
        console.print(
            Panel(
                Group(*body),
                title=escape(f"{rank}. {hit.source} — {where}"),
                subtitle=f"score {hit.score:.4f}" + (f" ({_explained(hit)})" if explain else ""),
                title_align="left",
            )
        )


def metadata_filter(texts: list[str]) -> MetadataFilter | None:
    """The `--filter` options as one filter: each one's condition, all of them required."""
    try:
        conditions = [parse_condition(text) for text in texts]
        if not conditions:
            return None
        return conditions[0] if len(conditions) == 1 else check_size(AllOf(tuple(conditions)))
    except MetadataError as error:
        raise typer.BadParameter(str(error), param_hint="--filter") from None


def _read_batch(handle: TextIO) -> list[tuple[str, str]]:
    queries: list[tuple[str, str]] = []
    for number, line in enumerate(handle, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            queries.append((str(item["id"]), str(item["query"])))
        except (ValueError, KeyError, TypeError) as error:
            raise typer.BadParameter(
                f"line {number}: expected {{'id', 'query'}}: {error}"
            ) from error
    return queries


@app.command()
def search(
    ctx: typer.Context,
    query: str | None = typer.Argument(None, help="What to look for."),
    top_k: int = typer.Option(5, "--top-k", min=1, max=100, help="How many hits."),
    user: str = typer.Option("1", "--user", help="Whose documents (user_id)."),
    dataset: str = typer.Option("1", "--dataset", help="Which dataset (dataset_id)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON for scripts."),
    batch: Path | None = typer.Option(
        None, "--batch", help="JSONL file of {id, query}; '-' reads stdin."
    ),
    explain: bool = typer.Option(
        False, "--explain", help="Show each hit's rank in every retriever and its fused score."
    ),
    filters: list[str] = typer.Option(
        [],
        "--filter",
        metavar="CONDITION",
        help=(
            "Only documents whose metadata matches (repeat: all must): key=value,"
            " key=a|b (any of), key>=v, key>v, key<=v, key<v (numbers or YYYY-MM-DD),"
            " key? (has a value), 'A or B'; quote a value to keep it a string: key='\"2020\"'."
        ),
    ),
    data_dir: Path | None = DATA_DIR_OPTION,
) -> None:
    """Dense + sparse + BM25 retrieval, fused by weighted rank; child hits with parents."""
    if (query is None) == (batch is None):
        raise typer.BadParameter("give a QUERY or --batch FILE (not both)")
    where = metadata_filter(filters)
    entry = entry_of(ctx, data_dir)

    def search_many(texts: list[str]) -> list[SearchAnswer]:
        async def main() -> list[SearchAnswer]:
            hybrid_search = await entry.use_cases.hybrid_search()
            try:
                answers: list[SearchAnswer] = await hybrid_search.search_many(
                    texts, user, dataset, top_k, where
                )
            except NoEmbeddingConfig:  # nothing of this user's was ever embedded: no hits
                return [SearchAnswer([]) for _ in texts]
            return answers

        try:
            answers = run_session(entry, main)
        except SearchUnavailable as error:
            err.print(f"[red]search unavailable: {error}[/red]")
            raise typer.Exit(1) from None
        _say_degraded(answers)
        return answers

    if batch is not None:
        with sys.stdin if str(batch) == "-" else batch.open(encoding="utf-8") as handle:
            queries = _read_batch(handle)
        answers = search_many([q for _, q in queries])
        for (query_id, _), answer in zip(queries, answers, strict=True):
            line = {
                "id": query_id,
                "hits": [hit_json(h, explain) for h in answer.hits],
                "degraded": list(answer.degraded),
            }
            sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")
        return
    assert query is not None  # narrows for mypy  # nosec B101
    [answer] = search_many([query])
    if as_json:
        shown = {
            "hits": [hit_json(h, explain) for h in answer.hits],
            "degraded": list(answer.degraded),
        }
        sys.stdout.write(json.dumps(shown, ensure_ascii=False))
        sys.stdout.write("\n")
    else:
        _show(query, answer.hits, explain)


def _say_degraded(answers: list[SearchAnswer]) -> None:
    """On stderr, so stdout stays the answer: which retrievers failed (their engine is down)."""
    missing = [name for name in RETRIEVERS if any(name in a.degraded for a in answers)]
    if missing:
        err.print(
            f"[yellow]search degraded: {', '.join(missing)} unavailable; "
            "hits come from the other retrievers[/yellow]"
        )
