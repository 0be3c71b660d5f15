"""Hostile requests campaign: `ragline serve` stays small and responsive under them (issue 18).

    .venv/bin/python -m campaigns.hostile_requests [--slow-clients 200]

Starts `ragline serve` as a process on embedded defaults with a service token and two tenant
tokens (loopback, a free port), after `ragline parse` put a 4-page PDF in the parse cache.
While /healthz is polled without pause and serve's memory is sampled from /proc, it fires,
phase after phase:

1. page ranges: 1-99999999999999999999, 1-100000, a 4,000-digit page, 99999-100000 on the
   coverage, Markdown and parse-request routes (both path families), 16 at once;
2. huge integers: batch ids, the outbox's after_id, search user/dataset ids, the ids of a
   submitted task, page numbers, a model dimension: 2^63, 2^64, 10^30, -2^63-1;
3. chunk previews of 2 MB, 16 at once (the WorkGate runs 1, queues 8, refuses the rest 503);
4. slow clients: connections trickling a request head one byte at a time, and bodies
   trickling after a complete head, until the server cuts them off.

Every answer must be a 4xx or 2xx (a 503 only from the WorkGate), every slow client cut off
(408 or closed), serve's peak RSS under 1 GiB and /healthz never failing. Writes
benchmarks/results/hostile_requests.json and prints it; exits 1 when a promise is broken.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess  # the campaign starts `ragline` as children  # nosec B404
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx

from ragline.testing.services.fixtures import free_port, stop_process, wait_for_http
from ragline.testing.services.ragline_cli import child_env, command

ROOT = Path(__file__).resolve().parents[2]
PDF = ROOT / "examples" / "docs" / "printing-press-history.pdf"
RESULTS = ROOT / "benchmarks" / "results" / "hostile_requests.json"
SERVICE = "campaign-service-token-0123456789"
ALICE = "campaign-alice-token-0123456789"
BOB = "campaign-bob-token-0123456789ab"
TOKENS = {SERVICE: "*", ALICE: "1001", BOB: "2002"}
RSS_LIMIT_MIB = 1024
HEADER_TIMEOUT, BODY_TIMEOUT = 5.0, 10.0
"""The campaign's deadlines (the defaults are 10 s and 120 s): shorter, so that it ends."""
CUT_OFF_CAP = 90.0  # a slow client not cut off by then is a failure
HUGE = [2**63, 2**64, 10**30, -(2**63) - 1]


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# -- serve's memory --------------------------------------------------------------------------


