"""`keel acp`: its flags, and the settings each ACP session gets (resolved as `keel run` resolves them)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from keel.agent.cli.flags import add_debug_flag, add_model_flags

if TYPE_CHECKING:
    from keel.agent.core.settings import SessionSettings


def add_acp_parser(commands: Any) -> None:
    acp = commands.add_parser(
        "acp",
        help="be an agent for an editor over the Agent Client Protocol on stdio (Zed, JetBrains, …)",
        description=(
            "Speak the Agent Client Protocol on stdin/stdout; an editor starts this command. Each "
            "session runs in the directory the editor gives, with the model `keel run` would use "
            "there (flags, then KEEL_MODEL, then the config files, then the embedded model). Calls "
            "the approval policy asks about (default auto-edit: commands) become the editor's "
            "permission prompts."
        ),
    )
    add_debug_flag(acp, argparse.SUPPRESS)
    add_model_flags(acp, argparse.SUPPRESS)


def settings_maker(flags: dict[str, Any]) -> Any:
    """What builds one session's settings in a directory: its config under the flags, with a person to ask."""

    def settings_for(cwd: Path) -> SessionSettings:
        from keel.agent.cli.preflight import check_model
        from keel.agent.core.config import resolve_config
        from keel.agent.core.settings import settings_from_config

        settings = settings_from_config(resolve_config(cwd, flags), cwd, interactive=True)
        check_model(settings.model, settings.api_base)
        return settings

    return settings_for


def acp_command(args: argparse.Namespace, cwd: Path) -> int:
    """Check the config where keel was started (a broken one is exit 2 now), then serve."""
    import asyncio

    from keel.agent.acp.server import serve
    from keel.agent.cli.flags import config_flags
    from keel.agent.core.api.process import tune_gc
    from keel.agent.core.config import resolve_config

    flags = config_flags(args)
    resolve_config(cwd, flags)
    tune_gc()
    return asyncio.run(serve(settings_maker(flags)))
