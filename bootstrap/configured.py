"""The process's settings, or one line saying which variable to fix and what it may be.

A pydantic ValidationError is a traceback of field paths; a person who set
RAGLINE_VECTOR_INDEX=milvus needs the variable and the choices (the registry's keys).
"""

from __future__ import annotations

import os

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from ragline.application.ports.misconfiguration import Misconfiguration
from ragline.bootstrap.registry import PORTS
from ragline.bootstrap.settings import Settings
from ragline.bootstrap.settings_doc import names_of


class SettingsRefused(Misconfiguration):
    """Settings that do not validate (an unknown vendor among them), in one line."""


_FIELD_OF_ALIAS = {alias: name for name in Settings.model_fields for alias in names_of((name,))}


def configured(**overrides: object) -> Settings:
    """Settings from the environment and `overrides`; SettingsRefused when they are not
    ones this process can start with."""
    try:
        return Settings(**overrides)
    except ValidationError as error:
        raise SettingsRefused("; ".join(_line(e) for e in error.errors())) from None


def _set_name(names: list[str]) -> str:
    """The name the user set (MQ_VENDOR or RAGLINE_MQ_VENDOR), else the first."""
    given = {name.upper() for name in os.environ}
    return next((name for name in names if name.upper() in given), names[0])


def _line(error: ErrorDetails) -> str:
    path = tuple(str(part) for part in error["loc"])
    path = (_FIELD_OF_ALIAS.get(path[0], path[0]), *path[1:]) if path else ("?",)
    known = path[0] in Settings.model_fields
    variable = _set_name(names_of(path)) if known else path[0]
    port = next((p for p in PORTS if (p.setting,) == path), None)
    if port is not None and error["type"] == "enum":
        shown = str(error["input"])[:80]
        what = port.part.replace("_", " ")
        return f"{variable}={shown}: no {what} of that name; choose one of: {port.choices}"
    return f"{variable}: {error['msg'].removeprefix('Value error, ')}"
