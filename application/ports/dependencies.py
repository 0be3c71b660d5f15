"""DependencyUnavailable: a store or broker ragline needs does not answer.

Raised by adapters for connection-level failures (refused, reset, timed out, locked past
the busy timeout), never for a request the dependency answered with a refusal. It is not
the message's fault: the task consumer leaves the delivery on the broker, holds the backlog
and resumes once the dependency answers again, instead of dead-lettering it (issue 19).
"""

from __future__ import annotations


class DependencyUnavailable(Exception):
    """`dependency` (database, object storage, keyword index, vector index, message bus)
    did not answer."""

    def __init__(self, dependency: str, detail: str) -> None:
        super().__init__(f"{dependency} unavailable: {detail}")
        self.dependency = dependency
        self.detail = detail


def unavailable_dependency(error: BaseException) -> DependencyUnavailable | None:
    """The DependencyUnavailable `error` is or was raised from (its cause/context chain)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, DependencyUnavailable):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None
