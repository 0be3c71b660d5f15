"""The tenant scope of one document: every chunk, index write and query carries it."""

from __future__ import annotations

import attrs


@attrs.frozen
class DocumentScope:
    """Every chunk, index write and query is scoped by tenant and document."""

    user_id: str
    dataset_id: str
    doc_id: str
