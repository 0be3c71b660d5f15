"""ReferencePolicy: the one check of every object reference a caller hands in.

A tenant may name only keys under its own prefix (`<user_id>/…`) in the buckets tenants share
(`tenant_buckets`), for sources, Markdown targets and image prefixes alike. The service may
name any object, as the wire contract says — except ragline's own areas (the parse cache):
no task writes there, whoever sends it, because cache pages are shared by every tenant that
holds the same bytes. A task's Markdown target is never its own source (a delete removes the
Markdown ragline wrote, and sources are the producer's).
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from ragline.application.access.caller import Caller
from ragline.application.tasks import ParseTaskCommand
from ragline.application.tasks.parse_task import is_markdown_source


class ReferenceRefused(PermissionError):
    """The caller may not name this reference; the message names the field and why."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


@attrs.frozen
class ObjectArea:
    """A bucket, or the keys under one prefix of it, that only ragline itself writes."""

    bucket: str
    prefix: str = ""

    def holds(self, bucket: str, key: str) -> bool:
        if bucket != self.bucket:
            return False
        prefix = self.prefix.strip("/")
        return not prefix or key.lstrip("/") == prefix or key.lstrip("/").startswith(prefix + "/")


def _segments_problem(key: str) -> str | None:
    """Why a key is not a plain relative path of names (None when it is)."""
    if not key or key != key.strip():
        return "must not be blank or carry surrounding spaces"
    if key.startswith("/") or "\\" in key:
        return "must be a relative key with forward slashes"
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in key):
        return "must not contain control characters"
    parts = key.rstrip("/").split("/")
    if any(part in ("", ".", "..") for part in parts):
        return "must not contain empty, '.' or '..' segments"
    return None


@attrs.frozen
class ReferencePolicy:
    tenant_buckets: frozenset[str]
    """Buckets where a tenant may name keys under `<user_id>/`."""
    reserved: tuple[ObjectArea, ...] = ()
    """Areas only ragline writes (the parse cache); no task may target them."""

    @classmethod
    def of(
        cls, tenant_buckets: Iterable[str], reserved: Iterable[ObjectArea] = ()
    ) -> ReferencePolicy:
        return cls(frozenset(b for b in tenant_buckets if b), tuple(reserved))

    def reserves(self, bucket: str, key: str) -> bool:
        """The object lies in an area only ragline itself writes (the parse cache)."""
        return any(area.holds(bucket, key) for area in self.reserved)

    # -- single references ----------------------------------------------------------------

    def check_read(self, caller: Caller, field: str, bucket: str, key: str) -> None:
        """`caller` may read the object (a source, a parse request's document)."""
        self._check_owned(caller, field, bucket, key)

    def check_write(self, caller: Caller, field: str, bucket: str, key: str) -> None:
        """`caller` may have ragline write (and later delete) the object."""
        self._check_not_reserved(field, bucket, key)
        self._check_owned(caller, field, bucket, key)

    def check_prefix(self, caller: Caller, field: str, bucket: str, prefix: str) -> None:
        """`caller` may have ragline write objects under `prefix` of `bucket`."""
        self._check_not_reserved(field, bucket, prefix.rstrip("/") + "/")
        inner = prefix.strip("/")
        for area in self.reserved:
            held = area.prefix.strip("/")
            if area.bucket == bucket and (
                not inner or held == inner or held.startswith(inner + "/")
            ):
                raise ReferenceRefused(field, "encloses an area only ragline writes")
        self._check_owned(caller, field, bucket, prefix.rstrip("/") + "/x")

    # -- a whole task -----------------------------------------------------------------------

    def check_task(self, caller: Caller, task: ParseTaskCommand) -> None:
        """Every reference of a parse task, before anything is read or written."""
        if not caller.may_act_for(task.user_id):
            raise ReferenceRefused("user_id", "must be the token's own user")
        source = (task.source_bucket, task.source_object_key)
        self.check_read(caller, "source", *source)
        if not is_markdown_source(task):  # md/markdown: its Markdown is its source, not written
            if (task.md_bucket, task.md_object_key) == source:
                raise ReferenceRefused("md", "must not be the task's own source")
            self.check_write(caller, "md", task.md_bucket, task.md_object_key)
        if task.image_bucket and task.image_prefix:  # images are stored only with both
            self.check_prefix(caller, "image", task.image_bucket, task.image_prefix)

    # -- the rules ------------------------------------------------------------------------

    def _check_not_reserved(self, field: str, bucket: str, key: str) -> None:
        for area in self.reserved:
            if area.holds(bucket, key):
                raise ReferenceRefused(field, "names an area only ragline writes (the parse cache)")

    def _check_owned(self, caller: Caller, field: str, bucket: str, key: str) -> None:
        if caller.is_service:
            return
        if bucket not in self.tenant_buckets:
            raise ReferenceRefused(field, f"bucket {bucket!r} is not open to tenants")
        problem = _segments_problem(key)
        if problem is not None:
            raise ReferenceRefused(field, f"key {problem}")
        if not key.startswith(f"{caller.user_id}/"):
            raise ReferenceRefused(
                field, f"key must start with the caller's prefix {caller.user_id}/"
            )
