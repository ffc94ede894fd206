"""`keel bench`: run an agent on Harbor tasks (`keel bench TASK...`), validate tasks (`check`), compare runs."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from keel.agent.cli.batch import _positive
from keel.agent.cli.flags import add_model_flags, config_flags
from keel.agent.core.errors import ExitCode, UsageError
from keel.prompts import plural

# the parser is built on every `keel` with arguments; the runner loads with the command
if TYPE_CHECKING:
    from keel.agent.harness.batch.progress import Progress

AnyParser = TypeVar("AnyParser", bound=argparse.ArgumentParser)
SUBCOMMANDS = ("run", "check", "compare", "new")
# keel's own commands
COMMANDS = ("run", "batch", "bench", "setup", "sessions", "resume", "models", "undo", "export")


def bench_argv(argv: list[str]) -> list[str]:
    """`keel bench TASK...` is `keel bench run TASK...`: argparse has no default subcommand."""
    command = next((word for word in argv if word in COMMANDS), None)
    if command != "bench":
        return argv
    at = argv.index("bench") + 1
    rest = argv[at:]
    first = next((word for word in rest if not word.startswith("-")), None)
    if not rest or first in SUBCOMMANDS or rest[0] in ("-h", "--help"):
        return argv
    return [*argv[:at], "run", *rest]


def _add_run_flags(parser: argparse.ArgumentParser, outputs: str) -> None:
    parser.add_argument(
        "tasks", nargs="+", type=Path, metavar="TASK", help="a task folder, or a folder of them"
    )
    parser.add_argument(
        "-j", "--jobs", type=_positive, default=2, metavar="N", help="attempts at once (default 2)"
    )
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help=f"where {outputs} go (default: a new folder in keel's home, KEEL_HOME/bench)",
    )
    parser.add_argument(
        "--env",
        choices=["auto", "local", "docker"],
        default="auto",
        help="where tasks run: local (bubblewrap, no Docker), docker, or auto (docker when a daemon answers)",
    )
    parser.add_argument(
        "--keep-workspaces",
        action="store_true",
        help="leave each attempt's workspace on disk (under DIR/work)",
    )


def add_bench_parser(subparsers: argparse._SubParsersAction[AnyParser]) -> AnyParser:
    """Register `keel bench` and its subcommands on the CLI's subparsers."""
    parser = subparsers.add_parser(
        "bench",
        help="run an agent on Harbor-format tasks and report pass@k, tokens and cost",
        usage="keel bench [run] TASK... [flags]\n       keel bench {check,compare,new} ... [flags]",
        description="keel bench [run] TASK... runs the agent on each task (K attempts, N at once) and "
        "writes results.jsonl, summary.json and report.html with a Pareto plot; `run` is the "
        "default, so `keel bench TASK...` is `keel bench run TASK...`. `check` validates tasks, "
        "`compare` puts runs side by side, `new` makes a task from a commit. "
        "`keel bench COMMAND --help` shows a command's flags.",
    )
    commands = parser.add_subparsers(
        dest="bench_command", prog="keel bench", title="commands", metavar="{run,check,compare,new}"
    )
    run = commands.add_parser(
        "run", help="run the agent on tasks (the default: `keel bench TASK...` is this)"
    )
    _add_run_flags(run, "results, logs and the report")
    run.add_argument(
        "--agent-timeout",
        type=float,
        metavar="SECONDS",
        help="the agent's time per attempt (default: task.toml's)",
    )
    run.add_argument(
        "--agent",
        choices=["keel", "oracle", "nop"],
        default="keel",
        help="keel; oracle: the task's solution/solve.sh; nop: change nothing",
    )
    run.add_argument(
        "-k",
        "--attempts",
        type=_positive,
        default=1,
        metavar="K",
        help="attempts per task (pass@K)",
    )
    run.add_argument(
        "--backend",
        choices=["local", "ray"],
        default="local",
        help="local: this process; ray: Ray tasks",
    )
    run.add_argument(
        "--ray-address", metavar="ADDRESS", help="join this Ray cluster (default $RAY_ADDRESS)"
    )
    run.add_argument(
        "--trajectories",
        action="store_true",
        help="after the run, each attempt's ATIF trajectories with its reward, and each task's GRPO "
        "advantages, under DIR/trajectories",
    )
    run.add_argument(
        "--label",
        help="the run's name in reports and comparisons (default: the model, or the agent)",
    )
    add_model_flags(run, argparse.SUPPRESS, notes={"--budget": "each attempt gets it"})
    check = commands.add_parser(
        "check",
        help="validate tasks: the oracle must pass and nop must fail",
        description="Validate tasks: run each task's oracle (solution/solve.sh, under task.toml's "
        "agent timeout) and nop (no change); a task is valid when the oracle passes and nop fails. "
        "Exit 0 when every task is valid, 1 otherwise.",
    )
    _add_run_flags(check, "the results and logs of the oracle and nop")
    from keel.agent.cli.setup import add_new_parser

    add_new_parser(commands)
    compare = commands.add_parser("compare", help="several runs on one plot and one table")
    compare.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="a run's --out folder")
    compare.add_argument(
        "--out", type=Path, metavar="DIR", help="where compare.html and compare.png go"
    )
    return parser


