"""The Parser port for PDFs on MinerU's precision extract API (v4), by direct pull."""

from ragline.adapters.parser.mineru.client import MineruClient, MineruConfig

__all__ = ["MineruClient", "MineruConfig"]
