"""Imports every command module so that each registers itself on the app."""

from ragline.adapters.inbound.cli import (  # noqa: F401
    chunk,
    chunks,
    doctor,
    evaluate,
    ingest,
    models,
    outbox,
    parse,
    reembed,
    retry,
    search,
    serve,
    status,
    tasks,
    worker,
)
