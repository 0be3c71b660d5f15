"""Settings from environment variables and `.env` (pydantic-settings). See docs/settings.md."""

from __future__ import annotations

from pathlib import Path

from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="RAGLINE_", env_file=".env", extra="ignore", env_nested_delimiter="__"
    )

    data_dir: Path = Path(".ragline")
