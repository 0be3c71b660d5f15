"""The cases of docs/design/0003-parse-cache.md through `ragline parse`, on SQLite and PostgreSQL:
`--json` prints the POST response, `--wait` waits on exactly wait_parse_ids (running them
in-process), fails when any failed although older cache exists, and lists the unfinished batches on
timeout."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from ragline.adapters.inbound.cli import build_cli
from ragline.application.access import Caller
from ragline.application.health import obtain
from ragline.application.parsing import ReadParse
from ragline.bootstrap.cli import _entry
from ragline.bootstrap.container import container_for
from ragline.domain.parse_batch import PageRange, ParseTier
from tests.parse_cache.conftest import PAGES, OtherWorker, make_pdf


class Cli:
    def __init__(self, settings: dict[str, Any]) -> None:
        self.data_dir = settings["data_dir"]
        self.env = {
            "RAGLINE_DATABASE_URL": settings["database_url"],
            "RAGLINE_PARSE_PAGES_PER_BATCH": str(settings["parse_pages_per_batch"]),
            "RAGLINE_SECRET_KEY": settings["secret_key"],
        }
        self.settings = settings

    def __call__(self, *args: str, **env: str) -> tuple[int, str, str]:
        result = CliRunner().invoke(
            build_cli(_entry),
            ["parse", *args, "--data-dir", str(self.data_dir)],
            env={**self.env, **env},
        )
        return result.exit_code, result.stdout, result.stderr

    def json(self, *args: str, **env: str) -> dict[str, Any]:
        code, out, err = self(*args, "--json", **env)
        assert code == 0, out + err
        found: dict[str, Any] = json.loads(out.splitlines()[0])
        assert found["wait_parse_ids"] == found["reused_parse_ids"] + found["created_parse_ids"]
        return found

    def pages_from(self, sha256: str) -> list[int]:
        """Which batch each page is read from (the ReadParse use case on the same store)."""

        async def main() -> list[int]:
            options = dict(self.settings)
            container = container_for(options.pop("data_dir"), **options)
            try:
                reader: ReadParse = await obtain(container.read_parse)
                cached = await reader.markdown(
                    sha256, ParseTier.BASIC, PageRange(1, PAGES), caller=Caller.service()
                )
                return list(cached.batch_ids)
            finally:
                await container.shutdown_resources()

        return asyncio.run(main())


def test_cache_hit_force_reuse_partial_reuse_and_latest_pages(
    settings: dict[str, Any], tmp_path: Path
) -> None:
    cli = Cli(settings)
    pdf = str(make_pdf(tmp_path / "four.pdf"))
    part = cli.json(pdf, "--pages", "3-4")
    assert part["status"] == "pending" and len(part["created_parse_ids"]) == 1
    forced = cli.json(pdf, "--pages", "3-4", "--force")  # force reuses the active batch
    assert forced["reused_parse_ids"] == part["created_parse_ids"]
    assert forced["created_parse_ids"] == []
    out_file = tmp_path / "four.md"
    code, out, err = cli(pdf, "--wait", "--json", "--output", str(out_file))
    assert code == 0, out + err
    whole = json.loads(out.splitlines()[0])
    assert whole["reused_parse_ids"] == part["created_parse_ids"]  # partial reuse ...
    assert len(whole["created_parse_ids"]) == 1  # ... and creation of pages 1-2
    assert "green tea step" in out_file.read_text(encoding="utf-8")
    hit = cli.json(pdf)
    assert hit["status"] == "done" and hit["wait_parse_ids"] == []
    newer = cli.json(pdf, "--pages", "2-3", "--force", "--wait", "--output", str(out_file))
    first, second = whole["created_parse_ids"][0], part["created_parse_ids"][0]
    assert cli.pages_from(hit["sha256"]) == [
        first,
        newer["created_parse_ids"][0],
        newer["created_parse_ids"][-1],
        second,
    ]


def test_a_failed_force_batch_fails_the_command_despite_the_old_cache(
    settings: dict[str, Any], tmp_path: Path
) -> None:
    cli = Cli(settings)
    pdf = str(make_pdf(tmp_path / "four.pdf"))
    code, out, err = cli(pdf, "--wait")
    assert code == 0 and "green tea step" in out, out + err
    # the same bytes forced as text: its batch fails (binary content is not text)
    code, out, err = cli(pdf, "--force", "--wait", "--type", "txt")
    assert code == 1, out + err
    said = " ".join(err.split())
    assert "UNSUPPORTED_FILE_TYPE" in said and "may still be readable" in said
    assert "green tea step" not in out  # no Markdown is written for a failed request
    hit = cli.json(pdf)  # the older cache is still there
    assert hit["status"] == "done"


def test_wait_times_out_listing_the_unfinished_batches(
    settings: dict[str, Any], tmp_path: Path, other: OtherWorker
) -> None:
    cli = Cli(settings)
    pdf = str(make_pdf(tmp_path / "four.pdf"))
    planned = cli.json(pdf, "--pages", "1-2")
    other.claim(planned["created_parse_ids"])  # another worker holds it (a 60 s lease)
    code, out, err = cli(pdf, "--pages", "1-2", "--wait", "--timeout", "0.5")
    assert code == 124, out + err
    (batch_id,) = planned["created_parse_ids"]
    assert "timed out" in err and f"{batch_id} parsing" in err


def test_bad_pages_and_tiers_are_usage_errors(settings: dict[str, Any], tmp_path: Path) -> None:
    cli = Cli(settings)
    pdf = str(make_pdf(tmp_path / "four.pdf"))
    for args in (("--pages", "9-3"), ("--pages", "x"), ("--pages", "1-99"), ("--tier", "gold")):
        code, out, err = cli(pdf, *args)
        assert code == 2, out + err
    code, out, err = cli("f" * 64)
    assert code == 2 and "no parse of sha256" in " ".join(err.split())
