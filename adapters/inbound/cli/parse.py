"""`ragline parse FILE_OR_REF`: ask the parse cache for a document's Markdown
(docs/design/0003-parse-cache.md).

Plans the request (done pages reused unless `--force`, active batches reused, the rest in new
batches) and, with `--json`, prints the response `POST /api/v1/parses` gives. `--wait` waits
on exactly the request's `wait_parse_ids` — running them in this process, sharing them with
any `ragline worker`/`serve` on the same store — and then writes the Markdown; any failed
batch fails the command (exit 1) even when older cached pages exist; after `--timeout` it
lists the unfinished batches (exit 124). With `--json` stdout is one JSON document whatever
happens (the response, or with `--wait` the final state with the Markdown in `markdown` or
the file in `output`), so it pipes into `jq`. Without `--wait` the batches are left to the
workers (or to a later `ragline parse --wait`). The operator is the service: it sees every
batch and records no holder (docs/security.md, "Parse cache visibility").
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich.console import Console

from ragline.adapters.inbound.cli.app import DATA_DIR_OPTION, app, entry_of, run_session
from ragline.application.access import Caller
from ragline.application.parsing import (
    LocalSource,
    PageRangeOutOfBounds,
    ParseBatchRunner,
    ParseResponse,
    ReadParse,
    SubmitParse,
    Submitted,
    UnknownDocument,
)
from ragline.application.ports.parser import ParseError
from ragline.domain.parse_batch import PageRange, ParseTier, RequestStatus

err = Console(stderr=True)
TIMED_OUT = 124
OPERATOR = Caller.service()


def response_json(response: ParseResponse) -> dict[str, object]:
    """The same fields as the HTTP response of POST /api/v1/parses."""
    return {
        "sha256": response.sha256,
        "tier": response.tier.value,
        "page_range": str(response.page_range),
        "status": response.status.value,
        "wait_parse_ids": list(response.wait_parse_ids),
        "created_parse_ids": list(response.created_parse_ids),
        "reused_parse_ids": list(response.reused_parse_ids),
    }


def _pages(text: str | None) -> PageRange | None:
    if text is None:
        return None
    try:
        return PageRange.parse(text)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--pages") from None


class ParseOutcome:
    def __init__(self) -> None:
        self.code = 0
        self.markdown: str | None = None
        self.state: dict[str, object] = {}
        """With --json: the one document stdout gets (the response, then the final state)."""


@app.command()
def parse(
    ctx: typer.Context,
    target: str = typer.Argument(
        ..., metavar="FILE_OR_REF", help="A local file, a sha256 the cache knows, or bucket/key."
    ),
    tier: ParseTier = typer.Option(ParseTier.BASIC, "--tier", help="basic or quality."),
    pages: str | None = typer.Option(None, "--pages", help="N or N-M (1-based); default all."),
    force: bool = typer.Option(False, "--force", help="Skip the done cache (not active batches)."),
    wait: bool = typer.Option(False, "--wait", help="Run/wait for the batches, write Markdown."),
    timeout: float = typer.Option(600.0, "--timeout", min=0.1, help="Seconds --wait waits."),
    as_json: bool = typer.Option(
        False, "--json", help="Print one JSON document: the response, or the final state."
    ),
    output: Path | None = typer.Option(None, "--output", "-o", help="Markdown file to write."),
    file_type: str | None = typer.Option(None, "--type", help="File type if not the extension."),
    data_dir: Path | None = DATA_DIR_OPTION,
) -> None:
    """Parse a file through the parse cache: identical bytes at the same tier parse once."""
    page_range = _pages(pages)
    entry = entry_of(ctx, data_dir)
    result = ParseOutcome()

    async def main() -> None:
        submit: SubmitParse = await entry.use_cases.submit_parse()
        local: LocalSource | None = None
        try:
            path = Path(target)
            if path.is_file():
                submitted, local = await submit.file(
                    path, tier, page_range, file_type=file_type, force=force, holder=None
                )
            else:
                submitted = await submit.ref(
                    target, tier, page_range, file_type=file_type, force=force, caller=OPERATOR
                )
        except PageRangeOutOfBounds as error:
            raise typer.BadParameter(str(error), param_hint="--pages") from None
        except (UnknownDocument, ParseError) as error:
            raise typer.BadParameter(str(error), param_hint="FILE_OR_REF") from None
        response = submitted.response
        result.state = response_json(response)
        if not wait:
            if not as_json:
                _describe(response)
            return
        await _wait(submitted, local)

    async def _wait(submitted: Submitted, local: LocalSource | None) -> None:
        response = submitted.response
        runner: ParseBatchRunner = await entry.use_cases.parse_batch_runner()
        reader: ReadParse = await entry.use_cases.read_parse()
        if response.wait_parse_ids:
            try:
                ended = await runner.run_ids(response.wait_parse_ids, local, timeout=timeout)
            except TimeoutError:
                waited = await reader.batches(response.wait_parse_ids, caller=OPERATOR)
                left = [b for b in waited if b.is_active]
                listed = ", ".join(f"{b.id} {b.status.value} (pages {b.page_range})" for b in left)
                err.print(f"[red]timed out after {timeout:g} s; unfinished: {listed}[/red]")
                result.code = TIMED_OUT
                result.state["timed_out"] = True
                result.state["unfinished"] = [
                    {"id": b.id, "status": b.status.value, "page_range": str(b.page_range)}
                    for b in left
                ]
                return
            result.state["status"] = ended.status.value
            if ended.status is RequestStatus.FAILED:
                err.print(f"[red]{ended.message}[/red]")
                result.code = 1
                result.state["error"] = ended.message
                return
        cached = await reader.markdown(
            response.sha256, response.tier, response.page_range, caller=OPERATOR
        )
        result.state["status"] = RequestStatus.DONE.value
        result.markdown = cached.markdown

    run_session(entry, main)
    if result.markdown is not None:
        if output is not None:
            output.write_text(result.markdown, encoding="utf-8")
            err.print(f"wrote {len(result.markdown)} characters to {output}")
            result.state["output"] = str(output)
        elif as_json:
            result.state["markdown"] = result.markdown
        else:
            sys.stdout.write(
                result.markdown if result.markdown.endswith("\n") else result.markdown + "\n"
            )
    if as_json and result.state:
        sys.stdout.write(json.dumps(result.state, ensure_ascii=False) + "\n")
    if result.code:
        raise typer.Exit(result.code)


def _describe(response: ParseResponse) -> None:
    waiting = ", ".join(map(str, response.wait_parse_ids)) or "nothing (cached)"
    err.print(
        f"{response.sha256[:12]} {response.tier.value} pages {response.page_range}: "
        f"{response.status.value}; waiting on {waiting}"
    )
