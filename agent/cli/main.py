"""The `keel` command: parses flags, resolves config, dispatches to the TUI, headless run, batch or tools."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, cast

from keel import __version__
from keel.agent.core.errors import ExitCode

if TYPE_CHECKING:
    import argparse

NO_ARGUMENTS = SimpleNamespace(command=None, cwd=None, debug=False)  # `keel`: the TUI, flags unset


def _workspace(args: argparse.Namespace) -> Path:
    from keel.agent.core.errors import UsageError

    cwd = (args.cwd or Path.cwd()).expanduser().resolve()
    if not cwd.is_dir():
        raise UsageError(f"--cwd {cwd} is not a directory")
    return cwd


def _read_prompt(args: argparse.Namespace) -> str | None:
    from keel.agent.core.errors import UsageError

    if args.prompt_file is not None:
        try:
            return str(args.prompt_file.read_text(encoding="utf-8"))
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
        raise UsageError(
            'the prompt is empty; say what to do, e.g. keel run "make the failing test pass"'
        )
    return str(args.prompt) if args.prompt is not None else None


def _cmd_run(args: argparse.Namespace) -> int:
    import asyncio

    from keel.agent.cli.flags import config_flags
    from keel.agent.cli.headless import run_headless
    from keel.agent.core.api import find_session
    from keel.agent.core.config import resolve_config
    from keel.agent.core.errors import UsageError
    from keel.agent.core.settings import settings_from_config

    cwd = _workspace(args)
    prompt = _read_prompt(args)
    from keel.agent.cli.images import image_paths

    images = image_paths(args.image, prompt)
    resume = None
    if args.resume is not None:
        resume = find_session(args.resume)
        if resume is None:
            raise UsageError(
                f"no single session matches {args.resume!r}; `keel sessions` lists them"
            )
    settings = settings_from_config(resolve_config(cwd, config_flags(args)), cwd, interactive=False)
    from keel.agent.cli.preflight import check_model

    check_model(settings.model, settings.api_base)
    from keel.agent.core.api.process import tune_gc

    tune_gc()
    plan = bool(getattr(args, "plan", False))
    return asyncio.run(run_headless(settings, prompt, args.output_format, resume, plan, images))


def _cmd_sessions(args: argparse.Namespace) -> int:
    from keel.agent.cli.sessions import print_sessions

    return print_sessions(_workspace(args))


def _session_to_resume(args: argparse.Namespace) -> str:
    from keel.agent.core.api import find_session
    from keel.agent.core.errors import UsageError

    log = find_session(args.session_id, None if args.session_id else _workspace(args))
    if log is None:
        wanted = (
            f"matches {args.session_id!r}" if args.session_id else "was started in this directory"
        )
        raise UsageError(f"no single session {wanted}; `keel sessions` lists them")
    return log.stem


def _cmd_frontend(args: argparse.Namespace, resume_id: str | None = None) -> int:
    """The terminal UI, found through the `keel.frontends` entry point.

    It gets the config's sources: a broken config fails here (exit 2), before the UI takes the
    screen, and one with nothing to validate is built after the first paint.
    """
    from keel.agent.cli.flags import config_flags
    from keel.agent.cli.frontends import load_frontend
    from keel.agent.core.config_files import ConfigSources
    from keel.agent.core.errors import UsageError

    frontend = load_frontend("tui")
    if frontend is None:
        raise UsageError(
            "the terminal UI is not installed; reinstall keel, or use `keel run PROMPT`"
        )
    cwd = _workspace(args)
    sources = ConfigSources.find(cwd, config_flags(args))
    sources.check()
    return int(frontend(sources, cwd, resume_id))


def _print_notices(notices: list[str]) -> None:
    """What the config asks to tell the person (untrusted keys ignored), for commands without a session."""
    for notice in notices:
        print(f"keel: {notice}", file=sys.stderr)


def dispatch(args: argparse.Namespace) -> int:
    if args.command == "run":
        return _cmd_run(args)
    if args.command == "sessions":
        return _cmd_sessions(args)
    if args.command == "batch":
        from keel.agent.cli.batch import batch_command

        return batch_command(args)
    if args.command == "bench":
        from keel.agent.cli.bench import bench_command

        return bench_command(args)
    if args.command == "setup":
        from keel.agent.cli.setup import setup_command

        return setup_command(args)
    if args.command == "models":
        from keel.agent.cli.flags import config_flags
        from keel.agent.cli.models import models_command
        from keel.agent.core.config import resolve_config

        cwd = _workspace(args)
        config = resolve_config(cwd, config_flags(args))
        _print_notices(config.notices)
        return models_command(config, cwd)
    if args.command == "sandbox":
        from keel.agent.cli.flags import config_flags
        from keel.agent.cli.sandbox_report import sandbox_command
        from keel.agent.core.config import resolve_config

        config = resolve_config(_workspace(args), config_flags(args))
        _print_notices(config.notices)
        return sandbox_command(config.sandbox, sys.stdout)
    if args.command == "mcp":
        from keel.agent.cli.flags import config_flags
        from keel.agent.cli.mcp import mcp_command
        from keel.agent.core.config import resolve_config

        cwd = _workspace(args)
        config = resolve_config(cwd, config_flags(args))
        _print_notices(config.notices)
        return mcp_command(config, cwd, sys.stdout)
    if args.command == "trust":
        from keel.agent.cli.trust import trust_command

        return trust_command(args)
    if args.command == "export":
        from keel.agent.cli.export import export_command

        return export_command(args)
    if args.command == "undo":
        from keel.agent.cli.undo import undo_command

        return undo_command(args)
    if args.command == "acp":
        from keel.agent.cli.acp import acp_command

        return acp_command(args, _workspace(args))
    if args.command == "resume":
        return _cmd_frontend(args, _session_to_resume(args))
    return _cmd_frontend(args)


def main(argv: list[str] | None = None) -> int:
    """Entry point; every error of ours becomes one line on stderr and its exit code."""
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--version"]:
        # answered before argparse is even built: scripts call this often
        print(f"keel {__version__}")
        return ExitCode.OK
    if argv:
        from keel.agent.cli.args import parse

        args = parse(argv)
    else:  # the TUI's launch: argparse (some 2-3 ms) has nothing to parse
        args = cast("argparse.Namespace", NO_ARGUMENTS)
    from keel.agent.core.api.process import hide_process_memory, inject_fault, set_debug
    from keel.agent.core.errors import KeelError

    hide_process_memory()  # before any key is read: commands cannot read it from /proc/<keel>
    set_debug(args.debug)
    try:
        inject_fault("cli")  # tests only: a bug of keel's outside any session
        code = int(dispatch(args))
        sys.stdout.flush()
    except KeelError as exc:
        print(f"keel: {exc}", file=sys.stderr)
        code = exc.exit_code
    except KeyboardInterrupt:
        print("keel: interrupted", file=sys.stderr)
        code = ExitCode.INTERRUPTED
    except BrokenPipeError:
        code = _reader_gone()
    except Exception as exc:  # noqa: BLE001 - a bug of keel's outside a session: one line, the traceback logged
        code = _internal_error(exc)
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
    return ExitCode.READER_GONE


def _internal_error(exc: Exception) -> int:
    """Say in one line that keel itself failed and where its traceback is (exit 1)."""
    from keel.agent.core.api.process import describe_internal_error, log_internal_error

    print(f"keel: {describe_internal_error(exc, log_internal_error(exc))}", file=sys.stderr)
    return ExitCode.FAILURE


if __name__ == "__main__":
    sys.exit(main())
