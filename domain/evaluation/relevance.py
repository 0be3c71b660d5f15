"""When a hit answers a question given as an answer snippet.

The snippet is copied from the document, but extraction may re-flow it (line breaks, runs of
spaces, non-breaking spaces), so both sides are compared with every whitespace run collapsed
to one space. A child that quotes only half the snippet still answers when its parent holds
all of it: the parent text is what a reader (or an LLM) gets with the hit.
"""

from __future__ import annotations

import re

_WHITESPACE = re.compile(r"\s+")


def normalise_whitespace(text: str) -> str:
    """`text` with each whitespace run as one space, trimmed."""
    return _WHITESPACE.sub(" ", text).strip()


def contains_snippet(snippet: str, text: str, parent_text: str | None = None) -> bool:
    """Whether the (non-empty) snippet occurs in the hit's text or its parent's text."""
    needle = normalise_whitespace(snippet)
    if not needle:
        raise ValueError("an answer snippet must not be blank")
    if needle in normalise_whitespace(text):
        return True
    return parent_text is not None and needle in normalise_whitespace(parent_text)
