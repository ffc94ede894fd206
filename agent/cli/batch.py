"""`keel batch TASKS.jsonl`: its flags, planning the attempts, running them on a backend, writing the results."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from keel.agent.cli.flags import add_model_flags, config_flags
from keel.agent.core.errors import ExitCode, KeelError, UsageError
from keel.prompts import plural

AnyParser = TypeVar("AnyParser", bound=argparse.ArgumentParser)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of `keel batch`; model flags default to SUPPRESS so flags given before `batch` survive."""
    parser.add_argument(
        "tasks",
        type=Path,
        metavar="TASKS.jsonl",
        help="one task per line: {id, prompt, repo, ref, setup, test, budget, model}",
    )
    add_model_flags(
        parser,
        argparse.SUPPRESS,
        notes={
            "--model": "a task's `model` overrides it",
            "--budget": "each attempt gets it; a task's `budget` overrides it",
        },
    )
    batch = parser.add_argument_group("batch")
    batch.add_argument(
        "-j", "--jobs", type=_positive, default=4, metavar="N", help="agents at once (default 4)"
    )
    batch.add_argument(
        "--attempts",
        type=_positive,
        default=1,
        metavar="K",
        help="independent attempts per task; the summary reports pass@1 and pass@K",
    )
    batch.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="where results.jsonl, summary, patches and logs go (default: under keel's home)",
    )
    batch.add_argument(
        "--backend",
        choices=["local", "ray"],
        default="local",
        help="local: asyncio in this process; ray: one Ray task per attempt",
    )
    batch.add_argument(
        "--ray-address",
        metavar="ADDRESS",
        help="join this Ray cluster (default $RAY_ADDRESS, else start a local Ray)",
    )
    batch.add_argument(
        "--resume",
        action="store_true",
        help="continue the batch in --out: run only attempts without a result "
        "(interrupted and errored ones run again)",
    )
    batch.add_argument(
        "--keep-worktrees",
        action="store_true",
        help="leave each attempt's worktree on disk (its branch is always kept)",
    )
    batch.add_argument(
        "--trajectories",
        action="store_true",
        help="after the run, each attempt's ATIF trajectories with its reward, and each task's GRPO "
        "advantages, under DIR/trajectories",
    )
    batch.add_argument(
        "--command-timeout",
        type=float,
        default=900.0,
        metavar="SECONDS",
        help="time limit of each setup and test command (default 900)",
    )


def add_batch_parser(subparsers: argparse._SubParsersAction[AnyParser]) -> AnyParser:
    """Register `keel batch` on the CLI's subparsers."""
    parser = subparsers.add_parser(
        "batch",
        help="run many tasks with many agents, each in its own git worktree",
        description="Run every task of TASKS.jsonl (K attempts each, N at once), each attempt on its own "
        "branch in its own git worktree; results.jsonl and a summary go to --out.",
    )
    add_arguments(parser)
    return parser


def _out_dir(args: argparse.Namespace, cwd: Path) -> Path:
    if args.out is not None:
        return Path(cwd, args.out).resolve()
    if args.resume:
        raise UsageError("--resume needs --out DIR: the directory of the batch to continue")
    from keel.agent.core.config_files import keel_home

    # not the current directory: it is usually the user's repository, which a batch never touches
    return keel_home() / "batches" / time.strftime("%Y%m%d-%H%M%S")


def _plan(args: argparse.Namespace, cwd: Path, out: Path) -> tuple[list[Any], list[Any], list[Any]]:
    """The tasks, the attempts still to run, and the rows already there (with --resume)."""
    from keel.agent.cli.preflight import check_model
    from keel.agent.core.config import resolve_config
    from keel.agent.core.settings import settings_from_config
    from keel.agent.harness.batch.results import ResultsFile, finished_keys, latest
    from keel.agent.harness.batch.runner import AttemptSpec
    from keel.agent.harness.batch.tasks import load_tasks

    tasks = load_tasks((cwd / args.tasks).resolve(), cwd)
    previous = ResultsFile(out).read()
    if previous and not args.resume:
        raise UsageError(
            f"{out} already holds results; pass --resume to continue that batch, or another --out"
        )
    done = finished_keys(previous)
    config = resolve_config(cwd, config_flags(args))
    settings: dict[str | None, Any] = {}
    specs = []
    for task in tasks:
        if task.model not in settings:
            chosen = config.model_copy(update={"model": task.model}) if task.model else config
            settings[task.model] = settings_from_config(chosen, cwd, interactive=False)
            check_model(settings[task.model].model, settings[task.model].api_base)
        for attempt in range(1, args.attempts + 1):
            if (task.id, attempt) not in done:
                specs.append(
                    AttemptSpec(
                        task=task,
                        attempt=attempt,
                        settings=settings[task.model],
                        out_dir=out,
                        command_timeout=args.command_timeout,
                        keep_worktree=args.keep_worktrees,
                    )
                )
    ids = {task.id for task in tasks}
    kept = [row for key, row in latest(previous).items() if key in done and row.id in ids]
    return tasks, specs, kept


