"""The `keel` command: parses flags, resolves config, dispatches to the TUI, headless run, batch or tools."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

from agent import __version__

EXIT_READER_GONE = 141  # 128 + SIGPIPE: what the shell reports for `git log | head`


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"keel: {message} (see `{self.prog} --help`)\n")

    def parse_args(self, args: Any = None, namespace: Any = None) -> argparse.Namespace:  # type: ignore[override]
        """Unknown flags are reported by the subcommand's parser, so the help it names is the one to read."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            self._command_parser(parsed).error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed

    def _command_parser(self, parsed: argparse.Namespace) -> argparse.ArgumentParser:
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                return action.choices.get(getattr(parsed, "command", None) or "", self)
        return self


def _model_flags(parser: argparse.ArgumentParser, default: Any = None) -> None:
    """The model flags; subcommands pass SUPPRESS so they do not overwrite flags given before them."""
    group = parser.add_argument_group("model")
    group.add_argument(
        "--model",
        default=default,
        help="litellm model name, e.g. openai/gpt-4o-mini or ollama/qwen2.5-coder",
    )
    group.add_argument(
        "--api-base",
        default=default,
        help="base URL of an OpenAI-compatible or other litellm-supported server",
    )
    group.add_argument(
        "--context-window",
        default=default,
        type=int,
        metavar="TOKENS",
        help="context window for models litellm does not know (default 32768)",
    )
    group.add_argument(
        "--tool-protocol",
        default=default,
        choices=["auto", "native", "text"],
        help="native tool calls, or tools described in the prompt (text); auto falls back",
    )
    group.add_argument(
        "--budget", default=default, type=int, metavar="TOKENS", help="token budget for the task"
    )
    group.add_argument(
        "--max-steps",
        default=default,
        type=int,
        metavar="N",
        help="stop after N tool-calling steps",
    )
    group.add_argument(
        "--approval",
        default=default,
        choices=["read-only", "auto-edit", "full-auto"],
        help="what may run without asking (headless default: full-auto)",
    )
    group.add_argument(
        "--sandbox",
        default=default,
        choices=["read-only", "workspace-write", "full-access"],
        help="how commands are confined (default: workspace-write)",
    )
    group.add_argument(
        "--allow-network",
        default=default,
        action="store_true",
        help="let sandboxed commands use the network",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="keel", description="A local coding agent.")
    parser.add_argument("--version", action="version", version=f"keel {__version__}")
    parser.add_argument(
        "--cwd", type=Path, help="workspace directory (default: the current directory)"
    )
    _model_flags(parser)
    commands = parser.add_subparsers(dest="command", parser_class=_Parser)

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
    _model_flags(run, argparse.SUPPRESS)

    from agent.batch_cli import add_batch_parser

    add_batch_parser(commands)
    from agent.undo_cmd import add_undo_parser

    add_undo_parser(commands)
    commands.add_parser("sessions", help="list the sessions of this workspace")
    resume = commands.add_parser("resume", help="reopen a session (the newest here by default)")
    resume.add_argument("session_id", nargs="?")
    commands.add_parser("models", help="show the configured model and how to use others")
    return parser


def config_flags(args: argparse.Namespace) -> dict[str, Any]:
    """The config keys the model and policy flags set (None: not given), as resolve_config takes them."""
    keys = (
        "model",
        "api_base",
        "context_window",
        "tool_protocol",
        "budget",
        "max_steps",
        "approval",
    )
    flags: dict[str, Any] = {key: getattr(args, key, None) for key in keys}
    sandbox = {
        "mode": getattr(args, "sandbox", None),
        "network": getattr(args, "allow_network", None),
    }
    flags["sandbox"] = {k: v for k, v in sandbox.items() if v is not None} or None
    return flags


def _workspace(args: argparse.Namespace) -> Path:
    from agent.errors import UsageError

    cwd = (args.cwd or Path.cwd()).expanduser().resolve()
    if not cwd.is_dir():
        raise UsageError(f"--cwd {cwd} is not a directory")
    return cwd


