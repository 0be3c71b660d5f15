"""The re-embedding loop's timings (issue 21), as the use cases take them; kept beside
`factories` so the container's re-embedding block reads alone."""

from __future__ import annotations

from datetime import timedelta

from ragline.bootstrap.settings_reembed import ReembedSettings


def lease(settings: ReembedSettings) -> timedelta:
    return timedelta(seconds=settings.lease_seconds)


def poll(settings: ReembedSettings) -> timedelta:
    return timedelta(seconds=settings.poll_seconds)
