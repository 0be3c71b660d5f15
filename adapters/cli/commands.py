"""Imports every command module so that each registers itself on the app."""

from ragline.adapters.cli import (
    chunk,  # noqa: F401
    ingest,  # noqa: F401
    search,  # noqa: F401
)
