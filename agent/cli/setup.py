"""`keel setup [REPO]` and `keel bench new`: the front end of keel.agent.harness.setup (progress on stderr, the
recipe or the task written, a report and exit 1 when nothing passed)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any, TypeVar

from keel.agent.cli.batch import _positive
from keel.agent.cli.flags import add_model_flags, config_flags
from keel.agent.core.errors import ExitCode, UsageError

AnyParser = TypeVar("AnyParser", bound=argparse.ArgumentParser)


def add_setup_flags(parser: argparse.ArgumentParser) -> None:
    """The flags `keel setup` and `keel bench new` share."""
    parser.add_argument(
        "--attempts",
        type=_positive,
        default=5,
        metavar="N",
        help="proposals the model may make (default 5)",
    )
    parser.add_argument(
        "--command-timeout",
        type=float,
        default=900.0,
        metavar="SECONDS",
        help="time limit of each install or test command (default 900)",
    )
    add_model_flags(parser, argparse.SUPPRESS)


def add_setup_parser(subparsers: argparse._SubParsersAction[AnyParser]) -> AnyParser:
    """Register `keel setup` on the CLI's subparsers."""
    parser = subparsers.add_parser(
        "setup",
        help="find and verify how to install a repository and run its tests",
        description="The model explores the repository and proposes install and test commands; keel "
        "runs them in the sandbox in fresh worktrees and accepts them only when the tests run, twice "
        "from scratch. Writes .keel/setup.sh and test_command in .keel/config.toml.",
    )
    parser.add_argument(
        "repo", nargs="?", type=Path, help="the repository (default: the current one)"
    )
    parser.add_argument(
        "--print", action="store_true", help="print the recipe instead of writing it"
    )
    parser.add_argument(
        "--harbor", type=Path, metavar="DIR", help="also write a Harbor task environment into DIR"
    )
    add_setup_flags(parser)
    return parser


def _settings(cwd: Path, args: argparse.Namespace) -> Any:
    from keel.agent.cli.preflight import check_model
    from keel.agent.core.config import resolve_config
    from keel.agent.core.settings import settings_from_config

    settings = settings_from_config(resolve_config(cwd, config_flags(args)), cwd, interactive=False)
    check_model(settings.model, settings.api_base)
    return settings


def _options(args: argparse.Namespace) -> Any:
    from keel.agent.harness.setup.task import SetupOptions

    return SetupOptions(max_attempts=args.attempts, command_timeout=args.command_timeout)


def _repository(path: Path | None) -> tuple[Path, str]:
    from keel.agent.core.api.git import WorkspaceError, check_writable, repo_top, resolve_ref

    try:
        repo = repo_top((path or Path.cwd()).expanduser().resolve())
        commit = resolve_ref(repo, None)
    except WorkspaceError as exc:
        raise UsageError(f"{exc}; keel setup needs a git repository with a commit") from None
    try:
        check_writable(repo)
    except WorkspaceError as exc:
        raise UsageError(str(exc)) from None
    return repo, commit


def _printer() -> Any:
    from keel.agent.cli.headless import TextPrinter

    return TextPrinter(out=sys.stderr)


def _failed(outcome: Any) -> int:
    from keel.agent.harness.setup.output import format_report

    ending = "" if outcome.status == "completed" else f"{outcome.status}: {outcome.reason}"
    logs = outcome.logs if outcome.logs.is_dir() else None
    print(format_report(outcome.attempts, logs, ending), file=sys.stderr)
    return ExitCode.FAILURE


def setup_command(args: argparse.Namespace) -> int:
    from keel.agent.harness.setup.harbor import write_task
    from keel.agent.harness.setup.output import format_recipe, write_recipe
    from keel.agent.harness.setup.task import run_setup

    repo, commit = _repository(args.repo)
    harbor = args.harbor.expanduser().resolve() if args.harbor else None
    if harbor is not None and harbor.exists() and any(harbor.iterdir()):
        raise UsageError(f"--harbor {harbor} is not empty; choose a new folder")
    settings = _settings(repo, args)
    printer = _printer()
    outcome = asyncio.run(run_setup(settings, repo, commit, _options(args), printer.handle))
    recipe = outcome.recipe
    if recipe is None:
        return _failed(outcome)
    if args.print:
        print(format_recipe(recipe))
    else:
        for path in write_recipe(repo, recipe, commit):
            print(f"keel setup: wrote {path}", file=sys.stderr)
    if harbor is not None:
        write_task(harbor, repo, commit, recipe, None, args.command_timeout)
        print(f"keel setup: wrote the Harbor task {harbor}", file=sys.stderr)
    print(f"keel setup: the tests run with `{recipe.test}`", file=sys.stderr)
    return ExitCode.OK


def add_new_parser(commands: argparse._SubParsersAction[AnyParser]) -> None:
    """`keel bench new`, on `keel bench`'s subcommands."""
    new = commands.add_parser(
        "new",
        help="make a task from a commit: its tests, its diff as the solution, keel setup's environment",
    )
    new.add_argument("--repo", type=Path, default=Path("."), help="the repository (default: .)")
    new.add_argument("--commit", required=True, help="the commit the task is made from")
    new.add_argument("--out", type=Path, metavar="DIR", help="the task folder (default: ./COMMIT)")
    add_setup_flags(new)


def bench_new_command(args: argparse.Namespace) -> int:
    from keel.agent.harness.setup.commit_task import new_commit_task

    repo, _ = _repository(args.repo)
    out = (args.out or Path(f"task-{args.commit[:12]}")).expanduser().resolve()
    settings = _settings(repo, args)
    printer = _printer()
    made = asyncio.run(
        new_commit_task(settings, repo, args.commit, out, _options(args), printer.handle)
    )
    if made.task is None:
        return _failed(made.setup)
    print(f"keel bench new: wrote {made.task}; edit its instruction.md, then", file=sys.stderr)
    print(f"  keel bench check {made.task}", file=sys.stderr)
    print(made.task)
    return ExitCode.OK
