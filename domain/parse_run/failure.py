"""Failure codes (docs/design/0001-pipeline-contract.md), their user-facing messages, and the stored
`CODE:detail` reason.

The reason column holds at most 512 characters; truncation keeps a valid string and marks
itself so a reader knows the detail was cut.
"""

from __future__ import annotations

import enum

import attrs

MAX_FAILURE_REASON_LENGTH = 512
TRUNCATION_MARK = "…"
SEPARATOR = ":"


@attrs.frozen
class CodeInfo:
    """What the user is told about a code and whether a manual retry can fix it."""

    zh: str
    en: str
    recoverable: bool


class FailureCode(enum.Enum):
    """Every failure code of docs/design/0001-pipeline-contract.md; the value is what goes before
    ':' in failure_reason."""

    INVALID_TASK_CONTEXT = "INVALID_TASK_CONTEXT"
    DUPLICATE_TASK = "DUPLICATE_TASK"
    INTERRUPTED_TASK = "INTERRUPTED_TASK"
    SOURCE_FILE_NOT_FOUND = "SOURCE_FILE_NOT_FOUND"
    UNSUPPORTED_FILE_TYPE = "UNSUPPORTED_FILE_TYPE"
    TEMP_DISK_FULL = "TEMP_DISK_FULL"
    PARSE_ENGINE_FAILED = "PARSE_ENGINE_FAILED"
    FILE_CONTENT_INVALID = "FILE_CONTENT_INVALID"
    PARSED_FILE_UPLOAD_FAILED = "PARSED_FILE_UPLOAD_FAILED"
    RESULT_NOTIFY_FAILED = "RESULT_NOTIFY_FAILED"
    INTERNAL_UNKNOWN_ERROR = "INTERNAL_UNKNOWN_ERROR"
    LLM_CONFIG_MISSING = "LLM_CONFIG_MISSING"
    EMBEDDING_DIMENSION_UNSUPPORTED = "EMBEDDING_DIMENSION_UNSUPPORTED"
    RETRY_VALIDATION_FAILED = "RETRY_VALIDATION_FAILED"
    CHUNKING_FAILED = "CHUNKING_FAILED"
    VECTORIZING_FAILED = "VECTORIZING_FAILED"
    PRETOKENIZE_FAILED = "PRETOKENIZE_FAILED"
    KEYWORD_DELETE_FAILED = "KEYWORD_DELETE_FAILED"
    KEYWORD_INDEX_UNAVAILABLE = "KEYWORD_INDEX_UNAVAILABLE"
    KEYWORD_INDEXING_FAILED = "KEYWORD_INDEXING_FAILED"
    SPARSE_VECTORIZING_FAILED = "SPARSE_VECTORIZING_FAILED"
    NO_TEXT_LAYER = "NO_TEXT_LAYER"
    MINERU_UNAVAILABLE = "MINERU_UNAVAILABLE"

    @property
    def info(self) -> CodeInfo:
        """Messages and recoverability of this code."""
        return CODE_INFO[self]

    @property
    def recoverable(self) -> bool:
        """True when a manual retry (possibly after the user fixes a setting) can succeed."""
        return CODE_INFO[self].recoverable

    def user_message(self, language: str = "zh") -> str:
        """The message shown to the end user; Chinese unless 'en' is asked for."""
        info = CODE_INFO[self]
        return info.en if language == "en" else info.zh


