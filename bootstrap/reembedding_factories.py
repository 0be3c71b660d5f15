"""The re-embedding loop's timings (issue 21), as the use cases take them; kept beside
`factories` so the container's re-embedding block reads alone."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

from ragline.application.ports.background_work import BackgroundWork
from ragline.bootstrap.settings_reembed import ReembedSettings


def lease(settings: ReembedSettings) -> timedelta:
    return timedelta(seconds=settings.lease_seconds)


def poll(settings: ReembedSettings) -> timedelta:
    return timedelta(seconds=settings.poll_seconds)


def background(settings: ReembedSettings) -> Iterator[BackgroundWork]:
    """The copy's model calls on one thread at `RAGLINE_REEMBED_NICE`."""
    from ragline.adapters.background_work.niced_thread import NicedThread

    work = NicedThread(settings.nice)
    try:
        yield work
    finally:
        work.close()
