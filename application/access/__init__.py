"""Who calls and what it may name: the trust boundary of every entry point (docs/security.md).

One rule for every path in: the broker's consumer, the HTTP API and the CLI hand the caller and
the references it names (buckets, keys, prefixes) to `ReferencePolicy` before any work.
"""

from ragline.application.access.caller import Caller
from ragline.application.access.references import (
    ObjectArea,
    ReferencePolicy,
    ReferenceRefused,
)

__all__ = ["Caller", "ObjectArea", "ReferencePolicy", "ReferenceRefused"]
