"""Re-embedding a user's chunks into a shadow embedding generation, swapped in when complete
(issue 21; docs/state-machine.md, "The re-embedding machine").

Pure: stdlib + attrs, times and ids passed in.
"""

from ragline.domain.reembedding.batch import (
    CopyBatch,
    CopyBatchStatus,
    ids_digest,
    split,
    within,
)
from ragline.domain.reembedding.errors import (
    IllegalCopyBatchMove,
    IllegalGenerationMove,
    IllegalReembeddingMove,
    NotCaughtUp,
    ReembeddingError,
)
from ragline.domain.reembedding.generations import EmbeddingSpec, Generations
from ragline.domain.reembedding.reembedding import (
    ACTIVE_REEMBEDDING,
    TERMINAL_REEMBEDDING,
    Reembedding,
    ReembeddingStatus,
)

__all__ = [
    "ACTIVE_REEMBEDDING",
    "TERMINAL_REEMBEDDING",
    "CopyBatch",
    "CopyBatchStatus",
    "EmbeddingSpec",
    "Generations",
    "IllegalCopyBatchMove",
    "IllegalGenerationMove",
    "IllegalReembeddingMove",
    "NotCaughtUp",
    "Reembedding",
    "ReembeddingError",
    "ReembeddingStatus",
    "ids_digest",
    "split",
    "within",
]
