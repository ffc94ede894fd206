"""The `keel` command line: its parser, loaded only when there are arguments to parse."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, NoReturn

from keel import __version__
from keel.agent.cli.flags import add_debug_flag, add_model_flags
from keel.agent.core.errors import ExitCode


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
        """The innermost (sub)command's parser the arguments chose, e.g. `keel bench check`'s."""
        parser: argparse.ArgumentParser = self
        while True:
            action = next(
                (a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None
            )
            chosen = (
                action.choices.get(getattr(parsed, action.dest, None) or "") if action else None
            )
            if chosen is None:
                return parser
            parser = chosen


class _NotTopLevel(Exception):
    """The top-level parser alone cannot read these arguments: the full parser reports them."""


class _TopLevelOnly(Parser):
    """The fast path's parser: its errors go to the full parser, whose subcommand names the right help."""

    def error(self, message: str) -> NoReturn:
        raise _NotTopLevel(message)


DESCRIPTION = (
    "A local coding agent. `keel` alone (with the flags below, no command) opens the terminal UI in "
    "the current directory (or --cwd); the commands run it headless, in batches, on benchmarks and more. "
    "`keel COMMAND --help` shows a command's flags."
)

SUBAGENTS_HELP = (
    "Subagents: the model can hand a self-contained piece of work to a child session (the `task` tool; "
    "read-only unless an agent definition grants more). Definitions: .keel/agents/*.md and "
    "~/.config/keel/agents/*.md (front matter: name, description, tools, model; body: the prompt), and "
    "Claude Code's .claude/agents/*.md as they are. An untrusted repository's definitions get read tools "
    "only (`keel trust`)."
)


FEATURES_HELP = (
    "In a session: the model keeps a todo list (shown beside the transcript); /plan or F4 (keel run "
    "--plan) is plan mode, where only read tools run and the model ends with a plan to accept or edit; the "
    "task tool starts subagents (.keel/agents, .claude/agents); hooks run commands at points of a session "
    "(config [hooks], .claude/settings.json); /NAME runs a Markdown command (.keel/commands, "
    ".claude/commands) and skills (.keel/skills) are loaded by the model when needed; web_fetch reads a "
    "page when the network is allowed; images go to models that take them (keel run --image FILE, an "
    "image path in the prompt, read_file of a PNG). The README says more of each."
)


def top_parser(kind: type[Parser] = Parser) -> argparse.ArgumentParser:
    """`keel` and its own flags, without the subcommands."""
    parser = kind(
        prog="keel",
        usage="keel [flags]            (the terminal UI)\n       keel [flags] COMMAND ...",
        description=DESCRIPTION,
        epilog=FEATURES_HELP,
    )
    parser.add_argument("--version", action="version", version=f"keel {__version__}")
    parser.add_argument(
        "--cwd", type=Path, help="workspace directory (default: the current directory)"
    )
    add_debug_flag(parser)
    add_model_flags(parser)
    return parser


def build_parser() -> argparse.ArgumentParser:
    parser = top_parser()
    commands = parser.add_subparsers(
        dest="command", parser_class=Parser, prog="keel", title="commands", metavar="COMMAND"
    )
    run = commands.add_parser("run", help="run one task headless", epilog=SUBAGENTS_HELP)
    run.add_argument(
        "prompt",
        nargs="?",
        help="the task; `-` reads it from stdin; `/NAME ARGS` runs the Markdown command NAME.md of "
        ".keel/commands, .claude/commands or ~/.config/keel/commands (hooks and skills: see the README)",
    )
    run.add_argument("--prompt-file", type=Path, help="read the task from a file")
    run.add_argument("--cwd", type=Path, default=argparse.SUPPRESS, help="workspace directory")
    run.add_argument(
        "--image",
        action="append",
        default=[],
        metavar="FILE",
        help="send an image (PNG, JPEG, GIF or WebP, up to 3 MB) with the prompt; repeatable. Models "
        "that take images see it; others are told it was not sent",
    )
    run.add_argument(
        "--output-format",
        choices=["text", "json", "stream-json"],
        default="text",
        help="text: progress on stderr, the answer on stdout (default); json: one object at the end "
        "(session_id, status, final_message, usage, steps); stream-json: one JSON event per line as "
        "it happens",
    )
    run.add_argument(
        "--resume",
        metavar="ID",
        help="continue a stopped session (with a prompt: a new task in it)",
    )
    run.add_argument(
        "--plan",
        action="store_true",
        help="plan mode: only the read tools run (writes and commands are refused), the model answers "
        "with a plan, keel prints it and exits 0 with no file changed; `keel run --resume ID PROMPT` "
        "without --plan then carries it out",
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
    commands.add_parser(
        "sessions",
        help="list the sessions of this workspace",
        description="List the sessions started in this workspace (or --cwd), newest first: id, "
        "start, status, steps, tokens and the start of the first prompt. `keel resume ID` reopens one in the UI, "
        "`keel run --resume ID` continues it headless.",
    )
    resume = commands.add_parser(
        "resume",
        help="reopen a session in the UI (the newest here by default)",
        description="Reopen a session in the terminal UI, its transcript and state as they were: the "
        "newest one started in this workspace, or the one ID names. `keel run --resume ID` "
        "continues it headless instead.",
    )
    resume.add_argument(
        "session_id",
        nargs="?",
        metavar="ID",
        help="a session id or a prefix of one (`keel sessions`)",
    )
    commands.add_parser(
        "models",
        help="show the configured model and how to use others",
        description="Show the model keel uses here (flags, KEEL_MODEL, the config files, else the "
        "embedded model), the embedded local models, the GGUF files in keel's models folder, which "
        "API keys are set, and how to use other models. It only reports (exit 0).",
    )
    from keel.agent.cli.trust import add_trust_parser

    add_trust_parser(commands)
    from keel.agent.cli.sandbox_report import add_sandbox_parser

    add_sandbox_parser(commands)
    from keel.agent.cli.mcp import add_mcp_parser

    add_mcp_parser(commands)
    return parser


def parse(argv: list[str]) -> argparse.Namespace:
    """Flags alone (`keel`, the TUI) need only the top-level parser: the full one costs ~8 ms to build."""
    if "-h" not in argv and "--help" not in argv:
        try:
            args, rest = top_parser(_TopLevelOnly).parse_known_args(argv)
        except _NotTopLevel:  # e.g. `keel run x --budget abc`: `keel run`'s parser says it
            rest = argv
        if not rest:
            args.command = None
            return args
    from keel.agent.cli.bench import bench_argv

    return build_parser().parse_args(bench_argv(argv))
