"""Tokenizer port: text to the tokens the keyword index and the sparse encoder share."""

from __future__ import annotations

from typing import Protocol


class Tokenizer(Protocol):
    """Deterministic, CPU-bound: same text, same tokens, in text order."""

    def tokenize(self, text: str) -> list[str]:
        """Tokens in order of appearance (duplicates kept); no empty or whitespace tokens."""
        ...
