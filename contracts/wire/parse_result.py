"""ParseResult: the one terminal notification per run, sent on the result topic
(docs/design/0005-wire-contract.md)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StrictStr

from ragline.contracts.wire.parse_task import Long, TaskId

FAILURE_REASON_MAX_CHARS = 512


class TaskStatus(StrEnum):
    SUCCESS = "success"
    FAILED = "failed"


class ParseResult(BaseModel):
    """Terminal state of one run. There is no partial success."""

    model_config = ConfigDict(extra="ignore", frozen=True, title="ParseResult")

    task_id: TaskId = Field(description="The task_id of the request; routing key.")
    original_file_id: Long = Field(description="From the request.")
    document_parsed_log_id: Long = Field(
        description="document_parsed_log.id: where the producer reads the run's details."
    )
    dataset_id: Long = Field(description="From the request.")
    user_id: Long = Field(description="From the request.")
    task_status: TaskStatus = Field(description="success or failed.")
    parse_finished_at: AwareDatetime = Field(
        description="When the run reached its terminal state; ISO 8601 with offset."
    )
    failure_reason: Annotated[StrictStr, Field(max_length=FAILURE_REASON_MAX_CHARS)] | None = Field(
        default=None, description="CODE:detail summary when failed."
    )
    user_message: StrictStr | None = Field(
        default=None, description="Text that can be shown to the user as is."
    )

    @property
    def routing_key(self) -> str:
        """Result messages are routed by task id."""
        return self.task_id
