"""Stable identities for local files ingested through the pipeline.

The business system gives every file integer ids and every task a unique task_id. A local
ingest derives them instead, so that running `ragline ingest` twice on an unchanged file
produces the same task_id: the pipeline's idempotency barrier then answers with the stored
result and nothing runs again. A changed file (new sha256) gets a new task_id under the same
document id, so its chunks replace the old ones.
"""

from __future__ import annotations

import hashlib

import attrs

_MAX_SAFE_INT = 2**53 - 1  # survives JSON readers that use doubles (JavaScript, some Java).


@attrs.frozen
class SourceFile:
    """A local file chosen for ingest: where it is, what it is, and its content hash.

    `path` is absolute and names the document; `relative_name` is for display and for the
    file name the result carries.
    """

    path: str
    relative_name: str
    file_type: str
    size: int
    sha256: str


@attrs.frozen
class FileIdentity:
    """The ids and object keys one local file is ingested under."""

    original_file_id: int
    document_parse_task_id: int
    base_task_id: str
    source_object_key: str
    md_object_key: str


def stable_int(*parts: str) -> int:
    """A positive integer id derived from `parts` (blake2b, 53 bits, never 0)."""
    digest = hashlib.blake2b("\x1f".join(parts).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % _MAX_SAFE_INT + 1


def identify(source: SourceFile, user_id: str, dataset_id: str, nonce: str = "") -> FileIdentity:
    """Ids for `source` in a tenant's dataset; `nonce` forces a fresh task (`--force`)."""
    document = stable_int("document", user_id, dataset_id, source.path)
    name = source.path.replace("\\", "/").rsplit("/", 1)[-1]
    key = f"{user_id}/{dataset_id}/{document:x}/{name}"
    suffix = f"-f{nonce}" if nonce else ""
    return FileIdentity(
        original_file_id=document,
        document_parse_task_id=stable_int("parse-file", str(document), source.sha256),
        base_task_id=f"ingest-{document:x}-{source.sha256[:16]}{suffix}",
        source_object_key=key,
        md_object_key=f"{key}.md",
    )
