"""Token counting for plans sized in tokens. The default counter needs no model: each CJK
character is a token, and so is each run of other non-space characters."""

from __future__ import annotations

import re
from typing import Protocol

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u3000-\u303f\uff00-\uffef"
_TOKEN = re.compile(f"[{_CJK}]|[^\\s{_CJK}]+")


class TokenCounter(Protocol):
    def count(self, text: str) -> int:
        """Number of tokens in `text`; additive over whitespace-separated parts."""
        ...


class WhitespaceCjkTokenCounter:
    """Whitespace-separated words plus one token per CJK character (no model needed)."""

    def count(self, text: str) -> int:
        return sum(1 for _ in _TOKEN.finditer(text))
