"""Checkpoints: snapshots of the workspace in a shadow git store outside it, so any turn can be undone.

The store lives under $KEEL_HOME/checkpoints/<hash of the workspace path>: a bare git directory
used with GIT_DIR/GIT_WORK_TREE pointing at the workspace and an index file of its own, so the
user's .git (index, stash, branches, HEAD, hooks) is never written (only its info/exclude is read,
once, to ignore what the user ignores). A snapshot records
every non-ignored file, tracked or not, so changes made by commands are captured, not only edits.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from keel.agent.core.config_files import keel_home
from keel.agent.core.git.lock import file_lock
from keel.agent.core.git.runner import Git, GitError

REF_PREFIX = "refs/keel/checkpoints/"
MAX_CHECKPOINTS = 200  # per workspace; older ones are dropped as new ones are taken
# Each snapshot adds a pack; past this many they are merged and dropped checkpoints' objects freed.
MAX_PACKS = 32
# Never snapshotted, even outside a git repository (where no .gitignore says so).
JUNK = [
    "node_modules/", ".venv/", "venv/", "__pycache__/", "*.pyc", ".mypy_cache/", ".pytest_cache/",
    ".ruff_cache/", ".tox/", ".nox/", ".cache/", ".gradle/", ".DS_Store",
]  # fmt: skip
# Content stored byte for byte: no filters (LFS, smudge/clean), no line-ending conversion.
ATTRIBUTES = "* -text -filter -ident -working-tree-encoding\n"
_CONFIG = """\
[core]
\tautocrlf = false
\tsafecrlf = false
\tsymlinks = true
\tfsmonitor = false
\tuntrackedCache = true
\thooksPath = /dev/null
\tquotePath = false
\t# blobs streamed into one pack per snapshot: thousands of loose objects cost seconds
\tbigFileThreshold = 1
[gc]
\tauto = 0
[commit]
\tgpgSign = false
[user]
\tname = keel
\temail = keel@localhost
"""

CheckpointKind = Literal["turn", "undo"]


class CheckpointError(GitError):
    """A snapshot or restore failed (git missing, a git error, an unknown checkpoint)."""


@dataclass(frozen=True)
class Checkpoint:
    """One snapshot: `id` is its commit in the shadow store, `tree` the workspace content's hash."""

    id: str
    ts: float
    label: str
    session_id: str
    tree: str = ""
    kind: CheckpointKind = "turn"

    @property
    def short_id(self) -> str:
        return self.id[:10]


@dataclass(frozen=True)
class FileChange:
    """What restoring a checkpoint does to one path: M reverts it, A re-creates it, D deletes it."""

    action: Literal["M", "A", "D"]
    path: str


def store_dir(workspace: Path, home: Path | None = None) -> Path:
    key = hashlib.sha256(os.fsencode(os.path.realpath(workspace))).hexdigest()[:20]
    return Path(os.path.abspath(home or keel_home())) / "checkpoints" / key


