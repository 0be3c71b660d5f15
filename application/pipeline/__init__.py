"""The parse-task use case: one ParseTask message in, one terminal ParseResult out (SPEC §3-§5).

`ParseTaskPipeline` is the thin orchestrator (decode, validate, idempotency, retry branch);
`stages/` holds the one Stage template and the six stages; `TaskConsumer` settles bus
deliveries; `OutboxRelay` publishes the results the pipeline committed.
"""
