"""PageCounter port: how many pages a file has, before it is parsed.

The parse cache plans by pages (docs/design/0003-parse-cache.md): a request without a page range
means every page, and a large PDF is split into page-range batches, so the count is needed up front.
A non-paged file is one page.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol


class PageCounter(Protocol):
    def count(self, source: Path, file_type: str) -> int:
        """Pages of `source` (>= 1). Raises ParseEngineFailed when a paged file cannot be
        opened (corrupt, encrypted, not that type)."""
        ...
