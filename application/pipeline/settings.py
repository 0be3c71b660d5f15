"""Knobs of the parse-task use case, chosen by bootstrap from pydantic settings."""

from __future__ import annotations

from datetime import timedelta
from enum import StrEnum

import attrs

from ragline.application.ports.parser import ParseLimits, PdfParserBackend


class MineruPolicy(StrEnum):
    """What a task asking for mineru gets when no MinerU client is configured."""

    FAIL = "fail"  # FAILED MINERU_UNAVAILABLE
    FALLBACK = "fallback"  # `default_pdf_backend` parses it, and the run records that


@attrs.frozen
class PipelineSettings:
    """What the stages and the orchestrator need besides ports.

    `language` picks the user_message language of results ("zh" by default, as the
    producer expects); batch sizes bound memory per embed / encode call. Without a MinerU
    client (StageServices.mineru is None), tasks asking for mineru follow `mineru_unavailable`:
    fail, or fall back to `default_pdf_backend`; the backend that really parsed is recorded.
    """

    result_topic: str = "tolink.rag.parse_result"  # the default PARSE_RESULT_TOPIC
    language: str = "zh"
    embed_batch_size: int = 64
    sparse_batch_size: int = 256
    presigned_url_ttl: timedelta = timedelta(hours=1)
    mineru_unavailable: MineruPolicy = MineruPolicy.FALLBACK
    default_pdf_backend: PdfParserBackend = PdfParserBackend.AUTO
    parse_limits: ParseLimits = attrs.field(factory=ParseLimits)
    # a running run's heartbeat; an unfinished run without one for `stale_after` has lost
    # its worker (or its failure could not be recorded) and the stale-run sweep ends it
    heartbeat_interval: timedelta = timedelta(seconds=30)
    stale_after: timedelta = timedelta(minutes=15)
    contextual_headers: bool = False
    """Index each child with its section path in front (chunk_header); hits show the text."""

    def __attrs_post_init__(self) -> None:
        if self.embed_batch_size < 1 or self.sparse_batch_size < 1:
            raise ValueError("batch sizes must be at least 1")
        if self.heartbeat_interval <= timedelta(0):
            raise ValueError("heartbeat_interval must be positive")
        if self.stale_after < 3 * self.heartbeat_interval:
            raise ValueError("stale_after must be at least three heartbeat intervals")
