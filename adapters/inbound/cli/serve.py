"""`ragline serve`: the HTTP API (FastAPI on uvicorn) over the same wiring."""

from __future__ import annotations

import ipaddress
import logging
from pathlib import Path

import typer

from ragline.adapters.inbound.cli.app import DATA_DIR_OPTION, app, lazy_entry

log = logging.getLogger("ragline")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@app.command()
def serve(
    ctx: typer.Context,
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to bind."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="TCP port."),
    data_dir: Path | None = DATA_DIR_OPTION,
) -> None:
    """Serve the HTTP API: debug endpoints, runs, search, chunk preview, health, metrics."""
    lazy_entry(ctx).choose(data_dir)
    import uvicorn

    from ragline.adapters.inbound.http import ApiTokens, TokenConfigError, create_app
    from ragline.adapters.inbound.http.deadlines import deadline_protocol
    from ragline.adapters.logs.line_format import configure_logging

    entry = lazy_entry(ctx).get()
    settings = entry.settings()
    secret = settings.api_tokens.get_secret_value() if settings.api_tokens else None
    try:
        tokens = ApiTokens.parse(secret)
    except TokenConfigError as error:
        raise typer.BadParameter(str(error), param_hint="RAGLINE_API_TOKENS") from None
    configure_logging(settings.log_format, [*settings.secret_values, *tokens.principals])
    if tokens.open:
        if not is_loopback(host):
            raise typer.BadParameter(
                f"{host} is not a loopback address: set RAGLINE_API_TOKENS to serve it",
                param_hint="--host",
            )
        log.warning(
            "no RAGLINE_API_TOKENS: serving %s:%d without authentication, as user %s",
            host,
            port,
            tokens.default_user,
        )
    api = create_app(
        entry,
        tokens,
        max_body_bytes=settings.http_max_body_mb * 1024 * 1024,
        cpu_workers=settings.http_cpu_workers,
        cpu_queue=settings.http_cpu_queue,
    )
    uvicorn.run(
        api,
        host=host,
        port=port,
        log_config=None,
        access_log=False,
        http=deadline_protocol(
            settings.http_header_timeout_seconds, settings.http_body_timeout_seconds
        ),
    )
