"""Parse batches and the parse cache (ADR-0003): what was parsed, at which tier, which pages.

Pure: stdlib + attrs, times and ids passed in.
"""

from ragline.domain.parse_batch.pages import PageRange, ParseTier

__all__ = ["PageRange", "ParseTier"]
