"""OpenAI-compatible `POST {base_url}/chat/completions` with a hard timeout.

Works with any server speaking that API (OpenAI, vLLM, llama.cpp server, Ollama's /v1).
Every failure surfaces as the port's LlmError (LlmTimeout for timeouts) so the chunking engine
can fall back without knowing about HTTP; its text never carries the API key (a server that
echoes the Authorization header has it masked before the body is cut to length).
"""

from __future__ import annotations

from typing import Any

import httpx

from ragline.application.ports.llm import LlmError, LlmTimeout
from ragline.application.secrets import SecretMask


class OpenAIChatModel:
    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 30.0,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._mask = SecretMask.of(api_key)
        self._client = httpx.Client(
            base_url=base_url.rstrip("/"),
            headers=headers,
            timeout=httpx.Timeout(timeout),
            transport=transport,
        )
        self._model = model
        self._temperature = temperature
        self._max_tokens = max_tokens

    def complete(self, prompt: str, *, system: str | None = None) -> str:
        messages = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": prompt})
        body: dict[str, Any] = {
            "model": self._model,
            "messages": messages,
            "temperature": self._temperature,
        }
        if self._max_tokens is not None:
            body["max_tokens"] = self._max_tokens
        try:
            response = self._client.post("/chat/completions", json=body)
            response.raise_for_status()
            payload = response.json()
        except httpx.TimeoutException:
            raise LlmTimeout(
                f"no answer from {self._mask(str(self._client.base_url))} in time"
            ) from None
        except httpx.HTTPStatusError as exc:
            raise LlmError(
                f"chat completion failed: HTTP {exc.response.status_code}: "
                f"{self._mask.prefix(exc.response.text, 200)}"
            ) from None
        except (httpx.HTTPError, ValueError) as exc:
            raise LlmError(f"chat completion failed: {self._mask(str(exc))}") from None
        try:
            content = payload["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise LlmError("chat completion payload has no choices[0].message.content") from exc
        if not isinstance(content, str):
            raise LlmError("chat completion content is not text")
        return content

    def close(self) -> None:
        self._client.close()
