"""ChatModel over an OpenAI-compatible chat-completions HTTP API (httpx)."""

from ragline.adapters.openai_chat.client import OpenAIChatModel

__all__ = ["OpenAIChatModel"]
