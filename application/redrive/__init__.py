"""Task dead letters back onto the task topic (`ragline tasks redrive`)."""

from ragline.application.redrive.task_dead_letters import (
    RedriveTaskDeadLetters,
    TaskRedriveReport,
)

__all__ = ["RedriveTaskDeadLetters", "TaskRedriveReport"]
