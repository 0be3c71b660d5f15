"""PipelineMetrics on prometheus-client's default registry (served at /metrics)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from prometheus_client import Counter, Gauge, Histogram

RUNS = Counter(
    "ragline_runs_finished_total",
    "Parse runs that reached a terminal state",
    ["status", "failure_code"],
)
STAGES = Histogram(
    "ragline_stage_duration_seconds",
    "Time a stage worked before it succeeded or failed",
    ["stage", "status"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900),
)
IN_FLIGHT = Gauge("ragline_tasks_in_flight", "Task deliveries being handled now")
REDELIVERED = Counter(
    "ragline_task_redeliveries_total", "Deliveries of a task_id already known", ["outcome"]
)
HELD = Counter(
    "ragline_tasks_held_total",
    "Deliveries left on the broker because a dependency did not answer (the consumer then "
    "pauses until it answers)",
    ["dependency"],
)
REDRIVEN = Counter(
    "ragline_task_redrives_total", "Task dead letters published to the task topic again"
)
EMBEDDED = Counter("ragline_embedded_texts_total", "Texts embedded by the dense model")
EMBEDDING_SECONDS = Counter(
    "ragline_embedding_seconds_total", "Time spent in the dense model (texts/s = rate ratio)"
)
OUTBOX_DUE = Gauge(
    "ragline_outbox_due_rows", "Result rows due for publishing at the last relay pass"
)
OUTBOX_ROWS = Gauge(
    "ragline_outbox_rows",
    "Outbox rows per status when last counted (PENDING: results owed; DEAD: given up, "
    "waiting for `ragline outbox redrive`)",
    ["status"],
)
RELAYED = Counter("ragline_outbox_results_total", "Outbox rows handled by the relay", ["outcome"])
SEARCHES = Counter(
    "ragline_searches_total",
    "Search queries by outcome (complete; degraded: some retriever failed; unavailable: none "
    "answered, HTTP 503)",
    ["outcome"],
)
RETRIEVER_FAILURES = Counter(
    "ragline_search_retriever_failures_total",
    "Search queries one retriever (dense, sparse, bm25) failed to answer",
    ["retriever"],
)
REEMBEDDED = Counter(
    "ragline_reembedded_chunks_total",
    "Chunks a re-embedding copied into its shadow generation (a batch taken over after a "
    "lapsed lease counts again)",
)
REEMBEDDINGS = Counter(
    "ragline_reembeddings_total",
    "Re-embeddings that entered each status in this process (PLANNED, COPYING, READY, "
    "SWAPPED, CANCELLED, FAILED)",
    ["status"],
)
TAKEN_OVER = Counter(
    "ragline_reembedding_batches_taken_over_total",
    "Copy batches claimed again after their holder's lease ran out (a worker died mid-batch)",
)


class PrometheusMetrics:
    def run_finished(self, status: str, failure_code: str | None) -> None:
        RUNS.labels(status, failure_code or "").inc()

    def stage_finished(self, stage: str, status: str, seconds: float) -> None:
        STAGES.labels(stage, status).observe(seconds)

    def task_started(self) -> None:
        IN_FLIGHT.inc()

    def task_ended(self) -> None:
        IN_FLIGHT.dec()

    def redelivered(self, outcome: str) -> None:
        REDELIVERED.labels(outcome).inc()

    def task_held(self, dependency: str) -> None:
        HELD.labels(dependency).inc()

    def tasks_redriven(self, count: int) -> None:
        REDRIVEN.inc(count)

    def texts_embedded(self, count: int, seconds: float) -> None:
        EMBEDDED.inc(count)
        EMBEDDING_SECONDS.inc(seconds)

    def results_relayed(self, due: int, sent: int, retried: int, dead: int) -> None:
        OUTBOX_DUE.set(due)
        for outcome, count in (("sent", sent), ("retried", retried), ("dead", dead)):
            if count:
                RELAYED.labels(outcome).inc(count)

    def outbox_rows(self, counts: Mapping[str, int]) -> None:
        for status, count in counts.items():
            OUTBOX_ROWS.labels(status).set(count)

    def search_answered(self, outcome: str, missing: Sequence[str]) -> None:
        SEARCHES.labels(outcome).inc()
        for retriever in missing:
            RETRIEVER_FAILURES.labels(retriever).inc()

    def chunks_reembedded(self, count: int) -> None:
        REEMBEDDED.inc(count)

    def reembedding_entered(self, status: str) -> None:
        REEMBEDDINGS.labels(status).inc()

    def copy_batch_taken_over(self) -> None:
        TAKEN_OVER.inc()
