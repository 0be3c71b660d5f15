"""LLM port: one chat completion. Adapters (an OpenAI-compatible HTTP API, ...) raise
LlmError for every failure, LlmTimeout when the model did not answer in time."""

from __future__ import annotations

from typing import Protocol


class LlmError(Exception):
    """The model could not produce an answer (HTTP error, bad payload, refused)."""


class LlmTimeout(LlmError):
    """The model did not answer within the adapter's timeout."""


class ChatModel(Protocol):
    def complete(self, prompt: str, *, system: str | None = None) -> str:
        """The model's reply text to `prompt` (with an optional system message)."""
        ...
