"""Text as an embedding model can take it: any `str` the port receives, made encodable.

A str may hold lone surrogates (bytes decoded with surrogateescape: file names, argv, a bad
upload) that UTF-8 cannot encode, and a NUL, which C engines read as the end of the text and
BERT tokenizers drop, gluing the words around it together. Every embedder adapter passes its
texts through here, so one rule holds for all of them.
"""

from __future__ import annotations


def model_text(text: str, *, nul_as_space: bool = True) -> str:
    """`text` with lone surrogates replaced by U+FFFD and (by default) NULs by spaces."""
    if nul_as_space and "\x00" in text:
        text = text.replace("\x00", " ")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text
