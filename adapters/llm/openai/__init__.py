"""ChatModel over an OpenAI-compatible chat-completions HTTP API (httpx)."""

from ragline.adapters.llm.openai.client import OpenAIChatModel

__all__ = ["OpenAIChatModel"]