def _status_kib(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found + [g for c in found for g in _children(c)]


class Memory:
    """Samples serve's RSS (and its children's: the parser sandbox) every 100 ms."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak_self_kib = 0
        self.peak_tree_kib = 0
        self.samples = 0

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            own = _status_kib(self.pid, "VmRSS")
            tree = own + sum(_status_kib(c, "VmRSS") for c in _children(self.pid))
            self.peak_self_kib = max(self.peak_self_kib, own)
            self.peak_tree_kib = max(self.peak_tree_kib, tree)
            self.samples += 1
            await asyncio.sleep(0.1)

    def figures(self) -> dict[str, Any]:
        return {
            "serve_vmhwm_mib": round(_status_kib(self.pid, "VmHWM") / 1024, 1),
            "serve_sampled_peak_mib": round(self.peak_self_kib / 1024, 1),
            "serve_and_children_sampled_peak_mib": round(self.peak_tree_kib / 1024, 1),
            "samples": self.samples,
        }


# -- /healthz ---------------------------------------------------------------------------------


class Health:
    """/healthz asked back to back (a fresh connection each time, like a probe)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.latencies: list[tuple[str, float]] = []  # (phase, ms)
        self.failures: list[str] = []
        self.phase = "idle"

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            started = time.perf_counter()
            try:
                async with httpx.AsyncClient(timeout=60) as client:
                    answer = await client.get(f"{self.base}/healthz")
                if answer.status_code != 200:
                    self.failures.append(f"{self.phase}: {answer.status_code}")
            except httpx.HTTPError as error:
                self.failures.append(f"{self.phase}: {type(error).__name__}")
            self.latencies.append((self.phase, (time.perf_counter() - started) * 1000))
            await asyncio.sleep(0.02)

    def figures(self) -> dict[str, Any]:
        phases: dict[str, list[float]] = {}
        for phase, ms in self.latencies:
            phases.setdefault(phase, []).append(ms)
        phases["all"] = [ms for _, ms in self.latencies]
        return {
            "failures": self.failures,
            "by_phase": {name: _spread(values) for name, values in phases.items()},
        }


def _spread(values: list[float]) -> dict[str, Any]:
    ordered = sorted(values)
    if not ordered:
        return {"samples": 0}
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {
        "samples": len(ordered),
        "p50_ms": round(statistics.median(ordered), 1),
        "p99_ms": round(p99, 1),
        "max_ms": round(ordered[-1], 1),
    }


# -- the attacks ------------------------------------------------------------------------------


Call = Callable[[httpx.AsyncClient], Awaitable[httpx.Response]]


async def volley(client: httpx.AsyncClient, calls: list[Call], at_once: int) -> dict[str, Any]:
    """Run `calls` with at most `at_once` in flight; status counts and the slowest answer."""
    gate = asyncio.Semaphore(at_once)
    statuses: Counter[str] = Counter()
    slowest = 0.0

    async def one(call: Call) -> None:
        nonlocal slowest
        async with gate:
            started = time.perf_counter()
            try:
                answer = await call(client)
                statuses[str(answer.status_code)] += 1
            except httpx.HTTPError as error:
                statuses[type(error).__name__] += 1
            slowest = max(slowest, time.perf_counter() - started)

    started = time.perf_counter()
    await asyncio.gather(*(one(c) for c in calls))
    return {
        "requests": len(calls),
        "statuses": dict(sorted(statuses.items())),
        "slowest_s": round(slowest, 2),
        "wall_s": round(time.perf_counter() - started, 2),
    }


def page_range_calls(sha256: str) -> list[Call]:
    ranges = ["1-99999999999999999999", "1-100000", "1-" + "9" * 4000, "99999-100000"]
    calls: list[Call] = []
    for asked in ranges:
        for path in ("/api/v1/parses", "/api/v1/parses/markdown", "/parses/markdown"):
            params = {"doc_ref": sha256, "page_range": asked}
            calls.append(lambda c, p=path, q=params: c.get(p, params=q, headers=auth(SERVICE)))
        for path in ("/api/v1/parses", "/parses"):
            body = {"doc_ref": sha256, "page_range": asked}
            calls.append(lambda c, p=path, b=body: c.post(p, json=b, headers=auth(SERVICE)))
    return calls * 4


def task(**ids: int) -> dict[str, Any]:
    seed = json.loads((ROOT / "contracts/examples/parse_task.first_parse.json").read_text())
    return {**seed, "task_id": f"hostile-{next(_counter)}", **ids}


_counter = iter(range(1, 10**9))


def integer_calls() -> list[Call]:
    calls: list[Call] = []
    s = auth(SERVICE)
    for value in HUGE:
        calls += [
            lambda c, v=value: c.get("/api/v1/parses", params={"ids": str(v)}, headers=s),
            lambda c, v=value: c.get("/api/v1/outbox", params={"after_id": v}, headers=s),
            lambda c, v=value: c.get("/api/v1/runs", params={"page": v}, headers=s),
            lambda c, v=value: c.post(
                "/api/v1/search", json={"query": "x", "user_id": v, "dataset_ids": [1]}, headers=s
            ),
            lambda c, v=value: c.post(
                "/api/v1/search",
                json={"query": "x", "dataset_ids": [v]},
                headers=auth(ALICE),
            ),
            lambda c, v=value: c.put(
                "/api/v1/users/1001/model-configs/embedding",
                json={"provider": "openai", "model": "m", "dimension": v},
                headers=s,
            ),
        ]
        for field in ("user_id", "dataset_id", "original_file_id", "document_parse_task_id"):
            calls.append(
                lambda c, f=field, v=value: c.post(
                    "/api/v1/parser/task/submit", json=task(**{f: v}), headers=s
                )
            )
    ids = ",".join(str(2**63 + n) for n in range(500))
    calls.append(lambda c: c.get("/api/v1/parses", params={"ids": ids}, headers=auth(SERVICE)))
    return calls * 2


def big_markdown(chars: int = 1_990_000) -> str:
    section = "## Section {n}\n\n" + ("Tea leaves steep in hot water for minutes. " * 40) + "\n\n"
    parts, size, n = ["# A big document\n\n"], 0, 0
    while size < chars:
        part = section.format(n=n)
        parts.append(part)
        size += len(part)
        n += 1
    return "".join(parts)[:chars]


def preview_calls(count: int) -> list[Call]:
    text = big_markdown()
    return [
        lambda c: c.post("/api/v1/chunks/preview", json={"text": text}, headers=auth(ALICE))
    ] * count


async def slow_client(host: str, port: int, head_only: bool) -> dict[str, Any]:
    """Trickle a request (the head a byte at a time, or a body after a whole head) until
    the server answers or closes; how it ended and after how long."""
    started = time.perf_counter()
    reader, writer = await asyncio.open_connection(host, port)
    if head_only:
        payload = f"POST /api/v1/chunks/preview HTTP/1.1\r\nhost: {host}\r\n" + "x-pad: y\r\n" * 500
        chunks = [payload[i : i + 1].encode() for i in range(len(payload))]
    else:
        head = (
            f"POST /api/v1/chunks/preview HTTP/1.1\r\nhost: {host}\r\n"
            f"authorization: Bearer {ALICE}\r\ncontent-type: application/json\r\n"
            "content-length: 1000000\r\n\r\n"
        )
        writer.write(head.encode())
        chunks = [b'{"text": "' + b"a" * 10] + [b"a" * 10] * 100_000

    async def trickle() -> None:
        try:
            for chunk in chunks:
                writer.write(chunk)
                await writer.drain()
                await asyncio.sleep(0.5)
        except (ConnectionError, OSError):
            return

    sending = asyncio.create_task(trickle())
    try:
        answer = await asyncio.wait_for(reader.read(200), CUT_OFF_CAP)
        if answer.startswith(b"HTTP/1.1 408"):
            outcome = "408"
        else:
            outcome = answer[:12].decode(errors="replace") if answer else "closed"
    except TimeoutError:
        outcome = "not cut off"
    except (ConnectionError, OSError):
        outcome = "closed"
    sending.cancel()
    writer.close()
    return {"outcome": outcome, "seconds": time.perf_counter() - started}


async def slow_clients(host: str, port: int, heads: int, bodies: int) -> dict[str, Any]:
    ended = await asyncio.gather(
        *(slow_client(host, port, True) for _ in range(heads)),
        *(slow_client(host, port, False) for _ in range(bodies)),
    )
    outcomes: Counter[str] = Counter()
    for kind, part in (("head", ended[:heads]), ("body", ended[heads:])):
        for one in part:
            outcomes[f"{kind} {one['outcome']}"] += 1
    times = [one["seconds"] for one in ended]
    return {
        "connections": len(ended),
        "outcomes": dict(sorted(outcomes.items())),
        "longest_held_s": round(max(times), 1),
    }


# -- the run ----------------------------------------------------------------------------------


def parse_first(data_dir: Path, work: Path) -> str:
    """`ragline parse PDF --wait`: the PDF's pages in the cache; its sha256."""
    done = subprocess.run(  # our interpreter, our entry point, no shell  # nosec B603
        [*command(data_dir, "parse", str(PDF), "--wait", "--json", "-o", str(work / "p.md"))],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=work,
        env=child_env(),
        check=True,
    )
    sha256: str = json.loads(done.stdout.splitlines()[0])["sha256"]
    return sha256


async def campaign(base: str, pid: int, sha256: str, heads: int, bodies: int) -> dict[str, Any]:
    stop = asyncio.Event()
    health, memory = Health(base), Memory(pid)
    watchers = [asyncio.create_task(health.run(stop)), asyncio.create_task(memory.run(stop))]
    await asyncio.sleep(3)  # idle figures first
    attacks: dict[str, Any] = {}
    idle_mib = round(_status_kib(pid, "VmRSS") / 1024, 1)
    host, port = base.removeprefix("http://").split(":")
    async with httpx.AsyncClient(base_url=base, timeout=300) as client:
        health.phase = "page ranges"
        attacks["page ranges"] = await volley(client, page_range_calls(sha256), 16)
        health.phase = "huge integers"
        attacks["huge integers"] = await volley(client, integer_calls(), 16)
        health.phase = "2 MB chunk previews"
        attacks["2 MB chunk previews"] = await volley(client, preview_calls(32), 16)
        health.phase = "slow clients"
        attacks["slow clients"] = await slow_clients(host, int(port), heads, bodies)
    health.phase = "after"
    await asyncio.sleep(2)
    stop.set()
    await asyncio.gather(*watchers)
    return {
        "attacks": attacks,
        "healthz": health.figures(),
        "memory": {"serve_idle_mib": idle_mib, **memory.figures()},
    }


def judge(found: dict[str, Any]) -> list[str]:
    problems = []
    for name, attack in found["attacks"].items():
        for status, count in attack.get("statuses", {}).items():
            allowed = status.startswith(("2", "4")) or (
                status == "503" and name == "2 MB chunk previews"
            )
            if not allowed:
                problems.append(f"{name}: {count} answered {status}")
    for outcome, count in found["attacks"]["slow clients"]["outcomes"].items():
        if outcome.endswith("not cut off"):
            problems.append(f"slow clients: {count} {outcome}")
    if found["healthz"]["failures"]:
        problems.append(f"/healthz failed {len(found['healthz']['failures'])} times")
    peak = max(found["memory"]["serve_vmhwm_mib"], found["memory"]["serve_sampled_peak_mib"])
    if peak >= RSS_LIMIT_MIB:
        problems.append(f"serve's peak RSS {peak} MiB is not under {RSS_LIMIT_MIB} MiB")
    return problems


def main() -> int:
    options = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    options.add_argument("--slow-clients", type=int, default=200, help="slow request heads")
    options.add_argument("--slow-bodies", type=int, default=20, help="slow request bodies")
    args = options.parse_args()
    with tempfile.TemporaryDirectory(prefix="hostile-requests-") as folder:
        work = Path(folder)
        data_dir = work / "data"
        sha256 = parse_first(data_dir, work)
        port = free_port()
        log = work / "serve.log"
        env = {
            **child_env(),
            "RAGLINE_API_TOKENS": json.dumps(TOKENS),
            "RAGLINE_HTTP_HEADER_TIMEOUT_SECONDS": str(HEADER_TIMEOUT),
            "RAGLINE_HTTP_BODY_TIMEOUT_SECONDS": str(BODY_TIMEOUT),
        }
        with log.open("wb") as out:
            serve = subprocess.Popen(  # our interpreter, our entry point  # nosec B603
                command(data_dir, "serve", "--port", str(port)),
                cwd=work,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        base = f"http://127.0.0.1:{port}"
        try:
            wait_for_http(f"{base}/healthz", serve, log, timeout=120)
            started = time.perf_counter()
            found = asyncio.run(
                campaign(base, serve.pid, sha256, args.slow_clients, args.slow_bodies)
            )
            found["wall_s"] = round(time.perf_counter() - started, 1)
            found["serve_alive_after"] = serve.poll() is None
        finally:
            stop_process(serve)
        logged = log.read_text(errors="replace")
        tracebacks = logged.count("Traceback")
        if tracebacks:  # the first one, to say what broke
            first = logged.index("Traceback")
            found["serve_log_first_traceback"] = logged[max(0, first - 300) : first + 3000]
    found["serve_log_tracebacks"] = tracebacks
    found["settings"] = {
        "header_timeout_s": HEADER_TIMEOUT,
        "body_timeout_s": BODY_TIMEOUT,
        "cpu_workers": 1,
        "cpu_queue": 8,
        "slow_heads": args.slow_clients,
        "slow_bodies": args.slow_bodies,
    }
    found["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version()}
    found["problems"] = judge(found)
    if not found["serve_alive_after"]:
        found["problems"].append("serve died")
    if tracebacks:
        found["problems"].append(f"{tracebacks} tracebacks in serve's log")
    RESULTS.write_text(json.dumps(found, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps(found, indent=2, ensure_ascii=False))
    return 1 if found["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
