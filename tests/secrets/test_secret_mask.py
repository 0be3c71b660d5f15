"""SecretMask and the places a failure reason is formed: known values and credential shapes
become `***`; settings teach the process's mask every secret they hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline.application.error_text import StageFailure, describe
from ragline.application.ports.repositories.model_configs import ChatConfig, EmbeddingConfig
from ragline.application.secrets import MASK, SecretMask, masked
from ragline.bootstrap.settings import Settings
from ragline.domain.parse_run import FailureCode
from ragline.testing.services.echo_server import leaked


def test_known_values_are_masked_wherever_they_appear() -> None:
    mask = SecretMask.of("k-0123456789", None, "")
    assert mask("key k-0123456789 and again k-0123456789.") == f"key {MASK} and again {MASK}."
    mask.add("another-secret-value")
    assert mask('{"x": "another-secret-value"}') == f'{{"x": "{MASK}"}}'


def test_the_longest_secret_is_masked_whole() -> None:
    mask = SecretMask.of("abcdef", "abcdefghijkl")
    assert mask("abcdefghijkl") == MASK


def test_short_values_are_not_masked_by_value() -> None:
    mask = SecretMask.of("abc", "x")
    assert mask("abc x abc") == "abc x abc"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("postgresql://ragline:db-pass@db:5432/x", "postgresql://ragline:***@db:5432/x"),
        ("Authorization: Bearer tok3n-never-told", "Authorization: Bearer ***"),
        ('{"authorization": "bearer abc123def456"}', '{"authorization": "bearer ***"}'),
        ("Basic dXNlcjpwYXNzd29yZDE=", "Basic ***"),
        ("GET /v1?api_key=sk9abcdefgh&x=1", "GET /v1?api_key=***&x=1"),
        ("X-Api-Key: 12345678abcdef", "X-Api-Key: ***"),
        ("a valid bearer token is required", "a valid bearer token is required"),
        ("Bearer authentication failed", "Bearer authentication failed"),
    ],
)
def test_credential_shapes_are_masked_without_being_told(text: str, shown: str) -> None:
    assert SecretMask()(text) == shown


def test_a_model_config_teaches_the_process_its_key() -> None:
    embedding_key, chat_key = "sk-embed-Hq2s9vLw3x", "sk-chat-Ut7y1bNm4k"
    EmbeddingConfig("u1", "openai", "m", 8, "http://x", embedding_key)
    ChatConfig("u1", "openai", "m", "http://x", chat_key)
    echoed = f"the server said: you sent {embedding_key} and {chat_key}"
    assert masked(echoed) == f"the server said: you sent {MASK} and {MASK}"


def test_a_failure_reason_never_carries_a_known_secret() -> None:
    key = "sk-reason-Pq4r8sT1uV"
    EmbeddingConfig("u2", "openai", "m", 8, "http://x", key)
    error = RuntimeError(f"HTTP 401: incorrect key {key}\nsecond line")
    assert describe(error) == f"RuntimeError: HTTP 401: incorrect key {MASK} second line"
    failure = StageFailure(FailureCode.VECTORIZING_FAILED, f"model said {key}")
    assert failure.detail == f"model said {MASK}" and key not in str(failure)


def test_settings_teach_the_mask_every_secret_they_hold(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path,
        s3_secret_key="s3-secret-Aa11Bb22",
        kafka_sasl_password="sasl-pass-Cc33Dd44",
        embedding_api_key="embed-key-Ee55Ff66",
        llm_api_key="llm-key-Gg77Hh88",
        mineru_token="mineru-token-Ii99Jj00",
        secret_key="fernet-new-Kk11Ll22,fernet-old-Mm33Nn44",
        database_url="postgresql+psycopg://ragline:pg%40pass-Oo55@db:5432/ragline",
        rabbitmq_url="amqp://guest:mq-pass-Pp66Qq77@mq:5672/",
        elasticsearch_url="http://elastic:es-pass-Rr88Ss99@es:9200",
    )
    held = [
        "s3-secret-Aa11Bb22",
        "sasl-pass-Cc33Dd44",
        "embed-key-Ee55Ff66",
        "llm-key-Gg77Hh88",
        "mineru-token-Ii99Jj00",
        "fernet-new-Kk11Ll22",
        "fernet-old-Mm33Nn44",
        "pg@pass-Oo55",
        "mq-pass-Pp66Qq77",
        "es-pass-Rr88Ss99",
    ]
    assert set(held) <= set(settings.secret_values)
    for secret in held:  # echoed bare, without the shape of a URL or a header
        assert masked(f"remote said {secret}!") == f"remote said {MASK}!"


def test_a_long_hostile_error_is_cut_before_it_is_masked_and_still_masked() -> None:
    key = "sk-long-error-Tg3hJ7kL1z"
    EmbeddingConfig("u3", "openai", "m", 8, "http://x", key)
    text = describe(RuntimeError("api_key=" * 200_000 + key))
    assert len(text) < 4200 and key not in text
    near_the_cut = describe(RuntimeError("x" * (4096 - 10) + key))  # the cut inside the key
    assert not leaked(near_the_cut, key) and near_the_cut.endswith(f"x{MASK}")


def test_a_prefix_never_cuts_a_secret_in_half() -> None:
    key = "sk-across-the-cut-Wq2e4r6t"
    mask = SecretMask.of(key)
    for cut in range(1, len(key)):
        shown = mask.prefix("y" * (300 - cut) + key + " tail", 300)
        assert len(shown) <= 300 and not leaked(shown, key), (cut, shown)
    assert mask.prefix("short", 300) == "short"