def clean_up_left_behind(tasks: list[Any]) -> None:
    """Remove what killed batch runs left in the tasks' repositories (worktrees, branches without work),
    saying what was removed; attempts running in other processes are left alone."""
    from keel.agent.core.api.git import WorkspaceError, remove_abandoned
    from keel.agent.harness.batch.runner import LEFT_BEHIND_COMMIT, SETUP_COMMIT

    for repo in sorted({task.repo for task in tasks}):
        try:
            cleanup = remove_abandoned(repo, "batch/", LEFT_BEHIND_COMMIT, (SETUP_COMMIT,))
        except WorkspaceError as exc:  # the batch can run without it; the next run tries again
            print(f"keel batch: could not clean up after killed runs: {exc}", file=sys.stderr)
            continue
        for line in cleanup.describe():
            print(f"keel batch: {line}", file=sys.stderr)


def run_locally(
    specs: list[Any],
    jobs: int,
    on_row: Callable[[Any], None],
    note: Callable[[str], None],
    run: Callable[[Any, asyncio.Event], Awaitable[Any]] | None = None,
) -> bool:
    """The attempts in this process, `jobs` at once (`run`: one attempt, batch's by default); True when
    stopped by SIGINT or SIGTERM, which interrupt the running attempts."""
    from keel.agent.core.api.process import tune_gc
    from keel.agent.harness.batch.runner import run_attempt, run_local

    tune_gc()

    async def main() -> bool:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()

        def request_stop() -> None:
            if not stop.is_set():
                note("stopping: interrupting the running attempts and cleaning up after them")
                stop.set()

        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, request_stop)
        try:
            await run_local(specs, jobs, on_row, stop, run or run_attempt)
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
        return stop.is_set()

    return asyncio.run(main())


def _run_ray(
    args: argparse.Namespace,
    specs: list[Any],
    on_row: Callable[[Any], None],
    note: Callable[[str], None],
) -> bool:
    try:
        from keel.agent.harness.batch.ray_backend import run_ray
    except ImportError:
        raise UsageError("--backend ray needs Ray: pip install 'keel[ray]'") from None
    return run_ray(specs, args.jobs, on_row, args.ray_address, note)


def batch_command(args: argparse.Namespace) -> int:
    """Run the batch; 0 when it ran to its end, 1 when every attempt errored, 130 when interrupted."""
    from keel.agent.harness.batch.progress import Progress
    from keel.agent.harness.batch.results import ResultRow, ResultsFile, summarize, write_summary

    if args.backend != "ray" and args.ray_address:
        raise UsageError("--ray-address only applies with --backend ray")
    if args.backend == "ray":
        import importlib.util

        if importlib.util.find_spec("ray") is None:
            raise UsageError("--backend ray needs Ray: pip install 'keel[ray]'")
    cwd = (getattr(args, "cwd", None) or Path.cwd()).expanduser().resolve()
    out = _out_dir(args, cwd)
    tasks, specs, kept = _plan(args, cwd, out)
    clean_up_left_behind(tasks)
    out.mkdir(parents=True, exist_ok=True)
    results = ResultsFile(out)
    progress = Progress({task.id: args.attempts for task in tasks}, already=kept)
    ran: list[ResultRow] = []

    def on_row(row: ResultRow) -> None:
        results.append(row)
        ran.append(row)
        progress.add(row)

    progress.note(
        f"{plural(len(specs), 'attempt')} to run ({len(kept)} done before), {args.jobs} at once, into {out}"
    )
    progress.start()
    try:
        if args.backend == "ray":
            interrupted = _run_ray(args, specs, on_row, progress.note)
        else:
            interrupted = run_locally(specs, args.jobs, on_row, progress.note)
    finally:
        progress.close()
    ids = {task.id for task in tasks}
    rows = [row for row in results.read() if row.id in ids]
    print(write_summary(out, summarize(rows, args.attempts)))
    if args.trajectories:
        from keel.agent.cli.export import write_run_trajectories

        write_run_trajectories(out, rows, "batch")
    print(f"keel batch: results in {results.path}", file=sys.stderr)
    if interrupted:
        print(f"keel batch: interrupted; continue with --resume --out {out}", file=sys.stderr)
        return ExitCode.INTERRUPTED
    failed = ran and all(row.status == "error" for row in ran)
    return ExitCode.FAILURE if failed else ExitCode.OK


def main(argv: list[str] | None = None) -> int:
    """`python -m keel.agent.cli.batch TASKS.jsonl ...`: the same command outside the `keel` CLI."""
    parser = argparse.ArgumentParser(prog="keel batch")
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return batch_command(args)
    except KeelError as exc:
        print(f"keel: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
