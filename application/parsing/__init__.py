"""The parse cache's use cases (docs/design/0003-parse-cache.md): request a parse (plan + persist),
run batches, read statuses, coverage and Markdown. See docs/parse-cache.md."""

from ragline.application.parsing.batch_runner import (
    BatchFailure,
    LocalSource,
    ParseBatchRunner,
    batch_pages,
)
from ragline.application.parsing.page_store import PageStore
from ragline.application.parsing.read_parse import CachedMarkdown, NotCached, ReadParse, assemble
from ragline.application.parsing.request_parse import ParseResponse, RequestParse
from ragline.application.parsing.settings import ParseCacheSettings
from ragline.application.parsing.submit import (
    PageRangeOutOfBounds,
    SubmitParse,
    Submitted,
    UnknownDocument,
    is_sha256,
    sha256_of,
)

__all__ = [
    "BatchFailure",
    "CachedMarkdown",
    "LocalSource",
    "NotCached",
    "PageRangeOutOfBounds",
    "PageStore",
    "ParseBatchRunner",
    "ParseCacheSettings",
    "ParseResponse",
    "ReadParse",
    "RequestParse",
    "SubmitParse",
    "Submitted",
    "UnknownDocument",
    "assemble",
    "batch_pages",
    "is_sha256",
    "sha256_of",
]
