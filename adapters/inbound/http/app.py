"""create_app: the FastAPI application of `ragline serve` over the composition root's Entry.

Every route takes its use case from the typed `UseCases` (a FastAPI dependency) and calls
it. The lifespan runs a worker in this process when only this process can reach the bus
(embedded defaults: a submitted task must be consumed by someone), and closes every
resource the wiring opened at shutdown.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable

from fastapi import FastAPI, Request, Response
from fastapi_offline import FastAPIOffline
from prometheus_client import Counter, Histogram

from ragline.adapters.inbound.entry import Entry
from ragline.adapters.inbound.http import (
    chunk_routes,
    debug_routes,
    document_chunk_routes,
    document_routes,
    health_routes,
    model_config_routes,
    outbox_routes,
    parse_routes,
    problems,
    reembedding_routes,
    run_routes,
    search_routes,
    task_routes,
    upload_routes,
)
from ragline.adapters.inbound.http.auth import ApiTokens
from ragline.adapters.inbound.http.body_limit import BodyLimit
from ragline.adapters.inbound.http.console import install as install_console
from ragline.adapters.inbound.http.loopback import LoopbackGuard
from ragline.adapters.inbound.http.work_gate import WorkGate
from ragline.application.reembedding import loop as reembedding_loop

REQUESTS = Counter(
    "ragline_http_requests_total", "HTTP requests answered", ["method", "route", "status"]
)
LATENCY = Histogram(
    "ragline_http_request_duration_seconds", "HTTP request latency", ["method", "route"]
)

DESCRIPTION = """The HTTP face of ragline: the Java back end's debug endpoints, parse runs, search,
chunk preview, health and metrics. Authenticate with `Authorization: Bearer <token>`
(`RAGLINE_API_TOKENS`); errors are RFC 9457 problem details."""


def create_app(
    entry: Entry,
    tokens: ApiTokens,
    *,
    max_body_bytes: int = 64 * 1024 * 1024,
    retry_timeout_seconds: float = 600.0,
    run_worker: bool | None = None,
    cpu_workers: int = 1,
    cpu_queue: int = 8,
) -> FastAPI:
    """`run_worker` None: a worker runs in this process iff the bus is in-process.
    `cpu_workers`/`cpu_queue`: the WorkGate of chunk previews and synchronous extracts."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            bus = await entry.bus()
            alongside = bus.in_process if run_worker is None else run_worker
            async with background_loops(entry):
                if alongside:
                    worker = await entry.worker()
                    async with worker.running():
                        yield
                else:
                    yield
        finally:
            await entry.close()

    app = FastAPIOffline(
        title="ragline",
        version="0.1.0",
        description=DESCRIPTION,
        lifespan=lifespan,
    )
    app.state.entry = entry
    app.state.tokens = tokens
    app.state.retry_timeout = retry_timeout_seconds
    app.state.work_gate = WorkGate(cpu_workers, cpu_queue)
    problems.install(app)
    for module in (
        debug_routes,
        run_routes,
        document_chunk_routes,  # first: its examples run before the re-index example's run
        document_routes,
        upload_routes,
        model_config_routes,
        reembedding_routes,
        search_routes,
        chunk_routes,
        parse_routes,
        outbox_routes,
        task_routes,
        health_routes,
    ):
        app.include_router(module.router)
    app.include_router(parse_routes.adr_router)
    install_console(app)

    @app.middleware("http")
    async def measured(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        started = time.perf_counter()
        response = await call_next(request)
        route = request.scope.get("route")
        path = getattr(route, "path", "unmatched")
        LATENCY.labels(request.method, path).observe(time.perf_counter() - started)
        REQUESTS.labels(request.method, path, str(response.status_code)).inc()
        return response

    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)  # before any parsing
    if tokens.open:  # no tokens: loopback callers only (outermost: before anything is read)
        app.add_middleware(LoopbackGuard)
    return app


@contextlib.asynccontextmanager
async def background_loops(entry: Entry) -> AsyncIterator[None]:
    """While inside: `parse_batch_workers` loops claiming parse batches and the loop that
    copies re-embeddings (a laptop's `serve` is its only worker)."""
    runner = await entry.use_cases.parse_batch_runner()
    reembedding = reembedding_loop.running(entry.use_cases.reembedding_loop)
    async with runner.running(entry.settings().parse_batch_workers), reembedding:
        yield


def create_operations_app(entry: Entry) -> FastAPI:
    """Only /healthz, /readyz and /metrics (for `ragline worker --http-port`)."""
    app = FastAPI(title="ragline worker", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.entry = entry
    problems.install(app)
    app.include_router(health_routes.router)
    return app