class CheckpointStore:
    """The checkpoints of one workspace."""

    def __init__(self, workspace: Path, home: Path | None = None) -> None:
        self.workspace = Path(os.path.realpath(workspace))
        self.dir = store_dir(self.workspace, home)
        self.git_dir = self.dir / "git"
        self.index = self.dir / "index"
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(
            GIT_DIR=str(self.git_dir),
            GIT_INDEX_FILE=str(self.index),
            GIT_OPTIONAL_LOCKS="0",
            GIT_TERMINAL_PROMPT="0",
            LC_ALL="C",
        )
        where = "in the checkpoint store"
        self._bare = Git(self.workspace, env, where=where, error=CheckpointError)
        env = {**env, "GIT_WORK_TREE": str(self.workspace)}
        self._git = Git(self.workspace, env, where=where, error=CheckpointError).text

    # ------------------------------------------------------------ public

    def snapshot(
        self, label: str, session_id: str = "", kind: CheckpointKind = "turn"
    ) -> Checkpoint:
        """Record the workspace as it is now."""
        with self._locked():
            tree = self._stage_workspace()
            ts = time.time()
            meta = json.dumps({"ts": ts, "session_id": session_id, "kind": kind, "label": label})
            message = f"{_one_line(label) or kind}\n\n{meta}\n"
            commit = self._git("commit-tree", tree, input=message)
            self._git("update-ref", f"{REF_PREFIX}{int(ts * 1e6):020d}-{commit[:10]}", commit)
            self._prune()
            return Checkpoint(commit, ts, label, session_id, tree, kind)

    def all(self) -> list[Checkpoint]:
        """Every checkpoint of this workspace, newest first."""
        if not self.git_dir.is_dir():
            return []
        fmt = "%(objectname)%00%(tree)%00%(contents:body)%00%(contents:subject)%1e"
        out = self._git(
            "for-each-ref", "--sort=-refname", f"--format={fmt}", REF_PREFIX, strip=False
        )
        found = []
        for record in out.split("\x1e"):
            fields = record.strip("\n").split("\x00")
            if len(fields) == 4:
                found.append(_parse(*fields))
        return found

    def find(self, prefix: str) -> Checkpoint:
        """The checkpoint whose id starts with `prefix`; CheckpointError if none or several."""
        matches = [c for c in self.all() if c.id.startswith(prefix.lower())] if prefix else []
        if len(matches) != 1:
            what = "no checkpoint" if not matches else f"{len(matches)} checkpoints"
            raise CheckpointError(
                f"{what} of {self.workspace} match {prefix!r}; `keel undo --list` shows them"
            )
        return matches[0]

    def last_turn(self) -> Checkpoint | None:
        """What `keel undo` restores: the newest turn checkpoint that differs from the workspace.

        Skipping ones equal to the workspace makes repeated undos step further back, turn by turn.
        """
        checkpoints = self.all()
        if not checkpoints:
            return None
        current = self.current_tree()
        return next((c for c in checkpoints if c.kind != "undo" and c.tree != current), None)

    def current_tree(self) -> str:
        """The hash the workspace would have as a checkpoint now (stages it in the shadow index)."""
        with self._locked():
            return self._stage_workspace()

    def changes(self, checkpoint: Checkpoint) -> list[FileChange]:
        """What `restore(checkpoint)` would change in the workspace as it is now."""
        with self._locked():
            self._stage_workspace()
            return self._staged_changes(checkpoint)

    def restore(self, checkpoint: Checkpoint) -> list[FileChange]:
        """Put the workspace back as it was at `checkpoint`; ignored files are left alone."""
        with self._locked():
            self._stage_workspace()
            changes = self._staged_changes(checkpoint)
            # like `reset --hard` on the shadow index: rewrites changed files, removes ones added since
            self._git("read-tree", "--reset", "-u", checkpoint.id)
        return changes

    # ------------------------------------------------------------ internals

    def _staged_changes(self, checkpoint: Checkpoint) -> list[FileChange]:
        out = self._git(
            "diff", "--cached", "--no-renames", "--name-status", "-z", checkpoint.id, strip=False
        )
        fields = out.split("\x00")
        flip = {"A": "D", "D": "A"}  # the diff runs checkpoint -> now; restoring runs it backwards
        return [
            FileChange(flip.get(status[0], "M"), path)  # type: ignore[arg-type]
            for status, path in zip(fields[0::2], fields[1::2], strict=False)
            if status
        ]

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """One git operation on the store at a time, across processes (parallel sessions, keel undo)."""
        with file_lock(self.dir / "lock"):
            self._ensure_store()
            yield

    def _ensure_store(self) -> None:
        if (self.git_dir / "HEAD").is_file():
            return
        if self.workspace in (Path("/"), Path(os.path.realpath(Path.home()))):
            raise CheckpointError(
                f"{self.workspace} is too broad to snapshot; run keel in a project directory"
            )
        self._bare.text("init", "--quiet", "--bare", str(self.git_dir))
        with open(self.git_dir / "config", "a", encoding="utf-8") as config:
            config.write(_CONFIG)
        info = self.git_dir / "info"
        info.mkdir(exist_ok=True)
        (info / "attributes").write_text(ATTRIBUTES)
        (info / "exclude").write_text(
            "\n".join(JUNK + self._own_dirs() + self._user_excludes()) + "\n"
        )
        (self.dir / "workspace").write_text(str(self.workspace) + "\n")

    def _own_dirs(self) -> list[str]:
        """keel's home, when it lies inside the workspace: the store must never snapshot itself."""
        home = Path(os.path.realpath(self.dir.parent.parent))
        if home == self.workspace:
            return ["/checkpoints/", "/sessions/", "/scratch/"]
        if self.workspace not in home.parents:
            return []
        return ["/" + home.relative_to(self.workspace).as_posix() + "/"]

    def _user_excludes(self) -> list[str]:
        """The workspace repository's own .git/info/exclude patterns (read once, never written)."""
        exclude = self.workspace / ".git" / "info" / "exclude"
        try:
            lines = exclude.read_text(errors="replace").splitlines()
        except OSError:
            return []
        return [line for line in lines if line.strip() and not line.startswith("#")]

    def _stage_workspace(self) -> str:
        """Bring the shadow index in line with the workspace; the resulting tree's hash."""
        self._git("add", "--all", "--ignore-errors", "--", ".")
        return self._git("write-tree")

    def _prune(self) -> None:
        refs = self._git(
            "for-each-ref", "--sort=-refname", "--format=%(refname)", REF_PREFIX
        ).splitlines()
        if len(refs) > MAX_CHECKPOINTS:
            stale = "".join(f"delete {ref}\n" for ref in refs[MAX_CHECKPOINTS:])
            self._git("update-ref", "--stdin", input=stale)
        if len(list((self.git_dir / "objects" / "pack").glob("*.pack"))) > MAX_PACKS:
            self._git("repack", "-a", "-d", "-q")
            self._git("prune", "--expire=now")  # safe: every use of the store holds its lock