def _read_prompt(args: argparse.Namespace) -> str | None:
    from agent.errors import UsageError

    if args.prompt_file is not None:
        try:
            return args.prompt_file.read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(
                f"cannot read the prompt file {args.prompt_file}: {exc.strerror}"
            ) from None
    if args.prompt == "-":
        text = sys.stdin.read()
        if not text.strip():
            raise UsageError("the prompt on stdin was empty")
        return text
    if args.prompt is None and args.resume is None:
        raise UsageError("keel run needs a prompt (or `-` to read it from stdin, or --prompt-file)")
    if args.prompt is not None and not args.prompt.strip():
        raise UsageError("the prompt is empty; say what to do, e.g. keel run \"make the failing test pass\"")
    return args.prompt


def _cmd_run(args: argparse.Namespace) -> int:
    import asyncio

    from agent.config import resolve_config
    from agent.errors import UsageError
    from agent.headless import run_headless
    from agent.settings import settings_from_config
    from agent.store import find_session

    cwd = _workspace(args)
    prompt = _read_prompt(args)
    resume = None
    if args.resume is not None:
        resume = find_session(args.resume)
        if resume is None:
            raise UsageError(
                f"no single session matches {args.resume!r}; `keel sessions` lists them"
            )
    settings = settings_from_config(resolve_config(cwd, config_flags(args)), cwd, interactive=False)
    from agent.preflight import check_model

    check_model(settings.model, settings.api_base)
    from agent.runtime import tune_gc

    tune_gc()
    return asyncio.run(run_headless(settings, prompt, args.output_format, resume))


def _cmd_sessions(args: argparse.Namespace) -> int:
    from agent.sessions_list import print_sessions

    return print_sessions(_workspace(args))


def _session_to_resume(args: argparse.Namespace) -> str:
    from agent.errors import UsageError
    from agent.store import find_session

    log = find_session(args.session_id, None if args.session_id else _workspace(args))
    if log is None:
        wanted = (
            f"matches {args.session_id!r}" if args.session_id else "was started in this directory"
        )
        raise UsageError(f"no single session {wanted}; `keel sessions` lists them")
    return log.stem


def _cmd_frontend(args: argparse.Namespace, resume_id: str | None = None) -> int:
    """The terminal UI, found through the `keel.frontends` entry point."""
    from importlib.metadata import entry_points

    from agent.config import resolve_config
    from agent.errors import UsageError

    found = entry_points(group="keel.frontends", name="tui")
    if not found:
        raise UsageError(
            "the terminal UI is not installed; reinstall keel, or use `keel run PROMPT`"
        )
    cwd = _workspace(args)
    config = resolve_config(cwd, config_flags(args))
    return int(next(iter(found)).load()(config, cwd, resume_id))


def dispatch(args: argparse.Namespace) -> int:
    if args.command == "run":
        return _cmd_run(args)
    if args.command == "sessions":
        return _cmd_sessions(args)
    if args.command == "batch":
        from agent.batch_cli import batch_command

        return batch_command(args)
    if args.command == "models":
        from agent.config import resolve_config
        from agent.models_cmd import models_command

        cwd = _workspace(args)
        return models_command(resolve_config(cwd, config_flags(args)), cwd)
    if args.command == "undo":
        from agent.undo_cmd import undo_command

        return undo_command(args)
    if args.command == "resume":
        return _cmd_frontend(args, _session_to_resume(args))
    return _cmd_frontend(args)


def main(argv: list[str] | None = None) -> int:
    """Entry point; every error of ours becomes one line on stderr and its exit code."""
    if (sys.argv[1:] if argv is None else argv) == ["--version"]:
        # answered before argparse is even built: scripts call this often
        print(f"keel {__version__}")
        return 0
    args = build_parser().parse_args(argv)
    from agent.errors import KeelError

    try:
        code = dispatch(args)
        sys.stdout.flush()
    except KeelError as exc:
        print(f"keel: {exc}", file=sys.stderr)
        code = exc.exit_code
    except KeyboardInterrupt:
        print("keel: interrupted", file=sys.stderr)
        code = 130
    except BrokenPipeError:
        code = _reader_gone()
    if "litellm" in sys.modules:
        # litellm's native teardown takes seconds; sessions and logs are closed by now, so skip it
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def _reader_gone() -> int:
    """stdout's reader went away (`keel run ... | head -1`): exit quietly as git does, 141.

    A running session was stopped like an interrupt on the way out (its log closed); stdout now goes
    to /dev/null so the interpreter's own flush at exit cannot fail again.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_READER_GONE


if __name__ == "__main__":
    sys.exit(main())
