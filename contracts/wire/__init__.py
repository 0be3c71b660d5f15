"""Wire contracts: the ParseTask / ParseResult messages exchanged with the business system."""

from ragline.contracts.wire.codec import (
    DEFAULT_MAX_TASK_BYTES,
    RejectedMessage,
    RejectionKind,
    decode_parse_result,
    decode_parse_task,
    encode_parse_result,
    encode_parse_task,
)
from ragline.contracts.wire.parse_result import FAILURE_REASON_MAX_CHARS, ParseResult, TaskStatus
from ragline.contracts.wire.parse_task import (
    FILE_TYPES,
    LONG_MAX,
    LONG_MIN,
    ParseTask,
    PdfParserBackend,
    TaskIssuer,
    TriggerMode,
)
from ragline.contracts.wire.topics import (
    DEAD_LETTER_ATTEMPTS_HEADER,
    DEAD_LETTER_ORIGIN_HEADER,
    DEAD_LETTER_REASON_HEADER,
    DEFAULT_PARSE_RESULT_TOPIC,
    DEFAULT_PARSE_TASK_TOPIC,
    dead_letter_topic,
)

__all__ = [
    "DEAD_LETTER_ATTEMPTS_HEADER",
    "DEAD_LETTER_ORIGIN_HEADER",
    "DEAD_LETTER_REASON_HEADER",
    "DEFAULT_MAX_TASK_BYTES",
    "DEFAULT_PARSE_RESULT_TOPIC",
    "DEFAULT_PARSE_TASK_TOPIC",
    "FAILURE_REASON_MAX_CHARS",
    "FILE_TYPES",
    "LONG_MAX",
    "LONG_MIN",
    "ParseResult",
    "ParseTask",
    "PdfParserBackend",
    "RejectedMessage",
    "RejectionKind",
    "TaskIssuer",
    "TaskStatus",
    "TriggerMode",
    "dead_letter_topic",
    "decode_parse_result",
    "decode_parse_task",
    "encode_parse_result",
    "encode_parse_task",
]