def _parse(commit: str, tree: str, body: str, subject: str) -> Checkpoint:
    try:
        meta = json.loads(body)
    except ValueError:
        meta = {}
    return Checkpoint(
        id=commit,
        ts=float(meta.get("ts", 0.0)),
        label=str(meta.get("label", subject)),
        session_id=str(meta.get("session_id", "")),
        tree=tree,
        kind="undo" if meta.get("kind") == "undo" else "turn",
    )


def _one_line(text: str, width: int = 72) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


class CheckpointGuard:
    """Snapshots the workspace once per turn, just before the turn's first change (edit or command)."""

    def __init__(
        self,
        workspace: Path,
        session_id: str,
        on_error: Callable[[str], None] | None = None,
        home: Path | None = None,
    ) -> None:
        self.store = CheckpointStore(workspace, home)
        self.session_id = session_id
        self.on_error = on_error
        self.taken: Checkpoint | None = None
        self._pending = True
        self._disabled = False

    def new_turn(self) -> None:
        """A new turn began: its first change gets a checkpoint."""
        self._pending = True
        self.taken = None

    async def before_change(self, turn_label: str) -> Checkpoint | None:
        """Snapshot if this is the turn's first change; a failure is reported once, never raised."""
        if not self._pending or self._disabled:
            return None
        self._pending = False
        try:
            self.taken = await asyncio.to_thread(self.store.snapshot, turn_label, self.session_id)
        except (CheckpointError, OSError) as exc:
            self._disabled = True
            if self.on_error is not None:
                self.on_error(f"checkpoints are off for this session: {exc}")
            return None
        return self.taken
