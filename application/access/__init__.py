"""Who calls and what it may name: the trust boundary of every entry point (docs/security.md).

One rule for every path in: the broker's consumer, the HTTP API and the CLI hand the caller and
the references it names (buckets, keys, prefixes) to `ReferencePolicy` before any work. The
parse cache's entries (batch ids, sha256s) are shown to a tenant only for bytes it holds
(`parse_cache`: one check, used by every reader of the cache). A document reference (user,
dataset, doc_id) is checked by `owned_document`.
"""

from ragline.application.access.caller import Caller
from ragline.application.access.documents import owned_document
from ragline.application.access.parse_cache import (
    may_see,
    record_holder,
    visible_batches,
    visible_sha256s,
)
from ragline.application.access.references import (
    ObjectArea,
    ReferencePolicy,
    ReferenceRefused,
)

__all__ = [
    "Caller",
    "ObjectArea",
    "ReferencePolicy",
    "ReferenceRefused",
    "may_see",
    "owned_document",
    "record_holder",
    "visible_batches",
    "visible_sha256s",
]
