"""`ragline serve` (and `ragline worker --http-port`) as child processes on free ports."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from ragline.testing.services.fixtures import free_port, stop_process, wait_for_http
from ragline.testing.services.ragline_cli import child_env, command


@contextmanager
def ragline_server(
    data_dir: Path, *args: str, env: Mapping[str, str] | None = None, log_name: str = "serve"
) -> Iterator[tuple[str, Path]]:
    """Run `ragline --data-dir DATA_DIR ARGS... --port P` (or `--http-port P` for a worker)
    until the block ends; yields the base URL and the log file (stdout + stderr)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    flag = "--http-port" if args and args[0] == "worker" else "--port"
    log = data_dir.parent / f"{log_name}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            command(data_dir, *args, flag, str(port)),
            cwd=data_dir.parent,
            env={**child_env(), **(env or {})},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            wait_for_http(f"{base}/healthz", process, log, timeout=90)
            yield base, log
        finally:
            stop_process(process)
