"""`keel trust [DIR]`: record a repository as trusted, so its `.keel/config.toml` applies in full."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from keel.agent.core.errors import ExitCode, UsageError


def add_trust_parser(commands: Any) -> None:
    trust = commands.add_parser(
        "trust",
        help="trust a repository: its .keel/config.toml may then widen what keel may do",
        description="Record a repository (DIR, default: the current directory) as trusted, in your "
        "own config folder (never in the repository). Until then its .keel/config.toml cannot "
        "loosen the approval or the sandbox, add MCP servers, commands, writable folders or "
        "variables, or change api_base; `keel run --trust` trusts it for one run.",
    )
    trust.add_argument("dir", nargs="?", type=Path, help="the repository (default: here)")
    trust.add_argument("--cwd", type=Path, default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def trust_command(args: argparse.Namespace) -> int:
    """Record the folder; say which folder and where it was recorded."""
    from keel.agent.core.api.process import trust_file, trust_folder

    folder = (args.dir or getattr(args, "cwd", None) or Path.cwd()).expanduser()
    if not folder.is_dir():
        raise UsageError(f"{folder} is not a directory; name the repository to trust")
    root = trust_folder(folder)
    print(f"keel: trusted {root} (recorded in {trust_file()})", file=sys.stdout)
    return ExitCode.OK