def _out_dir(args: argparse.Namespace, kind: str) -> Path:
    if args.out is not None:
        return Path(args.out).expanduser().resolve()
    from keel.agent.core.config_files import keel_home

    stamp = keel_home() / "bench" / f"{kind}-{time.strftime('%Y%m%d-%H%M%S')}"
    path, number = stamp, 1
    while path.exists():  # two runs in one second
        number += 1
        path = stamp.with_name(f"{stamp.name}-{number}")
    return path


def _specs(
    args: argparse.Namespace, tasks: list[Any], agent: str, out: Path, settings: Any, k: int
) -> list[Any]:
    from keel.agent.harness.bench.trial import TrialSpec

    return [
        TrialSpec(
            task=task,
            attempt=attempt,
            agent=agent,  # type: ignore[arg-type]
            settings=settings,
            out_dir=out,
            environment=args.env,
            agent_timeout=getattr(args, "agent_timeout", None),  # `check` runs task.toml's
            keep_workspace=args.keep_workspaces,
        )
        for task in tasks
        for attempt in range(1, k + 1)
    ]


def _execute(
    args: argparse.Namespace,
    specs: list[Any],
    out: Path,
    attempts: dict[str, int],
    progress_kind: type[Progress] | None = None,
) -> tuple[list[Any], bool]:
    """Run the trials with a progress line; every row is appended to results.jsonl as it comes."""
    from keel.agent.cli.batch import run_locally
    from keel.agent.harness.batch.progress import Progress
    from keel.agent.harness.bench.results import read_rows
    from keel.agent.harness.bench.trial import run_trial, trial_in_worker

    out.mkdir(parents=True, exist_ok=True)
    results = out / "results.jsonl"
    progress = (progress_kind or Progress)(attempts, command="bench")

    def on_row(row: Any) -> None:
        with open(results, "a", encoding="utf-8") as file:
            file.write(row.to_json() + "\n")
        progress.add(row)

    progress.note(f"{plural(len(specs), 'attempt')}, {args.jobs} at once, into {out}")
    progress.start()
    try:
        if getattr(args, "backend", "local") == "ray":
            from keel.agent.harness.batch.ray_backend import run_ray
            from keel.agent.harness.bench.results import BenchRow

            interrupted = run_ray(
                specs, args.jobs, on_row, args.ray_address, progress.note, trial_in_worker, BenchRow
            )
        else:
            interrupted = run_locally(specs, args.jobs, on_row, progress.note, run_trial)
    finally:
        progress.close()
    return (read_rows(results) if results.is_file() else []), interrupted


