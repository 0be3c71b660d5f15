"""Mixed Chinese/other-script tokenizer shared by the keyword index and the sparse encoder.

Text is split into Han runs and word runs, each NFKC-normalised (full-width letters and
digits become ASCII). Han runs go through rjieba (search mode by default: a long word
also yields its dictionary sub-words, so a query for 北京 finds 北京大学). Word runs follow
the Unicode word rules closely enough for search: letters, digits and marks, joined across
an inner apostrophe or period (don't, e.g, 3.14). Words are casefolded. Nothing is dropped as
a stopword and no stemming is done: the same text always gives the same tokens.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import rjieba

# CJK Unified Ideographs (+ extension A, compatibility, extensions B..F in plane 2, plane 3).
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f\U00030000-\U0003134f"
_BASE = rf"[^\W{_HAN}]"  # a letter, digit or underscore outside Han


# Combining marks of the scripts that write words with them (Latin/Greek/Cyrillic diacritics,
# Hebrew and Arabic points, the Indic blocks without their dandas, Thai): they extend the word
# before them. A coarse class, not the full Unicode list: far cheaper for the regex engine.
_MARK = (
    "[\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670"
    "\u06d6-\u06ed\u0711\u0730-\u074a\u0900-\u0963\u0966-\u0dff\u0e31-\u0e3a"
    "\u0e47-\u0e4e\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]"
)
_WORD_RUN = rf"{_BASE}(?:{_BASE}|{_MARK})*"
_JOINER = "['’.．＇]"  # inner apostrophe or period, ASCII or full-width
_TOKEN = re.compile(rf"([{_HAN}]+)|({_WORD_RUN}(?:{_JOINER}{_WORD_RUN})*)")
_PLAIN_WORD = re.compile(rf"{_WORD_RUN}(?:['.]{_WORD_RUN})*")
# The same rules restricted to ASCII text (no Han, no marks, no full-width joiners; \w is
# [A-Za-z0-9_] there), on the lower-cased text: most chunks of English documents.
_ASCII_TOKEN = re.compile(r"[A-Za-z0-9_]+(?:['.][A-Za-z0-9_]+)*")


_loaded: list[rjieba.Jieba] = []
_loading = threading.Lock()


def _jieba() -> rjieba.Jieba:
    """A private dictionary instance, loaded once and never mutated. Loaded on the first Han
    text, not at start-up: importing rjieba and building its dictionary cost ~0.3 s, a fifth
    of an English `ragline search` (none of whose text ever reaches it)."""
    with _loading:
        if not _loaded:
            import rjieba

            _loaded.append(rjieba.Jieba())
        return _loaded[0]


class JiebaTokenizer:
    """Deterministic tokenizer: Han text via rjieba, other words by Unicode word rules."""

    def __init__(self, search_mode: bool = True, hmm: bool = True) -> None:
        self._search_mode = search_mode
        self._hmm = hmm
        self._cutter: Callable[[str, bool], list[str]] | None = None

    def _cut(self) -> Callable[[str, bool], list[str]]:
        if self._cutter is None:
            jieba = _jieba()
            self._cutter = jieba.cut_for_search if self._search_mode else jieba.cut
        return self._cutter

    def tokenize(self, text: str) -> list[str]:
        if text.isascii():
            return _ASCII_TOKEN.findall(text.lower())
        tokens: list[str] = []
        cut, hmm = None, self._hmm
        # Normalising only the matched runs (not the whole text) keeps the common case cheap:
        # full-width punctuation is dropped anyway, and ASCII words need no NFKC.
        for han, word in _TOKEN.findall(text):
            if han:
                if not unicodedata.is_normalized("NFKC", han):
                    han = unicodedata.normalize("NFKC", han)
                cut = cut or self._cut()
                tokens.extend(cut(han, hmm))
            elif word.isascii():
                tokens.append(word.lower())
            else:
                tokens.extend(_normalized_words(word))
        return tokens


def _normalized_words(word: str) -> list[str]:
    """NFKC + casefold a non-ASCII word; re-split it if normalising produced separators."""
    folded = unicodedata.normalize("NFKC", word).casefold().replace("’", "'")
    if _PLAIN_WORD.fullmatch(folded):
        return [folded]
    return [w.casefold() for w in _PLAIN_WORD.findall(folded)]
