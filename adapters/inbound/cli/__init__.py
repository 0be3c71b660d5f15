"""Command-line adapter (typer). Bootstrap hands it a factory of the typed Entry."""

from ragline.adapters.inbound.cli.app import build_cli

__all__ = ["build_cli"]
