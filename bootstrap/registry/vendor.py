"""A port's registry: its named adapter factories, keyed by the settings enum that names them.

The key set IS the enum (checked when the registry is built, and by
tests/bootstrap/test_vendor_registry.py): a name with no factory fails at import, and a
factory the settings cannot name is dead. Unknown names never get this far: the settings
refuse them (`bootstrap.configured`), listing these keys.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Generic, TypeVar

import attrs

from ragline.bootstrap.settings import Settings

B = TypeVar("B")
E = TypeVar("E", bound=StrEnum)


@attrs.frozen
class Vendor(Generic[B]):
    """One named adapter: what builds it, and how `ragline doctor` names it."""

    build: B
    label: str
    detail: Callable[[Settings], str] | None = None
    """What the label adds for these settings (e.g. the server URL)."""

    def label_for(self, settings: Settings) -> str:
        return self.label if self.detail is None else f"{self.label} {self.detail(settings)}"


@attrs.frozen
class Port(Generic[E, B]):
    """The vendors of one port and the setting that chooses among them."""

    part: str
    """The port's name in `ragline doctor` (adapter_labels' key)."""
    setting: str
    """The Settings field naming the vendor."""
    names: type[E]
    vendors: Mapping[E, Vendor[B]]
    chosen: Callable[[Settings], E]

    def __attrs_post_init__(self) -> None:
        missing = [name.value for name in self.names if name not in self.vendors]
        extra = [str(name) for name in self.vendors if name not in set(self.names)]
        if missing or extra:
            raise TypeError(f"{self.part} registry: no factory for {missing}, unnamed {extra}")

    def of(self, settings: Settings) -> Vendor[B]:
        """The configured vendor's entry."""
        return self.vendors[self.chosen(settings)]

    @property
    def choices(self) -> str:
        return ", ".join(name.value for name in self.names)
