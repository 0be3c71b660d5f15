"""Each adapter's settings are a nested model under its own prefix, and every environment
name docs/settings.md lists (the flat names of before) still reaches it."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from ragline.bootstrap.settings import Settings
from ragline.bootstrap.settings_doc import names_of, variables

NESTED = [path for path, _ in variables() if len(path) > 1]


def test_the_adapters_settings_are_nested() -> None:
    assert {path[0] for path in NESTED} == {
        "kafka",
        "rabbitmq",
        "s3",
        "qdrant",
        "pgvector",
        "elasticsearch",
        "embedding",
        "reembed",  # not an adapter: the re-embedding loops' group (RAGLINE_REEMBED_*)
    }


@pytest.mark.parametrize("path", NESTED, ids=["_".join(p) for p in NESTED])
def test_every_documented_name_reaches_its_nested_setting(
    path: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (name,) = names_of(path)
    monkeypatch.setenv(name, "7")  # valid for each of their types (str, int, float, secret)
    value = getattr(getattr(Settings(data_dir=tmp_path), path[0]), path[1])
    shown = value.get_secret_value() if isinstance(value, SecretStr) else value
    assert shown in ("7", 7)  # 7.0 for a float


def test_the_old_names_stay_the_environment_names() -> None:
    names = {names_of(path)[0] for path in NESTED}
    assert {
        "RAGLINE_QDRANT_URL",
        "RAGLINE_S3_ENDPOINT_URL",
        "RAGLINE_KAFKA_BOOTSTRAP_SERVERS",
        "RAGLINE_KAFKA_SASL_PASSWORD",
        "RAGLINE_RABBITMQ_URL",
        "RAGLINE_ELASTICSEARCH_URL",
        "RAGLINE_EMBEDDING_API_KEY",
    } <= names


def test_a_shared_setting_beside_a_nested_prefix_stays_shared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGLINE_EMBEDDING_BATCH_SIZE", "9")
    monkeypatch.setenv("RAGLINE_EMBEDDING_MODEL", "m")
    settings = Settings(data_dir=tmp_path)
    assert settings.embedding_batch_size == 9 and settings.embedding.model == "m"


def test_keywords_follow_the_environment_names_and_merge_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGLINE_KAFKA_GROUP_ID", "from-env")
    settings = Settings(data_dir=tmp_path, kafka_bootstrap_servers="k:9092")
    assert settings.kafka.bootstrap_servers == "k:9092"
    assert settings.kafka.group_id == "from-env"
    assert Settings(data_dir=tmp_path, qdrant={"url": "http://q"}).qdrant.url == "http://q"


@pytest.mark.parametrize("name", ["qdrant_ur", "kafka", "nosuch_setting", "qdrantt_url"])
def test_a_keyword_no_setting_has_is_an_error_not_ignored(name: str, tmp_path: Path) -> None:
    value: object = "x" if name != "kafka" else 1
    if name == "kafka":  # a whole nested model of the wrong kind is pydantic's to refuse
        with pytest.raises(ValueError):
            Settings(data_dir=tmp_path, kafka=value)
        return
    with pytest.raises(TypeError, match=name):
        Settings(data_dir=tmp_path, **{name: value})


def test_nested_secrets_teach_the_mask(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path, kafka_sasl_password="sasl-Zz12", qdrant_url="http://u:qd-Yy34@q"
    )
    assert {"sasl-Zz12", "qd-Yy34"} <= set(settings.secret_values)


def test_a_dot_env_file_reaches_the_nested_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".env").write_text(
        "RAGLINE_QDRANT_URL=http://from-file:6333\nRAGLINE_KAFKA_GROUP_ID=g1\n", encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    settings = Settings()
    assert settings.qdrant.url == "http://from-file:6333" and settings.kafka.group_id == "g1"
