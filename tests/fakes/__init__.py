"""In-memory fakes of every port the parse-task pipeline uses, with fault injection.

The fake unit of work keeps the storage semantics the use case relies on: uncommitted writes
are invisible to others, writers lock the rows they touch until commit/rollback (so a
compare-and-set sees the latest committed row, as on PostgreSQL/MySQL), version CAS on save,
supersede arbitrated by rowcount, chunk moves over allowed prior states, one outbox row per
task.
"""
