"""Issue 19 item 10: a worker killed mid-parse no longer holds its batch for the lease.

A process claims a batch and dies without giving it back (it exits at once, as a SIGKILL
would leave it). A waiter of the same host (what CLEANING and `ragline parse --wait` run)
sees that the claim's process no longer exists, releases it and parses the batch. The
waiter's clock is a test clock behind the wall clock, so the dead worker's lease never
lapses here: only the release can let the batch run.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess  # nosec B404: the test starts the python it runs under
import sys
from pathlib import Path
from typing import Any

from dependency_injector import providers

from ragline.adapters.claim_holders.local_processes import LocalProcessHolders
from ragline.application.health import obtain
from ragline.application.parsing import ParseBatchRunner
from ragline.bootstrap.container import container_for
from ragline.domain.parse_batch import RequestStatus
from tests.fakes.clock import FakeClock
from tests.parse_cache.conftest import make_pdf
from tests.parse_cache.test_cli import Cli

DIE_HOLDING = """
import asyncio, json, os, sys
from ragline.application.health import obtain
from ragline.bootstrap.container import container_for

async def main():
    options = json.loads(sys.argv[1])
    container = container_for(options.pop("data_dir"), **options)
    runner = await obtain(container.parse_batch_runner)
    claimed = await runner.claim(json.loads(sys.argv[2]))
    print(claimed.owner, flush=True)
    os._exit(0)  # dead with its claim: no release, no finish

asyncio.run(main())
"""


def _die_holding(settings: dict[str, Any], ids: list[int]) -> str:
    options = {**settings, "data_dir": str(settings["data_dir"])}
    done = subprocess.run(  # nosec B603
        [sys.executable, "-c", DIE_HOLDING, json.dumps(options), json.dumps(ids)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.strip().splitlines()[-1]


def test_the_claim_of_a_dead_worker_on_this_host_is_released_at_once(
    settings: dict[str, Any], tmp_path: Path
) -> None:
    planned = Cli(settings).json(str(make_pdf(tmp_path / "four.pdf")), "--pages", "1-2")
    ids: list[int] = planned["created_parse_ids"]
    owner = _die_holding(settings, ids)
    assert owner.startswith(LocalProcessHolders().host_prefix)

    async def wait_for_the_batch() -> RequestStatus:
        options = dict(settings)
        container = container_for(options.pop("data_dir"), **options)
        container.clock.override(providers.Object(FakeClock()))
        try:
            runner: ParseBatchRunner = await obtain(container.parse_batch_runner)
            ended = await runner.run_ids(ids, timeout=60)
            return ended.status
        finally:
            await container.shutdown_resources()  # type: ignore[misc]

    assert asyncio.run(wait_for_the_batch()) is RequestStatus.DONE


def test_only_a_process_of_this_host_that_no_longer_runs_is_gone() -> None:
    holders = LocalProcessHolders(host="worker-host")
    prefix = holders.host_prefix
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])  # nosec B603
    try:
        dead_pid = _a_dead_pid()
        assert holders.is_gone(f"{prefix}{dead_pid}/abcd1234")
        assert not holders.is_gone(f"{prefix}{child.pid}/abcd1234")  # alive
        assert not holders.is_gone(holders.name)  # this very process
        assert not holders.is_gone(f"{prefix}{os.getpid()}/othertag")  # another container here
        assert not holders.is_gone(f"other-host/{dead_pid}/abcd1234")  # not ours to judge
        assert not holders.is_gone(f"worker-host-2/{dead_pid}/abcd1234")
        for unreadable in (f"{prefix}x/tag", f"{prefix}{dead_pid}", "worker-host", "harness"):
            assert not holders.is_gone(unreadable)
    finally:
        child.kill()
        child.wait()


def _a_dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])  # nosec B603
    process.wait()  # reaped: the pid names no process now
    return process.pid
