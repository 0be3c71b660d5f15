"""Re-embedding a user's chunks into a shadow generation (issue 21): plan, copy, swap, cancel.

The use cases over `uow.reembeddings`, `uow.chunks` and the vector index's `VectorSpaces`
capability; `ragline.domain.reembedding` holds the rules, docs/state-machine.md the machine.
"""

from ragline.application.reembedding.progress import Progress, progress
from ragline.application.reembedding.use_cases import (
    AlreadyReembedding,
    ReembeddingNotFound,
    Reembeddings,
)

__all__ = [
    "AlreadyReembedding",
    "Progress",
    "ReembeddingNotFound",
    "Reembeddings",
    "progress",
]
