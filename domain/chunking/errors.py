"""Chunking errors. A plan missing a pipeline is an internal-state error, not a user error."""

from __future__ import annotations


class IncompletePlanError(RuntimeError):
    """A chunk plan lacks its PARENT or CHILD pipeline: nothing can be retrieved without both."""