def _run(args: argparse.Namespace) -> int:
    from keel.agent.harness.bench.report import write_report
    from keel.agent.harness.bench.results import ENVIRONMENT_ERRORS, summarize, write_summary
    from keel.agent.harness.bench.tasks import find_tasks

    if args.backend != "ray" and args.ray_address:
        raise UsageError("--ray-address only applies with --backend ray")
    tasks = find_tasks(args.tasks)
    out = _out_dir(args, "run")
    if (out / "results.jsonl").exists():
        raise UsageError(f"{out} already holds a run; choose another --out")
    settings = _settings(args) if args.agent == "keel" else None
    specs = _specs(args, tasks, args.agent, out, settings, args.attempts)
    started = time.monotonic()
    rows, interrupted = _execute(args, specs, out, {task.id: args.attempts for task in tasks})
    summary = summarize(rows, args.attempts, time.monotonic() - started, args.label or "")
    print(write_summary(out, summary))
    report = write_report(out, summary)
    if args.trajectories:
        from keel.agent.cli.export import write_run_trajectories

        write_run_trajectories(out, rows, "bench")
    print(f"keel bench: results in {out / 'results.jsonl'}, report in {report}", file=sys.stderr)
    if interrupted:
        return ExitCode.INTERRUPTED
    failed = ("error", *ENVIRONMENT_ERRORS)  # not one attempt got as far as a verdict
    return ExitCode.FAILURE if rows and all(row.status in failed for row in rows) else ExitCode.OK


def _settings(args: argparse.Namespace) -> Any:
    from keel.agent.cli.preflight import check_model
    from keel.agent.core.config import resolve_config
    from keel.agent.core.settings import settings_from_config

    cwd = (getattr(args, "cwd", None) or Path.cwd()).expanduser().resolve()
    settings = settings_from_config(resolve_config(cwd, config_flags(args)), cwd, interactive=False)
    check_model(settings.model, settings.api_base)
    return settings


def _check(args: argparse.Namespace) -> int:
    from keel.agent.harness.bench.check import CheckProgress, check_verdicts, format_check
    from keel.agent.harness.bench.tasks import find_tasks

    tasks = find_tasks(args.tasks)
    out = _out_dir(args, "check")
    if (out / "results.jsonl").exists():
        raise UsageError(f"{out} already holds a check; choose another --out")
    specs = [
        *_specs(args, tasks, "oracle", out / "oracle", None, 1),
        *_specs(args, tasks, "nop", out / "nop", None, 1),
    ]
    rows, interrupted = _execute(args, specs, out, {task.id: 2 for task in tasks}, CheckProgress)
    verdicts = check_verdicts(tasks, rows)
    print(format_check(verdicts))
    print(f"keel bench: results and logs in {out}", file=sys.stderr)
    if interrupted:
        return ExitCode.INTERRUPTED
    return ExitCode.OK if all(verdict.valid for verdict in verdicts) else ExitCode.FAILURE


def _compare(args: argparse.Namespace) -> int:
    from keel.agent.harness.bench.report import format_comparison, write_comparison
    from keel.agent.harness.bench.results import read_summary

    summaries = []
    for run in args.runs:
        if not (run / "summary.json").is_file():
            raise UsageError(
                f"{run} holds no summary.json; name the --out folder of a `keel bench` run"
            )
        summaries.append(read_summary(run))
    out = _out_dir(args, "compare")
    out.mkdir(parents=True, exist_ok=True)
    print(format_comparison(summaries))
    print(f"keel bench: comparison in {write_comparison(out, summaries)}", file=sys.stderr)
    return ExitCode.OK


def bench_command(args: argparse.Namespace) -> int:
    if args.bench_command == "check":
        return _check(args)
    if args.bench_command == "compare":
        return _compare(args)
    if args.bench_command == "run":
        return _run(args)
    if args.bench_command == "new":
        from keel.agent.cli.setup import bench_new_command

        return bench_new_command(args)
    raise UsageError(
        "keel bench needs tasks: keel bench TASK... (or `check TASK...`, `compare RUN...`, `new`)"
    )
