"""A re-ranker over the ChatModel port: the model reads the top passages and orders them.

Listwise: one prompt with the numbered passages (each cut to `passage_chars`), one reply with
their numbers best first. Any reply that names no usable number raises RerankFailed, and
search keeps its fused order; an LLM error is the same.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragline.application.ports.llm import ChatModel, LlmError
from ragline.application.ports.reranker import RerankFailed

SYSTEM = (
    "You rank passages by how well they answer a question. Reply with the passage numbers, "
    "most relevant first, separated by commas, and nothing else."
)
_NUMBER = re.compile(r"\d+")


class ChatReranker:
    def __init__(self, chat: ChatModel, passage_chars: int = 700) -> None:
        self._chat = chat
        self._chars = passage_chars

    def rerank(self, query: str, passages: Sequence[str]) -> list[int]:
        if not passages:
            return []
        listed = "\n\n".join(
            f"[{number}] {' '.join(text.split())[: self._chars]}"
            for number, text in enumerate(passages, start=1)
        )
        prompt = f"Question: {query}\n\nPassages:\n\n{listed}\n\nRanking:"
        try:
            reply = self._chat.complete(prompt, system=SYSTEM)
        except LlmError as error:
            raise RerankFailed(str(error)) from error
        order = [int(n) - 1 for n in _NUMBER.findall(reply)]
        picked = list(dict.fromkeys(i for i in order if 0 <= i < len(passages)))
        if not picked:
            raise RerankFailed(f"the reply names no passage: {reply[:120]!r}")
        return picked
