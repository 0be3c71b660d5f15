"""Parse batches and the parse cache (docs/design/0003-parse-cache.md): what was parsed, at which
tier, which pages.

Pure: stdlib + attrs, times and ids passed in.
"""

from ragline.domain.parse_batch.batch import (
    ACTIVE_STATUSES,
    TERMINAL_STATUSES,
    BatchStatus,
    IllegalBatchMove,
    ParseBatch,
    SourceRef,
    source_tag,
)
from ragline.domain.parse_batch.pages import MAX_PAGE, PageRange, ParseTier, less, written
from ragline.domain.parse_batch.planning import (
    Coverage,
    ParsePlan,
    ParseRequest,
    RequestOutcome,
    RequestStatus,
    coverage,
    known_page_count,
    newest_pages,
    outcome,
    plan,
    split,
)

__all__ = [
    "ACTIVE_STATUSES",
    "MAX_PAGE",
    "TERMINAL_STATUSES",
    "BatchStatus",
    "Coverage",
    "IllegalBatchMove",
    "PageRange",
    "ParseBatch",
    "ParsePlan",
    "ParseRequest",
    "ParseTier",
    "RequestOutcome",
    "RequestStatus",
    "SourceRef",
    "coverage",
    "known_page_count",
    "less",
    "newest_pages",
    "outcome",
    "plan",
    "source_tag",
    "split",
    "written",
]
