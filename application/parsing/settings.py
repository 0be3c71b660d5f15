"""Knobs of the parse cache (bootstrap fills them from pydantic settings)."""

from __future__ import annotations

from datetime import timedelta

import attrs

from ragline.application.ports.parser import ParseLimits


@attrs.frozen
class ParseCacheSettings:
    """`bucket`/`prefix`: where per-page Markdown (and uploaded sources) live.
    `pages_per_batch`: the largest page range one batch parses (batches of one file run in
    parallel across workers). `lease`: how long a claim holds without renewal before another
    worker may take the batch over (a worker renews every `lease / 3` while it parses).
    `poll`: how often a waiter or an idle worker looks again."""

    bucket: str = "parse-cache"
    prefix: str = "v1"
    pages_per_batch: int = 50
    lease: timedelta = timedelta(seconds=60)
    poll: timedelta = timedelta(milliseconds=200)
    limits: ParseLimits = attrs.field(factory=ParseLimits)

    def __attrs_post_init__(self) -> None:
        if self.pages_per_batch < 1:
            raise ValueError("pages_per_batch must be at least 1")
        if self.lease <= timedelta(0):
            raise ValueError("the lease must be positive")
