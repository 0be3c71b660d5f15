"""Mixed Chinese/other-script tokenizer shared by the keyword index and the sparse encoder.

Text is NFKC-normalised (full-width letters and digits become ASCII) and split into
Han runs and word runs. Han runs go through rjieba (search mode by default: a long word
also yields its dictionary sub-words, so a query for 北京 finds 北京大学). Word runs follow
the Unicode word rules closely enough for search: letters, digits and marks, joined across
an inner apostrophe or period (don't, e.g, 3.14). Words are casefolded. Nothing is dropped as
a stopword and no stemming is done: the same text always gives the same tokens.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

import rjieba

# CJK Unified Ideographs (+ extension A, compatibility, extensions B..F in plane 2, plane 3).
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f\U00030000-\U0003134f"
_WORD_CHAR = rf"[^\W{_HAN}]"
_TOKEN = re.compile(rf"(?P<han>[{_HAN}]+)|(?P<word>{_WORD_CHAR}+(?:['’.]{_WORD_CHAR}+)*)")


@cache
def _jieba() -> rjieba.Jieba:
    """A private dictionary instance, loaded once (≈0.2 s) and never mutated."""
    return rjieba.Jieba()


class JiebaTokenizer:
    """Deterministic tokenizer: Han text via rjieba, other words by Unicode word rules."""

    def __init__(self, search_mode: bool = True, hmm: bool = True) -> None:
        self._search_mode = search_mode
        self._hmm = hmm

    def tokenize(self, text: str) -> list[str]:
        if not text:
            return []
        normalized = unicodedata.normalize("NFKC", text)
        jieba = _jieba()
        tokens: list[str] = []
        for match in _TOKEN.finditer(normalized):
            han = match.group("han")
            if han is None:
                tokens.append(match.group("word").casefold().replace("’", "'"))
            elif self._search_mode:
                tokens.extend(jieba.cut_for_search(han, self._hmm))
            else:
                tokens.extend(jieba.cut(han, self._hmm))
        return tokens
