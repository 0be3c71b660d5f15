"""The crash campaign at reduced size, on each broker: 20 tasks, 4 SIGKILLs of two real
`ragline worker` processes (PostgreSQL, Elasticsearch API, embedded vectors), restarts and
business-side retries; every check of `campaigns.crash` must pass.

The full size (200 tasks, 30 kills) is the documented command in docs/reliability.md.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from campaigns.crash import Setup, campaign, print_report
from ragline.testing.services import servers


@pytest.mark.parametrize("broker", ["rabbitmq", "kafka"])
def test_crash_campaign_loses_nothing_and_leaves_nothing_stuck(
    broker: str, tmp_path: Path, elasticsearch_url: str, request: pytest.FixtureRequest
) -> None:
    bootstrap = request.getfixturevalue("kafka_bootstrap") if broker == "kafka" else None
    with (
        servers.postgres_database("e2e_crash") as database_url,
        servers.constant_embeddings() as embeddings_url,
    ):
        setup = Setup(broker, tmp_path, database_url, elasticsearch_url, embeddings_url, bootstrap)
        report = asyncio.run(campaign(setup, tasks=20, kills=4, seed=7, timeout_s=600))
    print_report(report)
    failed = [name for name, ok in report["verdict"].items() if not ok]
    assert not failed, json.dumps(
        {k: report[k] for k in ("verdict", "answers", "stores")}, indent=1, default=str
    )
    assert report["kills"]["by_how"].get("hook", 0) >= 1  # a named point really fired
    assert report["answers"]["retries_published"] >= 1  # the business side retried
    assert report["stores"]["deleted_documents"] >= 1
