"""Each adapter's own settings, nested in `Settings` under its own environment prefix.

`Settings` reads them with the nested delimiter `_` split once: the field `kafka` takes
every `RAGLINE_KAFKA_<NAME>` variable, so the names docs/settings.md lists stay those the
flat settings had. A new vendor adds its model here and one field on `Settings`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr
from pydantic.fields import FieldInfo


class VendorSettings(BaseModel):
    """A vendor's settings: unknown `RAGLINE_<PREFIX>_*` names belong to someone else
    (RAGLINE_EMBEDDING_BATCH_SIZE is a shared setting beside the `embedding` model's)."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class KafkaSettings(VendorSettings):
    bootstrap_servers: str = Field(
        default="127.0.0.1:9092", description="Kafka brokers, comma separated."
    )
    group_id: str = Field(
        default="ragline-parse-workers", description="Consumer group of the parse workers."
    )
    security_protocol: str = Field(
        default="PLAINTEXT", description="PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL."
    )
    sasl_mechanism: str | None = Field(
        default=None, description="PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (with SASL_*)."
    )
    sasl_username: str | None = Field(default=None, description="SASL user name.")
    sasl_password: SecretStr | None = Field(default=None, description="SASL password (secret).")
    max_poll_interval_ms: int = Field(
        default=3_600_000,
        description="Longest time one task may take before the group evicts the worker.",
    )


class RabbitmqSettings(VendorSettings):
    url: str = Field(
        default="amqp://guest:guest@127.0.0.1:5672/%2F",
        description="AMQP URL of the RabbitMQ broker.",
    )


class S3Settings(VendorSettings):
    """Both object stores that speak S3 (s3 and minio) read these."""

    endpoint_url: str | None = Field(
        default=None, description="S3/MinIO endpoint URL (empty = AWS)."
    )
    access_key: str | None = Field(default=None, description="S3/MinIO access key.")
    secret_key: SecretStr | None = Field(default=None, description="S3/MinIO secret key (secret).")
    region: str = Field(default="us-east-1", description="S3 region.")


class QdrantSettings(VendorSettings):
    url: str | None = Field(default=None, description="Qdrant server (vector_index=qdrant).")
    collection: str = Field(
        default="ragline_chunks", description="Qdrant collection (named dense + sparse vectors)."
    )


class PgvectorSettings(VendorSettings):
    url: str | None = Field(
        default=None,
        description="PostgreSQL with the vector extension (vector_index=pgvector); default: "
        "database_url. Tables ragline_chunks_points and _terms (docs/persistence.md).",
    )
    m: int = Field(default=16, ge=2, description="HNSW links per node (at index creation).")
    ef_construction: int = Field(
        default=64, ge=4, description="HNSW build candidate list (at index creation)."
    )
    ef_search: int = Field(
        default=40,
        ge=1,
        description="HNSW query candidate list per scan step (at least the limit).",
    )
    exact_scope_points: int = Field(
        default=20_000,
        ge=0,
        description="A query whose tenant scope holds at most this many points is answered "
        "exactly (btree + sort, recall 1.0) instead of by the HNSW scan; 0: always HNSW.",
    )


class ElasticsearchSettings(VendorSettings):
    url: str | None = Field(
        default=None, description="Elasticsearch URL (with keyword_index=elasticsearch)."
    )
    index: str = Field(default="ragline_chunks", description="Elasticsearch index name.")


class OpenAIEmbeddingSettings(VendorSettings):
    base_url: str | None = Field(
        default=None, description="OpenAI-compatible embeddings endpoint (embedder=openai)."
    )
    model: str | None = Field(
        default=None, description="Model name sent to the endpoint (embedder=openai)."
    )
    api_key: SecretStr | None = Field(
        default=None, description="API key for the endpoint (secret; stored encrypted per user)."
    )
    dimension: int | None = Field(
        default=None, description="Vector size the endpoint returns (embedder=openai)."
    )


def leaves(model: BaseModel) -> list[object]:
    """Every setting's value, those of the nested vendor models included."""
    found: list[object] = []
    for name in type(model).model_fields:
        value = getattr(model, name)
        found += leaves(value) if isinstance(value, BaseModel) else [value]
    return found


def nested_values(fields: Mapping[str, FieldInfo], values: dict[str, Any]) -> dict[str, Any]:
    """`kafka_group_id=x` as `kafka={"group_id": x}`, the split the environment gets."""
    aliases = {
        choice
        for field in fields.values()
        for choice in getattr(field.validation_alias, "choices", [])
        if isinstance(choice, str)
    }
    shaped: dict[str, Any] = {}
    for key, value in values.items():
        if key in fields or key in aliases or key.startswith("_"):
            shaped[key] = value
            continue
        head, _, rest = key.partition("_")
        model = fields[head].annotation if head in fields else None
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise TypeError(f"Settings has no setting {key!r}")
        if rest not in model.model_fields:
            raise TypeError(f"Settings has no setting {key!r} ({head} has no {rest!r})")
        part = shaped.setdefault(head, {})
        if not isinstance(part, dict):
            raise TypeError(f"{key!r} given beside a whole {head!r}")
        part[rest] = value
    return shaped
