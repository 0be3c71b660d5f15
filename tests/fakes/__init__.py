"""In-memory fakes of every port the parse-task pipeline uses, with fault injection.

Each fake runs the contract kit of its port (`tests/fakes/test_fakes_hold_the_kits.py`), so
the pipeline tests built on them show what the real adapters would do. A fake leaves out
only a capability mixin it honestly lacks:

- `unit_of_work.FakeDatabase` (its repositories in `repositories/`, one module per port):
  every persistence kit (`UnitOfWorkContract`, `ParseRunRepositoryContract`, ...); lacks
  API keys encrypted at rest (leaves out `EncryptedApiKeysContract`).
- `indexes.FakeVectorIndex`: `VectorIndexContract`; lacks IDF-weighted sparse ranking
  (leaves out `IdfSparseRankingContract`).
- `indexes.FakeKeywordIndex`: the whole `KeywordIndexContract` (scores count term
  occurrences, not BM25).
- `storage.FakeObjectStorage`: `ObjectStorageContract`; lacks presigned URLs that download
  (leaves out `PresignedUrlContract`).
- `messaging.FakeBus` (with FakeDelivery, FakeBusSource, FakePublisher): the whole
  `MessagingContract`.
- `models.FakeEmbedder`: `EmbedderContract`; its vectors are hashes of the text and carry no
  meaning (leaves out `SemanticSimilarityContract`).

`ParseRunMachine` (the ParseRun properties) runs on `FakeDatabase` too, as on the SQL store.

The fake unit of work keeps the storage semantics the use case relies on: uncommitted writes
are invisible to others, writers lock the rows they touch until commit/rollback (so a
compare-and-set sees the latest committed row, as on PostgreSQL/MySQL), version CAS on save,
supersede arbitrated by rowcount, chunk moves over allowed prior states, one outbox row per
task, times stored in UTC.

The tokenizer and sparse encoder of `models.py`, `parsing.py` and `clock.py` have no kit.
"""
