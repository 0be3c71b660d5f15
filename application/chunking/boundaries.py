"""Chunk boundaries proposed by a chat model (the LLM strategy's model side).

The model is asked for the verbatim opening words of each new chunk; the domain then checks
that every one of them occurs in order in the text, so the model can only choose where to
cut. Anything unusable raises, and the engine falls back to RECURSIVE for that piece.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from ragline.application.ports.llm import ChatModel

SYSTEM_PROMPT = (
    "You split documents into coherent chunks for retrieval. You never rewrite text. "
    'Answer with JSON only: {"boundaries": ["<first words of chunk 2>", '
    '"<first words of chunk 3>", ...]}, each item copied verbatim (5 to 12 words) from the '
    "text, in document order. Do not include the start of the first chunk."
)
_JSON_OBJECT = re.compile(r"\{.*\}", re.S)


class LlmBoundaryProposer:
    """BoundaryProposer over the ChatModel port."""

    def __init__(self, model: ChatModel, *, max_chars: int = 12000) -> None:
        self._model = model
        self._max_chars = max_chars

    def propose(self, text: str) -> Sequence[int | str]:
        if len(text) > self._max_chars:
            raise ValueError(f"text of {len(text)} characters exceeds {self._max_chars}")
        reply = self._model.complete(text, system=SYSTEM_PROMPT)
        return parse_boundaries(reply)


def parse_boundaries(reply: str) -> list[int | str]:
    """The boundary list in a model reply (tolerates prose or code fences around the JSON)."""
    match = _JSON_OBJECT.search(reply)
    if match is None:
        raise ValueError("no JSON object in the model reply")
    data = json.loads(match.group(0))
    items = data.get("boundaries") if isinstance(data, dict) else None
    if not isinstance(items, list) or not all(
        isinstance(i, str | int) and not isinstance(i, bool) for i in items
    ):
        raise ValueError("reply has no list of string/int boundaries")
    return list(items)
