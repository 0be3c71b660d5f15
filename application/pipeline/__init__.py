"""The parse-task use case: one ParseTask in, one terminal result out
(docs/design/0001-pipeline-contract.md, docs/design/0005-wire-contract.md).

`ParseTaskPipeline` is the thin orchestrator (validate, idempotency, retry branch) of a task
the consumer edge already decoded (`ragline.application.tasks.ParseTaskCommand`);
`stages/` holds the one Stage template and a class per declared stage; `ResultOutbox` writes
the result a terminal run is owed; `OutboxRelay` publishes the results the pipeline
committed.
"""
