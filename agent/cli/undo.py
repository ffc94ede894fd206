"""`keel undo`: list the workspace's checkpoints and put the workspace back to one, itself undoably."""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, TypeVar

from keel.agent.core.errors import ExitCode, UsageError
from keel.prompts import plural

AnyParser = TypeVar("AnyParser", bound=argparse.ArgumentParser)

if TYPE_CHECKING:  # the parser is built on every launch; checkpoints load with the command
    from keel.agent.core.api.git import Checkpoint, CheckpointStore, FileChange

MAX_SHOWN_CHANGES = 40
ACTION_WORDS = {"M": "revert", "A": "restore", "D": "delete"}


def add_undo_parser(subparsers: argparse._SubParsersAction[AnyParser]) -> AnyParser:
    undo = subparsers.add_parser(
        "undo",
        help="undo the last turn's changes (or restore a chosen checkpoint)",
        description=(
            "Put the workspace back as it was before the last turn that changed it. Checkpoints are "
            "taken before each turn's first edit or command; the state before an undo is kept as a "
            "checkpoint too, so an undo can be undone (`keel undo ID` with its id)."
        ),
    )
    undo.add_argument(
        "checkpoint", nargs="?", metavar="ID", help="restore this checkpoint (an id prefix)"
    )
    undo.add_argument("--list", action="store_true", help="list the checkpoints, newest first")
    undo.add_argument("--yes", "-y", action="store_true", help="restore without asking")
    undo.add_argument("--cwd", type=Path, default=argparse.SUPPRESS, help="workspace directory")
    return undo


def undo_command(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run `keel undo`; the exit code: 0 restored (or listed), 1 declined, 2 nothing to undo or no terminal to ask on."""
    from keel.agent.core.api import plan_undo
    from keel.agent.core.api.git import (
        CheckpointError,
        CheckpointStore,
        record_in_its_session,
        undo_event,
    )

    out = out or sys.stdout
    workspace = Path(getattr(args, "cwd", None) or Path.cwd()).expanduser().resolve()
    if not workspace.is_dir():
        raise UsageError(f"--cwd {workspace} is not a directory")
    store = CheckpointStore(workspace)
    checkpoints = store.all()
    if args.list:
        return _print_list(store, checkpoints, out)
    if not checkpoints:
        raise UsageError(
            f"no checkpoints for {workspace}: they are taken before a turn's first change"
        )
    try:
        plan = plan_undo(workspace, args.checkpoint or "")
    except CheckpointError as exc:
        raise UsageError(str(exc)) from None
    target, changes = plan.target, plan.changes
    if target is None:
        print("Nothing to undo: the workspace already matches every turn checkpoint.", file=out)
        return ExitCode.OK
    named = f"checkpoint {target.short_id} ({_when(target.ts)}, {_describe(target)})"
    if not changes:
        print(f"The workspace already matches {named}; nothing to change.", file=out)
        return ExitCode.OK
    if args.yes:
        print(f"Restoring {named}:", file=out)
        _print_changes(changes, out)
    else:
        print(
            f"keel undo would restore {named}, changing {plural(len(changes), 'file')}:", file=out
        )
        _print_changes(changes, out)
        if sys.stdin is None or not sys.stdin.isatty():
            again = _command_with_yes(args, workspace)
            raise UsageError(
                f"keel undo asks before it restores and there is no terminal to ask on, so nothing "
                f"was changed; to restore these files, run `{again}`"
            )
        if not _confirm(out):
            print("Nothing was changed.", file=out)
            return ExitCode.FAILURE
    before = plan.restore()
    print(
        f"Restored {plural(len(changes), 'file')}. To take this back: keel undo {before.short_id}",
        file=out,
    )
    event = undo_event(plan, before, named=bool(args.checkpoint))
    if record_in_its_session(event, target.session_id):
        print(f"Session {target.session_id} will tell its model when resumed.", file=out)
    return ExitCode.OK


def _command_with_yes(args: argparse.Namespace, workspace: Path) -> str:
    """This same `keel undo`, confirmed: what to run where there is no terminal to ask on."""
    words = ["keel", "undo", "--yes"]
    if getattr(args, "cwd", None):
        words += ["--cwd", str(workspace)]
    if args.checkpoint:
        words.append(args.checkpoint)
    return shlex.join(words)


def _print_list(store: CheckpointStore, checkpoints: list[Checkpoint], out: TextIO) -> int:
    if not checkpoints:
        print(f"No checkpoints for {store.workspace} yet.", file=out)
        return ExitCode.OK
    current = store.current_tree()
    print(f"{'ID':<10}  {'TIME':<19}  {'SESSION':<22}  LABEL", file=out)
    for checkpoint in checkpoints:
        mark = "  (= now)" if checkpoint.tree == current else ""
        session = checkpoint.session_id or ("keel undo" if checkpoint.kind == "undo" else "-")
        print(
            f"{checkpoint.short_id:<10}  {_when(checkpoint.ts):<19}  {session:<22}  {_describe(checkpoint)}{mark}",
            file=out,
        )
    return ExitCode.OK


def _print_changes(changes: list[FileChange], out: TextIO) -> None:
    for change in changes[:MAX_SHOWN_CHANGES]:
        shown = change.path.encode("utf-8", "surrogateescape").decode(
            "utf-8", "replace"
        )  # non-UTF-8 names
        print(f"  {ACTION_WORDS[change.action]:<8} {shown}", file=out)
    if len(changes) > MAX_SHOWN_CHANGES:
        print(f"  ... and {len(changes) - MAX_SHOWN_CHANGES} more", file=out)


def _confirm(out: TextIO) -> bool:
    print("Restore these files? [y/N] ", end="", file=out, flush=True)
    try:
        answer = sys.stdin.readline()
    except KeyboardInterrupt:
        return False
    return answer.strip().lower() in ("y", "yes")


def _describe(checkpoint: Checkpoint) -> str:
    label = " ".join(checkpoint.label.split())
    label = label if len(label) <= 60 else label[:59] + "…"
    return f"before: {label}" if checkpoint.kind == "turn" else label


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
