"""Reading objects through the temp workspace, and the error mapping CLEANING and CHUNKING
share (missing source, full temp disk)."""

from __future__ import annotations

import asyncio
import errno
from pathlib import Path

from ragline.application.error_text import StageFailure, describe
from ragline.application.pipeline.stages.needs import HasObjects
from ragline.application.ports.object_storage import (
    InvalidObjectKey,
    ObjectNotFound,
    StorageError,
)
from ragline.application.workspace import discard
from ragline.domain.parse_run import FailureCode


def is_disk_full(error: BaseException) -> bool:
    """ENOSPC anywhere in the cause chain (adapters may wrap the OSError)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno == errno.ENOSPC:
            return True
        current = current.__cause__ or current.__context__
    return False


def disk_full(error: BaseException) -> StageFailure:
    return StageFailure(FailureCode.TEMP_DISK_FULL, describe(error))


def refused_coordinates(bucket: str, key: str, error: InvalidObjectKey) -> StageFailure:
    """A bucket or key the store refuses (`..`, absolute, too long) came from the message:
    no retry can fix it, so it is INVALID_TASK_CONTEXT, not a recoverable storage error."""
    return StageFailure(FailureCode.INVALID_TASK_CONTEXT, f"{bucket}/{key}: {describe(error)}")


async def download(
    services: HasObjects, bucket: str, key: str, dest: Path, missing: FailureCode
) -> None:
    """Stream one object into `dest`; a missing object fails with `missing`."""
    try:
        await services.storage.get_to_file(bucket, key, dest)
    except ObjectNotFound as error:
        raise StageFailure(missing, f"{bucket}/{key}: {describe(error)}") from error
    except InvalidObjectKey as error:
        raise refused_coordinates(bucket, key, error) from error
    except (StorageError, OSError) as error:
        if is_disk_full(error):
            raise disk_full(error) from error
        raise


def _read_text(path: Path) -> str:
    return path.read_text(encoding="utf-8-sig", errors="replace")


async def read_markdown(
    services: HasObjects, task_id: str, bucket: str, key: str, missing: FailureCode
) -> str:
    """Download a Markdown object to the task's temp file and read it (off the loop); the
    temp file is gone when this returns."""
    with services.workspace.temp_file(task_id, "md") as path:
        await download(services, bucket, key, path, missing)
        try:
            text = await asyncio.to_thread(_read_text, path)
        finally:
            discard(path)
    return text
