"""Command-line adapter (typer). Bootstrap hands it a factory for the container."""

from ragline.adapters.cli.app import build_cli

__all__ = ["build_cli"]
