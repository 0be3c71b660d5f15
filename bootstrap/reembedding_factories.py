"""The re-embedding use cases' parts (issue 21): the shadow spaces, the target model, the
loop's timings. Kept beside `factories` so the container's re-embedding block reads alone."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import cast

from ragline.application.ports.embedder import Embedder
from ragline.application.ports.embedder_resolver import EmbedderResolver
from ragline.application.ports.repositories.model_configs import EmbeddingConfig
from ragline.application.ports.vector_index import VectorIndex, VectorSpaces
from ragline.bootstrap.settings_reembed import ReembedSettings
from ragline.domain.reembedding import EmbeddingSpec


def vector_spaces(index: VectorIndex) -> VectorSpaces:
    """The index's generation-aware face. An index without one (pgvector before its
    VectorSpaces) fails the first step that needs it, which the loop logs and retries;
    nothing fails while no re-embedding is planned."""
    return cast(VectorSpaces, index)


def target_embedders(resolver: EmbedderResolver) -> Callable[[str, EmbeddingSpec], Embedder]:
    """The model of a re-embedding's target spec, built as the resolver builds a user's
    configured one (a resolver without a synchronous `build` cannot serve the copy)."""

    def embedder_for(user_id: str, spec: EmbeddingSpec) -> Embedder:
        build = cast(Callable[[EmbeddingConfig], Embedder], getattr(resolver, "build"))  # noqa: B009
        return build(EmbeddingConfig(user_id, spec.provider, spec.model, spec.dimension))

    return embedder_for


def lease(settings: ReembedSettings) -> timedelta:
    return timedelta(seconds=settings.lease_seconds)


def poll(settings: ReembedSettings) -> timedelta:
    return timedelta(seconds=settings.poll_seconds)
