"""The chat-model (LLM) port."""
