"""Command-line adapter (typer). Bootstrap hands it a factory for the wired services."""

from ragline.adapters.cli.app import build_cli

__all__ = ["build_cli"]
