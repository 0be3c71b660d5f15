"""Searches for one tenant (user, dataset) never return another tenant's documents."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import EXAMPLES, Ingested
from tests.e2e.ragline_process import ingest_counts, search_batch

QUERIES = [
    ("bees", "queen bee honey comb hive frames"),
    ("tea", "how to brew green tea"),
    ("zh", "太极拳练习时应该怎样呼吸？"),
]


def test_second_tenant_ingest_succeeds(examples_ingested: Ingested) -> None:
    done = examples_ingested.tenant2
    assert done.returncode == 0, done.explain()
    counts = ingest_counts(done)
    assert (counts.ingested, counts.unchanged, counts.failed) == (1, 0, 0), done.explain()


def test_first_tenant_never_sees_the_second_tenants_note(examples_ingested: Ingested) -> None:
    answers = dict(search_batch(examples_ingested.data_dir, QUERIES))
    own = {p.name for p in EXAMPLES.iterdir()}
    for query_id, hits in answers.items():
        assert hits, query_id
        assert {h["source"] for h in hits} <= own, (query_id, hits)
        assert not any("queen bee" in h["text"] for h in hits), (query_id, hits)


def test_second_tenant_sees_only_its_note(examples_ingested: Ingested) -> None:
    answers = dict(
        search_batch(examples_ingested.data_dir, QUERIES, "--user", "2", "--dataset", "9")
    )
    for query_id, hits in answers.items():
        assert hits, query_id  # its own note is the only candidate, for every question
        assert {h["source"] for h in hits} == {"beekeeping-log.md"}, (query_id, hits)
    assert "queen bee" in answers["bees"][0]["text"]


@pytest.mark.parametrize(
    ("user", "dataset"),
    [("1", "9"), ("2", "1")],
    ids=["user-1-in-dataset-9", "user-2-in-dataset-1"],
)
def test_a_matching_user_or_dataset_alone_gives_nothing(
    examples_ingested: Ingested, user: str, dataset: str
) -> None:
    answers = search_batch(
        examples_ingested.data_dir, QUERIES, "--user", user, "--dataset", dataset
    )
    assert [i for i, _ in answers] == [i for i, _ in QUERIES]
    assert all(hits == [] for _, hits in answers), answers
