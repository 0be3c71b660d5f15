"""Parse batches and the parse cache (ADR-0003): what was parsed, at which tier, which pages.

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
from ragline.domain.parse_batch.pages import PageRange, ParseTier
from ragline.domain.parse_batch.planning import (
    Coverage,
    ParsePlan,
    ParseRequest,
    RequestOutcome,
    RequestStatus,
    coverage,
    newest_pages,
    outcome,
    plan,
    split,
)

__all__ = [
    "ACTIVE_STATUSES",
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
    "newest_pages",
    "outcome",
    "plan",
    "source_tag",
    "split",
]
