"""`ragline models reembed run` as real processes on embedded defaults (a laptop: no worker):
two of them share one re-embedding through its leased copy batches; one is SIGKILLed while it
holds a batch, that batch's lease runs out, the other copies it and swaps. Then `status` and
`cancel` read the ended re-embedding.
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
from pathlib import Path
from typing import Any

from ragline.adapters.persistence.sql import upgrade_to_head
from ragline.application.ports.vector_index import VectorSpace
from tests.e2e.ragline_process import TIMEOUT_SECONDS, database, finish, kill_group, run, start
from tests.e2e.reembedding_seed import owned_by, points, seed

ID = "reembed-e2e-1"
ENV = {
    "RAGLINE_REEMBED_BATCH_SIZE": "4",
    "RAGLINE_REEMBED_LEASE_SECONDS": "3",
    "RAGLINE_REEMBED_POLL_SECONDS": "0.2",
}


def batches(data_dir: Path) -> list[dict[str, Any]]:
    with database(data_dir) as db:
        rows = db.execute(
            "SELECT seq, status, owner, claims FROM reembedding_batch "
            "WHERE reembedding_id = ? ORDER BY seq",
            (ID,),
        )
        return [dict(row) for row in rows]


def test_two_runs_share_the_copy_and_a_killed_ones_batch_is_taken_over(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    upgrade_to_head(f"sqlite:///{data_dir / 'ragline.db'}")
    ids = asyncio.run(seed(data_dir, ID))

    args = ("models", "reembed", "run", ID)
    doomed = start(data_dir, *args, env=ENV)
    survivor = start(data_dir, *args, env=ENV)
    deadline = time.monotonic() + TIMEOUT_SECONDS
    while True:  # the doomed one has copied a batch and holds another
        assert doomed.poll() is None and survivor.poll() is None, "a run ended too early"
        assert time.monotonic() < deadline, f"never caught mid-batch: {batches(data_dir)}"
        rows = batches(data_dir)
        mine = [r for r in rows if owned_by(r, doomed.pid)]
        if {"done", "copying"} <= {r["status"] for r in mine}:
            kill_group(doomed, signal.SIGKILL)
            break
        time.sleep(0.01)
    doomed.wait(30)
    held = [
        r["seq"] for r in batches(data_dir) if owned_by(r, doomed.pid) and r["status"] == "copying"
    ]
    assert held, "the killed run held no batch"

    done = finish(survivor, args)
    assert done.returncode == 0, done.explain()
    (shown,) = json.loads(done.stdout)
    assert (shown["status"], shown["done"], shown["total"]) == (
        "SWAPPED",
        len(ids["A"]),
        len(ids["A"]),
    )
    rows = {r["seq"]: r for r in batches(data_dir)}
    assert {r["status"] for r in rows.values()} == {"done"}
    for seq in held:  # copied again by the survivor, once its lease had run out
        assert owned_by(rows[seq], survivor.pid) and rows[seq]["claims"] == 2, rows[seq]
    owners = {r["owner"].split("/")[1] for r in rows.values()}
    assert owners == {str(doomed.pid), str(survivor.pid)}  # the copy was shared

    assert asyncio.run(points(data_dir, VectorSpace(1, 384), "A")) == set(ids["A"])
    assert asyncio.run(points(data_dir, VectorSpace(0, 384), "B")) == set(ids["B"])
    status = run(data_dir, "models", "reembed", "status", ID, "--json")
    assert status.returncode == 0, status.explain()
    assert json.loads(status.stdout)["status"] == "SWAPPED"
    cancelled = run(data_dir, "models", "reembed", "cancel", ID)
    assert cancelled.returncode == 1 and "SWAPPED" in cancelled.stderr, cancelled.explain()
    again = run(data_dir, "models", "reembed", "run")
    assert again.returncode == 0 and "no active re-embedding" in again.stderr, again.explain()
