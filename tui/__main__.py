"""`python -m tui`: the TUI with the CLI's model flags, resolved the same way (flags, env, config files)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tui", description="keel's terminal UI")
    parser.add_argument(
        "--cwd", type=Path, help="workspace directory (default: the current directory)"
    )
    parser.add_argument("--model", help="litellm model name, e.g. openai/gpt-4o-mini")
    parser.add_argument("--api-base", help="base URL of an OpenAI-compatible server")
    parser.add_argument("--context-window", type=int, metavar="TOKENS")
    parser.add_argument("--budget", type=int, metavar="TOKENS")
    parser.add_argument("--approval", choices=["read-only", "auto-edit", "full-auto"])
    parser.add_argument("--resume", metavar="ID", help="reopen a session")
    return parser.parse_args(argv)


def run(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from keel.agent.config_files import ConfigSources
    from keel.agent.errors import KeelError

    cwd = (args.cwd or Path.cwd()).expanduser().resolve()
    flags = {
        "model": args.model,
        "api_base": args.api_base,
        "context_window": args.context_window,
        "budget": args.budget,
        "approval": args.approval,
    }
    sources = ConfigSources.find(cwd, flags)
    try:
        sources.check()
    except KeelError as exc:
        print(f"keel: {exc}", file=sys.stderr)
        return exc.exit_code
    from keel.tui.launch import main

    return main(sources, cwd, args.resume)


if __name__ == "__main__":
    sys.exit(run())
