"""The OpenAI-compatible adapter over real HTTP (loopback server), and the LLM strategy wired
through the ChunkDocument use case: aligned proposals cut, anything else falls back."""

from __future__ import annotations

import json

import pytest

from ragline.adapters.llm.openai import OpenAIChatModel
from ragline.adapters.structure.markdown import LineScanStructureBuilder
from ragline.application.chunking import ChunkDocument, LlmBoundaryProposer
from ragline.application.chunking.boundaries import parse_boundaries
from ragline.application.ports.llm import LlmError, LlmTimeout
from ragline.domain.chunking import SourceType
from ragline.testing.services.echo_server import EchoingServer, leaked
from tests.chunking.conftest import Behaviour, FakeOpenAI


def test_completion_round_trip(openai_server: FakeOpenAI) -> None:
    openai_server.reply("hello back")
    model = OpenAIChatModel(openai_server.url, "tiny", api_key="k-123", timeout=5)
    assert model.complete("hello", system="be brief") == "hello back"
    (req,) = openai_server.requests
    assert req["path"] == "/v1/chat/completions"
    assert req["model"] == "tiny" and req["temperature"] == 0.0
    assert req["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hello"},
    ]
    assert openai_server.headers[0]["Authorization"] == "Bearer k-123"


def test_http_errors_become_llm_errors(openai_server: FakeOpenAI) -> None:
    openai_server.queue.append(Behaviour(status=429, content="slow down"))
    model = OpenAIChatModel(openai_server.url, "tiny", timeout=5)
    with pytest.raises(LlmError, match="429"):
        model.complete("x")


def test_a_slow_server_is_a_timeout(openai_server: FakeOpenAI) -> None:
    openai_server.queue.append(Behaviour(content="late", delay=1.5))
    model = OpenAIChatModel(openai_server.url, "tiny", timeout=0.3)
    with pytest.raises(LlmTimeout):
        model.complete("x")


@pytest.mark.parametrize(
    "raw", [b"not json", b'{"choices": []}', b'{"choices": [{"message": {}}]}']
)
def test_broken_payloads_become_llm_errors(openai_server: FakeOpenAI, raw: bytes) -> None:
    openai_server.queue.append(Behaviour(raw=raw))
    with pytest.raises(LlmError):
        OpenAIChatModel(openai_server.url, "tiny", timeout=5).complete("x")


def test_unreachable_server_is_an_llm_error() -> None:
    with pytest.raises(LlmError):
        OpenAIChatModel("http://127.0.0.1:9/v1", "tiny", timeout=1).complete("x")


def test_parse_boundaries_tolerates_fences_and_rejects_garbage() -> None:
    assert parse_boundaries('```json\n{"boundaries": ["a b", 3]}\n```') == ["a b", 3]
    for bad in ["nothing", '{"boundaries": "a"}', '{"boundaries": [null]}', "[1, 2]"]:
        with pytest.raises(ValueError):
            parse_boundaries(bad)


DOC = (
    "# Pets and cars\n\n"
    "The cat sleeps on the sofa. A cat purrs when it is happy. My cat eats fish every day. "
    "The car drives along the road. A car stops at red lights. My car honks at night.\n"
)


def use_case(server: FakeOpenAI, timeout: float = 5) -> ChunkDocument:
    model = OpenAIChatModel(server.url, "tiny", timeout=timeout)
    return ChunkDocument(LineScanStructureBuilder(), llm=model)


def test_llm_plan_cuts_where_the_model_says(openai_server: FakeOpenAI) -> None:
    openai_server.reply(json.dumps({"boundaries": ["The car drives along"]}))
    result = use_case(openai_server)(DOC.replace("sofa.", "sofa. " + "Filler words. " * 40), "llm")
    kids = result.parents[0].children
    assert any(c.source_type is SourceType.LLM for c in kids)
    assert any(c.text.startswith("The car drives along") for c in kids)
    assert result.report.fallbacks == 0
    assert "The cat sleeps" in openai_server.requests[0]["messages"][1]["content"]


@pytest.mark.parametrize(
    "behaviour",
    [
        Behaviour(content=json.dumps({"boundaries": ["The bus drives along"]})),  # invented
        Behaviour(content="Sure! Here are your chunks."),  # no JSON
        Behaviour(status=500),
        Behaviour(content="{}", delay=1.5),  # too slow
    ],
)
def test_llm_plan_falls_back_to_recursive(openai_server: FakeOpenAI, behaviour: Behaviour) -> None:
    openai_server.queue.append(behaviour)
    md = DOC.replace("sofa.", "sofa. " + "Filler words. " * 40)
    result = use_case(openai_server, timeout=0.5)(md, "llm")
    kids = [c for p in result.parents for c in p.children]
    assert kids and {c.source_type for c in kids} <= {SourceType.RECURSIVE, SourceType.STRUCTURE}
    assert result.report.fallbacks >= 1
    assert all(md[c.start : c.end] == c.text for c in kids)


def test_proposer_refuses_overlong_input(openai_server: FakeOpenAI) -> None:
    proposer = LlmBoundaryProposer(OpenAIChatModel(openai_server.url, "tiny"), max_chars=10)
    with pytest.raises(ValueError):
        proposer.propose("x" * 11)
    assert openai_server.requests == []


CHAT_KEY = "sk-chat-key-Lm5nB7vC9xZ1qW3eR"


@pytest.mark.parametrize(("status", "padding"), [(401, 0), (500, 0), (401, 100)])
def test_a_server_echoing_the_key_sees_it_masked_in_the_error(
    echoing_server: EchoingServer, status: int, padding: int
) -> None:
    model = OpenAIChatModel(echoing_server.base_url(status, padding), "tiny", api_key=CHAT_KEY)
    with pytest.raises(LlmError) as caught:
        model.complete("x")
    model.close()
    assert echoing_server.requests[-1]["authorization"] == f"Bearer {CHAT_KEY}"
    text = str(caught.value)
    assert f"HTTP {status}" in text and not leaked(text, CHAT_KEY), text
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
