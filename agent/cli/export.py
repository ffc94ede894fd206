"""`keel export ID --format atif`: a session's trajectories, from its log, on stdout or into a file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TypeVar

from keel.agent.core.errors import ExitCode, UsageError

AnyParser = TypeVar("AnyParser", bound=argparse.ArgumentParser)
FORMATS = ("atif",)


def add_export_parser(subparsers: argparse._SubParsersAction[AnyParser]) -> AnyParser:
    """Register `keel export` on the CLI's subparsers."""
    parser = subparsers.add_parser(
        "export",
        help="write a session as ATIF trajectories (one per segment between summaries)",
        description="Write a session's log as ATIF v1.8 trajectories. On stdout, one trajectory per line "
        "(several when the session summarized itself); with -o FILE, FILE and, for each continuation, "
        "FILE's sibling STEM.cont-N.json, which continued_trajectory_ref names.",
    )
    parser.add_argument(
        "session_id", metavar="ID", help="a session id or its prefix (keel sessions)"
    )
    parser.add_argument("--format", default="atif", help="the format: atif (the only one)")
    parser.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here, not stdout")
    parser.add_argument(
        "--outcome",
        type=float,
        metavar="REWARD",
        help="the verifier's outcome (1 passed, 0 failed, or a task's float): every segment gets the "
        "reward, this less the length penalty of the session's tokens, with its parts in `extra`",
    )
    return parser


def export_command(args: argparse.Namespace) -> int:
    from keel.agent.core.api.sessions import find_session, read_events
    from keel.agent.harness.rollouts.atif import log_trajectories, write_trajectories
    from keel.agent.harness.rollouts.runs import session_tokens

    if args.format not in FORMATS:
        raise UsageError(f"unknown --format {args.format!r}; keel exports: {', '.join(FORMATS)}")
    log = find_session(args.session_id)
    if log is None:
        raise UsageError(
            f"no single session matches {args.session_id!r}; `keel sessions` lists them"
        )
    extra = None
    if args.outcome is not None:
        from keel.agent.harness.rollouts.reward import reward

        extra = {"reward": reward(args.outcome, session_tokens(read_events(log))).model_dump()}
    first = args.output.name if args.output is not None else f"{log.stem}.json"
    trajectories = log_trajectories(log, first, extra)
    if args.output is None:
        for trajectory in trajectories:
            print(trajectory.model_dump_json(exclude_none=True))
        return ExitCode.OK
    paths = write_trajectories(trajectories, args.output.expanduser().resolve())
    print(f"keel export: {', '.join(str(path) for path in paths)}", file=sys.stderr)
    return ExitCode.OK


def write_run_trajectories(out: Path, rows: list[Any], command: str) -> None:
    """`--trajectories` of batch and bench: write them after the run and say where, on stderr."""
    from keel.agent.harness.rollouts.runs import write_run_trajectories as write
    from keel.prompts import plural

    groups = write(out, rows)
    written = sum(1 for group in groups for entry in group.attempts if entry.trajectory)
    where = out / "trajectories"
    chains = plural(written, "attempt's trajectories", "attempts' trajectories")
    print(f"keel {command}: {chains} and the groups' advantages in {where}", file=sys.stderr)
