"""Embedded mode gives a user without an EMBEDDING config the local default (SPEC §3)."""

from ragline.application.provisioning.embedding import DefaultEmbedding, ProvisionEmbedding

__all__ = ["DefaultEmbedding", "ProvisionEmbedding"]