_C = FailureCode
CODE_INFO: dict[FailureCode, CodeInfo] = {
    _C.INVALID_TASK_CONTEXT: CodeInfo(
        "解析任务信息与文件记录不一致，请重新上传文件。",
        "The parse task does not match the file record; please upload the file again.",
        False,
    ),
    _C.DUPLICATE_TASK: CodeInfo(
        "该解析任务已提交过，请勿重复提交。",
        "This parse task was already submitted.",
        False,
    ),
    _C.INTERRUPTED_TASK: CodeInfo(
        "解析任务被中断，请重试。",
        "The parse task was interrupted; please retry.",
        True,
    ),
    _C.SOURCE_FILE_NOT_FOUND: CodeInfo(
        "找不到源文件，请重新上传。",
        "The source file was not found; please upload it again.",
        False,
    ),
    _C.UNSUPPORTED_FILE_TYPE: CodeInfo(
        "暂不支持该文件类型。",
        "This file type is not supported.",
        False,
    ),
    _C.TEMP_DISK_FULL: CodeInfo(
        "服务器临时空间不足，请稍后重试。",
        "The server ran out of temporary disk space; please retry later.",
        True,
    ),
    _C.PARSE_ENGINE_FAILED: CodeInfo(
        "文件解析失败，请稍后重试。",
        "The file could not be parsed; please retry later.",
        True,
    ),
    _C.FILE_CONTENT_INVALID: CodeInfo(
        "文件已损坏、已加密或内容与文件类型不符，请检查文件后重新上传。",
        "The file is damaged, password-protected or not what its type says; check it and "
        "upload it again.",
        False,
    ),
    _C.PARSED_FILE_UPLOAD_FAILED: CodeInfo(
        "解析结果保存失败，请稍后重试。",
        "The parsed result could not be stored; please retry later.",
        True,
    ),
    _C.RESULT_NOTIFY_FAILED: CodeInfo(
        "解析结果通知失败，请稍后重试。",
        "The parse result could not be delivered; please retry later.",
        True,
    ),
    _C.INTERNAL_UNKNOWN_ERROR: CodeInfo(
        "系统内部错误，请稍后重试。",
        "An internal error occurred; please retry later.",
        True,
    ),
    _C.LLM_CONFIG_MISSING: CodeInfo(
        "缺少默认模型配置，请先完成模型配置后重试。",
        "A default model configuration is missing; configure one and retry.",
        True,
    ),
    _C.EMBEDDING_DIMENSION_UNSUPPORTED: CodeInfo(
        "向量模型维度不受支持，请更换向量模型后重试。",
        "The embedding model's dimension is not supported; choose another model and retry.",
        True,
    ),
    _C.RETRY_VALIDATION_FAILED: CodeInfo(
        "重试请求无效或已有其他重试在进行中。",
        "The retry request is invalid or another retry already took over.",
        False,
    ),
    _C.CHUNKING_FAILED: CodeInfo(
        "文档分片失败，请重试。",
        "Splitting the document into chunks failed; please retry.",
        True,
    ),
    _C.VECTORIZING_FAILED: CodeInfo(
        "向量化失败，请重试。",
        "Building the vector index failed; please retry.",
        True,
    ),
    _C.PRETOKENIZE_FAILED: CodeInfo(
        "分词失败，请重试。",
        "Tokenising the document failed; please retry.",
        True,
    ),
    _C.KEYWORD_DELETE_FAILED: CodeInfo(
        "清理旧关键词索引失败，请稍后重试。",
        "Removing the old keyword index failed; please retry later.",
        True,
    ),
    _C.KEYWORD_INDEX_UNAVAILABLE: CodeInfo(
        "关键词索引服务不可用，请稍后重试。",
        "The keyword index is unavailable; please retry later.",
        True,
    ),
    _C.KEYWORD_INDEXING_FAILED: CodeInfo(
        "关键词索引写入失败，请重试。",
        "Writing the keyword index failed; please retry.",
        True,
    ),
    _C.SPARSE_VECTORIZING_FAILED: CodeInfo(
        "稀疏向量化失败，请重试。",
        "Building the sparse vector index failed; please retry.",
        True,
    ),
    _C.NO_TEXT_LAYER: CodeInfo(
        "文件没有可读的文本层（扫描件），请改用带 OCR 的解析方式（auto 或 quality）后重新上传。",
        "The file has no text layer (a scan); parse it with OCR (auto or the quality tier).",
        False,
    ),
    _C.MINERU_UNAVAILABLE: CodeInfo(
        "MinerU 解析服务未配置，请联系管理员或改用其他 PDF 解析方式。",
        "The MinerU parser is not configured; ask the operator or choose another PDF parser.",
        False,
    ),
}
del _C


def _fit(code: FailureCode, detail: str) -> str:
    """Cut `detail` so `CODE:detail` fits the column; never leave half a surrogate pair."""
    room = MAX_FAILURE_REASON_LENGTH - len(code.value) - len(SEPARATOR)
    if len(detail) <= room:
        return detail
    kept = detail[: room - len(TRUNCATION_MARK)]
    if kept and "\ud800" <= kept[-1] <= "\udbff":
        kept = kept[:-1]
    return kept + TRUNCATION_MARK


def storable_text(text: str) -> str:
    """`text` as valid Unicode: surrogate pairs joined, lone surrogates replaced by U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


@attrs.frozen
class FailureReason:
    """A stored failure reason: a code and a detail that together fit 512 characters.

    Build with `FailureReason.of` (truncates); `parse` reads the stored text back.
    """

    code: FailureCode
    detail: str = ""

    def __attrs_post_init__(self) -> None:
        if len(self.text) > MAX_FAILURE_REASON_LENGTH:
            raise ValueError(f"failure_reason longer than {MAX_FAILURE_REASON_LENGTH} characters")

    @classmethod
    def of(cls, code: FailureCode, detail: str = "") -> FailureReason:
        """Reason for `code`, truncating a long detail and marking the cut. Text no UTF-8
        column can hold (lone surrogates, e.g. from a badly decoded file name) becomes
        U+FFFD; a surrogate pair becomes the character it encodes."""
        return cls(code, _fit(code, storable_text(detail)))

    @classmethod
    def parse(cls, text: str) -> FailureReason:
        """Read a stored `CODE:detail` back; ValueError when the code is unknown."""
        code, _, detail = text.partition(SEPARATOR)
        return cls(FailureCode(code), detail)

    @property
    def text(self) -> str:
        """The stored form, `CODE:detail`."""
        return f"{self.code.value}{SEPARATOR}{self.detail}"

    @property
    def truncated(self) -> bool:
        """True when the detail was cut to fit (a cut ends one short of the limit when it
        dropped the first half of a surrogate pair)."""
        near_limit = len(self.text) >= MAX_FAILURE_REASON_LENGTH - 1
        return near_limit and self.detail.endswith(TRUNCATION_MARK)
