"""`Stage` is the one ordered declaration: FailurePoint, the stage columns of the stored run
and the CLI's stage columns follow it, and each member declares its label and failure code."""

from __future__ import annotations

import copy
import pickle
import re
from pathlib import Path

import pytest

from ragline.adapters.inbound.cli.ingest import STAGE_HEADERS
from ragline.adapters.persistence.sql.tables import STAGE_PREFIXES, parse_run
from ragline.domain.parse_run import STAGE_ORDER, FailureCode, FailurePoint, Stage


def test_failure_points_are_the_stages_in_order_then_the_checks() -> None:
    assert [p.value for p in FailurePoint] == [
        *(s.value for s in STAGE_ORDER),
        "TASK_VALIDATION",
        "RETRY_VALIDATION",
    ]
    for stage in Stage:
        assert FailurePoint.of(stage).stage is stage
        assert FailurePoint[stage.name] is FailurePoint(stage.value)
    assert FailurePoint.TASK_VALIDATION.stage is None


def test_a_stage_value_is_its_plain_name_wherever_it_is_stored_or_compared() -> None:
    for stage in Stage:
        assert stage.value == stage.name and Stage(stage.name) is stage
        assert hash(stage.value) == hash(stage.name)
        assert str(stage.value) == stage.name and type(str(stage.value)) is str


def test_each_stage_declares_a_distinct_label_and_its_own_failure_code() -> None:
    assert len({s.label for s in Stage}) == len(Stage)
    assert Stage.CLEANING.failure_code is FailureCode.PARSE_ENGINE_FAILED
    for stage in STAGE_ORDER[1:]:
        assert stage.failure_code is FailureCode(f"{stage.value}_FAILED")


def test_the_stored_run_has_one_column_group_per_declared_stage() -> None:
    assert tuple(s.value.lower() for s in STAGE_ORDER) == STAGE_PREFIXES
    stage_columns = [c.name for c in parse_run.columns if c.name.endswith("_inherited")]
    assert stage_columns == [f"{p}_inherited" for p in STAGE_PREFIXES]


def test_the_cli_heads_a_column_per_declared_stage_from_its_label() -> None:
    assert list(STAGE_HEADERS) == list(STAGE_ORDER)
    assert STAGE_HEADERS[Stage.KEYWORD_INDEXING] == "bm25 ms"


ROOT = Path(__file__).resolve().parent.parent
# Where the docs list every stage: (file, text just before the list, text just after it).
DOC_LISTS = [
    ("docs/state-machine.md", "Each of ", " moves like this"),
    ("docs/reliability.md", "at `<point>`: a stage name\n(", ") —"),
    ("docs/persistence.md", "`_inherited` for ", "; `pipeline_status`"),
    ("docs/pipeline.md", "| # | stage | does | writes |", "\n\n"),
]


def _stages_named(text: str) -> list[str]:
    """Stage names in the order they appear (SPARSE_VECTORIZING is not VECTORIZING)."""
    names = "|".join(sorted((s.value for s in Stage), key=len, reverse=True))
    return [m.upper() for m in re.findall(rf"(?<![A-Za-z_])({names})(?![A-Za-z_])", text, re.I)]


@pytest.mark.parametrize(("doc", "before", "after"), DOC_LISTS, ids=[d[0] for d in DOC_LISTS])
def test_the_docs_list_the_stages_as_declared(doc: str, before: str, after: str) -> None:
    text = (ROOT / doc).read_text(encoding="utf-8")
    start = text.index(before) + len(before)
    listed = text[start : text.index(after, start)]
    if doc == "docs/pipeline.md":  # one table row per stage: the name in the second cell
        listed = "\n".join(re.findall(r"^\| \d+ \| ([A-Z_]+) \|", listed, re.M))
    assert _stages_named(listed) == [s.value for s in STAGE_ORDER]


def test_a_stage_value_survives_copy_and_pickle_with_its_declaration() -> None:
    """A record holding a stage's value (a dataclass's `asdict`, a deep copy) rebuilds it."""
    for stage in Stage:
        for again in (copy.deepcopy(stage.value), pickle.loads(pickle.dumps(stage.value))):  # nosec B301
            assert again == stage.value and Stage(again) is stage
            assert (again.label, again.failure_code) == (stage.label, stage.failure_code)
