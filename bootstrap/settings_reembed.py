"""The re-embedding loops' settings (`RAGLINE_REEMBED_*`), nested in `Settings` as `reembed`
the way each vendor's settings are (`bootstrap.vendor_settings`)."""

from __future__ import annotations

from pydantic import Field

from ragline.bootstrap.vendor_settings import VendorSettings


class ReembedSettings(VendorSettings):
    batch_size: int = Field(
        default=64, ge=1, le=10_000, description="Chunks one re-embedding copy batch embeds."
    )
    lease_seconds: float = Field(
        default=120.0,
        gt=0,
        description="A copy batch whose worker has not renewed its claim for this long (the "
        "worker renews every third of it while it embeds) is taken over by another (a killed "
        "worker's batch is copied again, nothing else).",
    )
    poll_seconds: float = Field(
        default=2.0,
        gt=0,
        description="How often an idle `ragline worker`/`serve` looks for re-embedding work.",
    )
    nice: int = Field(
        default=10,
        ge=0,
        le=19,
        description="The nice value (Linux) of the thread a worker's or server's re-embedding "
        "copy embeds on, so searches on the same cores keep their latency (0: no change).",
    )
