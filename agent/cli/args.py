"""The `keel` command line: its parser, loaded only when there are arguments to parse."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, NoReturn

from keel import __version__
from keel.agent.cli.flags import add_debug_flag, add_model_flags
from keel.agent.errors import ExitCode


class Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(ExitCode.USAGE, f"keel: {message} (see `{self.prog} --help`)\n")

    def parse_args(  # type: ignore[override]
        self, args: Any = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        """Unknown flags are reported by the subcommand's parser, so the help it names is the one to read."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            self._command_parser(parsed).error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed

    def _command_parser(self, parsed: argparse.Namespace) -> argparse.ArgumentParser:
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen: argparse.ArgumentParser = action.choices.get(
                    getattr(parsed, "command", None) or "", self
                )
                return chosen
        return self


def top_parser() -> argparse.ArgumentParser:
    """`keel` and its own flags, without the subcommands."""
    parser = Parser(prog="keel", description="A local coding agent.")
    parser.add_argument("--version", action="version", version=f"keel {__version__}")
    parser.add_argument(
        "--cwd", type=Path, help="workspace directory (default: the current directory)"
    )
    add_debug_flag(parser)
    add_model_flags(parser)
    return parser


def build_parser() -> argparse.ArgumentParser:
    parser = top_parser()
    commands = parser.add_subparsers(dest="command", parser_class=Parser)
    run = commands.add_parser("run", help="run one task headless")
    run.add_argument("prompt", nargs="?", help="the task; `-` reads it from stdin")
    run.add_argument("--prompt-file", type=Path, help="read the task from a file")
    run.add_argument("--cwd", type=Path, default=argparse.SUPPRESS, help="workspace directory")
    run.add_argument("--output-format", choices=["text", "json", "stream-json"], default="text")
    run.add_argument(
        "--resume",
        metavar="ID",
        help="continue a stopped session (with a prompt: a new task in it)",
    )
    add_debug_flag(run, argparse.SUPPRESS)
    add_model_flags(run, argparse.SUPPRESS)

    from keel.agent.cli.batch import add_batch_parser

    add_batch_parser(commands)
    from keel.agent.cli.bench import add_bench_parser

    add_bench_parser(commands)
    from keel.agent.cli.setup import add_setup_parser

    add_setup_parser(commands)
    from keel.agent.cli.undo import add_undo_parser

    add_undo_parser(commands)
    from keel.agent.cli.export import add_export_parser

    add_export_parser(commands)
    from keel.agent.cli.acp import add_acp_parser

    add_acp_parser(commands)
    commands.add_parser("sessions", help="list the sessions of this workspace")
    resume = commands.add_parser("resume", help="reopen a session (the newest here by default)")
    resume.add_argument("session_id", nargs="?")
    commands.add_parser("models", help="show the configured model and how to use others")
    from keel.agent.cli.sandbox_report import add_sandbox_parser

    add_sandbox_parser(commands)
    from keel.agent.cli.mcp import add_mcp_parser

    add_mcp_parser(commands)
    return parser


def parse(argv: list[str]) -> argparse.Namespace:
    """Flags alone (`keel`, the TUI) need only the top-level parser: the full one costs ~8 ms to build."""
    if "-h" not in argv and "--help" not in argv:
        args, rest = top_parser().parse_known_args(argv)
        if not rest:
            args.command = None
            return args
    from keel.agent.cli.bench import bench_argv

    return build_parser().parse_args(bench_argv(argv))
