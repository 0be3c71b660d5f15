"""What a repository or unit of work raises when the store says no."""

from ragline.application.ports.dependencies import DependencyUnavailable


class PersistenceError(Exception):
    """The store failed (connection lost, constraint the caller did not expect, ...)."""


class DatabaseUnavailable(PersistenceError, DependencyUnavailable):
    """The database did not answer (connection refused or lost, timed out, locked)."""

    def __init__(self, detail: str) -> None:
        DependencyUnavailable.__init__(self, "database", detail)


class DuplicateTaskId(PersistenceError):
    """A run (or parsed log) with this task_id already exists: the idempotency barrier."""

    def __init__(self, task_id: str) -> None:
        super().__init__(f"task_id already recorded: {task_id}")
        self.task_id = task_id


class ConcurrentUpdate(PersistenceError):
    """A compare-and-set matched no row: someone else changed the row since it was read."""
