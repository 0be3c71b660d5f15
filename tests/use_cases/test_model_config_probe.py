"""An EMBEDDING config is probed once before it is stored: a model that cannot be built,
reached, or that returns another dimension is refused with what is wrong, and nothing is
stored (the real resolver's probe: tests/adapters/embedding/test_configured_probe.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline.application.ports.embedder import EmbedderUnavailable
from ragline.application.ports.repositories.model_configs import EmbeddingConfig
from ragline.application.provisioning import (
    DimensionChangeRefused,
    ManageModelConfigs,
    ModelUnusable,
)
from ragline.domain.parse_run import PipelineStatus
from tests.fakes.harness import DIMENSION, Harness


@pytest.fixture
def h(tmp_path: Path) -> Harness:
    return Harness(tmp_path)


def _manage(h: Harness) -> ManageModelConfigs:
    manage: ManageModelConfigs = h.container.model_configs()
    return manage


async def test_a_dimension_the_model_does_not_return_is_refused(h: Harness) -> None:
    h.embedders.model_dimension = 384  # what the model really returns
    with pytest.raises(ModelUnusable) as refused:
        await _manage(h).set_embedding(EmbeddingConfig("u1", "fake", "e5", 999))
    assert refused.value.field == "dimension"
    assert "999" in str(refused.value) and "384" in str(refused.value)
    assert "u1" not in h.db.configs
    view = (await _manage(h).set_embedding(EmbeddingConfig("u1", "fake", "e5", 384))).view
    assert view.dimension == 384 and h.db.configs["u1"].dimension == 384


async def test_a_model_that_cannot_be_built_is_refused(h: Harness) -> None:
    with pytest.raises(ModelUnusable, match="unknown provider") as refused:
        await _manage(h).set_embedding(EmbeddingConfig("u1", "unknown", "no-such-model", 8))
    assert refused.value.field == "model"
    assert "u1" not in h.db.configs


async def test_a_model_out_of_reach_is_refused(h: Harness) -> None:
    h.faults.arm("embedders.probe", EmbedderUnavailable("http://x/v1: ConnectError"))
    with pytest.raises(ModelUnusable, match=r"cannot be reached.*ConnectError"):
        await _manage(h).set_embedding(
            EmbeddingConfig("u1", "openai", "m", 8, "http://x/v1", "sk-0123")
        )
    assert "u1" not in h.db.configs


async def test_the_probe_uses_the_stored_key_when_none_is_given(h: Harness) -> None:
    manage = _manage(h)
    await manage.set_embedding(EmbeddingConfig("u1", "openai", "m", 8, "http://x/v1", "sk-kept"))
    await manage.set_embedding(EmbeddingConfig("u1", "openai", "m2", 8, "http://x/v1", None))
    assert [c.api_key for c in h.embedders.probed] == ["sk-kept", "sk-kept"]
    assert h.db.configs["u1"].api_key == "sk-kept"


async def test_the_dimension_guard_answers_before_any_probe(h: Harness) -> None:
    h.configure_embedding()
    task = h.task()
    await h.pipeline.handle(task)
    assert h.run(task.task_id).pipeline_status is PipelineStatus.SUCCESS
    with pytest.raises(DimensionChangeRefused):
        await _manage(h).set_embedding(EmbeddingConfig("7", "fake", "bigger", DIMENSION * 2))
    assert h.embedders.probed == []
