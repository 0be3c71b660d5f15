"""Size plans in the tokens of the Tokenizer port (the one the keyword index uses)."""

from __future__ import annotations

from ragline.application.ports.tokenizer import Tokenizer


class TokenizerTokenCounter:
    """TokenCounter over the Tokenizer port: a chunk's size is its number of tokens."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self._tokenizer = tokenizer

    def count(self, text: str) -> int:
        return len(self._tokenizer.tokenize(text))
