"""Every port chosen by configuration, as a registry of named adapter factories.

A vendor is three things: its adapter package (`adapters/<port>/<tech>/`), its settings (a
nested model in `bootstrap.vendor_settings`, one field on `Settings`), and its name (the
enum member in `bootstrap.settings`) with its factory and registry line in the port's
module here. See docs/design/0007-vendor-registry.md.
"""

from __future__ import annotations

from typing import Any

from ragline.bootstrap.registry.database import DATABASE
from ragline.bootstrap.registry.embedder import EMBEDDER
from ragline.bootstrap.registry.keyword_index import KEYWORD_INDEX
from ragline.bootstrap.registry.message_bus import MESSAGE_BUS
from ragline.bootstrap.registry.object_storage import OBJECT_STORAGE
from ragline.bootstrap.registry.vector_index import VECTOR_INDEX
from ragline.bootstrap.registry.vendor import Port, Vendor
from ragline.bootstrap.settings import Settings

PORTS: tuple[Port[Any, Any], ...] = (
    DATABASE,
    OBJECT_STORAGE,
    MESSAGE_BUS,
    VECTOR_INDEX,
    KEYWORD_INDEX,
    EMBEDDER,
)


def adapter_labels(settings: Settings) -> dict[str, str]:
    """Which adapter each port uses, in words (`ragline doctor`), from its registry entry."""
    return {port.part: port.of(settings).label_for(settings) for port in PORTS}


__all__ = [
    "DATABASE",
    "EMBEDDER",
    "KEYWORD_INDEX",
    "MESSAGE_BUS",
    "OBJECT_STORAGE",
    "PORTS",
    "VECTOR_INDEX",
    "Port",
    "Vendor",
    "adapter_labels",
]
